/** runs.note: the researcher's notes on a run, stored with it, listed with it, cleared with empty text. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { writeSyntheticRun } from '../../store/synthetic';
import { createRunsHandlers } from './runs';
import { openHandlerTestLab, type HandlerTestLab } from '../../testing/testLab';

let lab: HandlerTestLab;
const call = async (m: string, input?: unknown): Promise<any> => lab.call(m, input);

beforeAll(async () => {
  lab = await openHandlerTestLab('arl-notes-', (s) => createRunsHandlers(s), {
    transport: 'browser',
    publishDownload: (_p, n) => `/download/${n}`,
  });
});
afterAll(() => lab.close());

it('stores notes on a run, lists them, and clears them with empty text', async () => {
  const { store } = await lab.services.lab();
  const run = await writeSyntheticRun(store, { steps: 10, seed: 1, shape: 'calm' });
  const saved = await call('runs.note', { runId: run.id, notes: '  lr 0.05 too high: entropy collapsed at step 70  ' });
  expect(saved.ok).toBe(true);
  expect(saved.value.notes).toBe('lr 0.05 too high: entropy collapsed at step 70');
  expect((await call('runs.get', { runId: run.id })).value.notes).toBe('lr 0.05 too high: entropy collapsed at step 70');
  expect((await call('runs.list', {})).value.find((r: { id: string }) => r.id === run.id).notes).toBe(
    'lr 0.05 too high: entropy collapsed at step 70',
  );
  const cleared = await call('runs.note', { runId: run.id, notes: '' });
  expect(cleared.value.notes).toBeUndefined();
  expect((await call('runs.note', { runId: 'no-such-run', notes: 'x' })).error.code).toBe('NOT_FOUND');
  expect((await call('runs.note', { runId: run.id, notes: 'x'.repeat(10_001) })).error.code).toBe('VALIDATION');
});
