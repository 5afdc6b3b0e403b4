/** runs.axisKeys through the router: the compared runs' progress counters, read from their stored metrics. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { writeSyntheticRun } from '../../store/synthetic';
import { openHandlerTestLab, type HandlerTestLab } from '../../testing/testLab';
import { createRunsHandlers } from './runs';

let lab: HandlerTestLab;

beforeAll(async () => {
  lab = await openHandlerTestLab('arl-axis-', (s) => createRunsHandlers(s));
});
afterAll(() => lab.close());

it('answers the counters every compared run counts up with; a missing id adds nothing; bad ids are refused', async () => {
  const { store } = await lab.services.lab();
  const a = await writeSyntheticRun(store, { steps: 6, seed: 1, shape: 'calm' });
  const b = await writeSyntheticRun(store, { steps: 6, seed: 2, shape: 'calm' });
  await store.appendMetrics(
    a.id,
    [7, 8, 9].map((s) => ({ step: s, values: { 'training/epoch': s >= 8 ? 1 : 0, 'train/num_input_tokens_seen': 1000 * s } })),
  );
  // b's epoch counter starts again (a resumed log): not an axis for the pair.
  await store.appendMetrics(
    b.id,
    [7, 8, 9].map((s) => ({ step: s, values: { 'training/epoch': s === 9 ? 0 : 2, 'train/num_input_tokens_seen': 500 * s } })),
  );
  await store.flush();
  expect((await lab.call('runs.axisKeys', { runIds: [a.id] })).value).toEqual(['train/num_input_tokens_seen', 'training/epoch']);
  expect((await lab.call('runs.axisKeys', { runIds: [a.id, b.id, 'no-such-run'] })).value).toEqual(['train/num_input_tokens_seen']);
  expect((await lab.call('runs.axisKeys', { runIds: [] })).error.code).toBe('VALIDATION');
  expect((await lab.call('runs.axisKeys', { runIds: ['../x'] })).error.code).toBe('VALIDATION');
});
