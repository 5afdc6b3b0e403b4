/** runs.getMany through the real router (input and output checked against the contract) and a real store. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LabServices } from '../../app/lab';
import { writeSyntheticRun } from '../../store/synthetic';
import { createRunsHandlers } from './runs';
import { openHandlerTestLab, type HandlerTestLab } from '../../testing/testLab';

let lab: HandlerTestLab;
let services: LabServices;
const call = async (m: string, input?: unknown): Promise<any> => lab.call(m, input);

beforeAll(async () => {
  lab = await openHandlerTestLab('arl-getmany-', createRunsHandlers);
  ({ services } = lab);
});
afterAll(() => lab.close());

describe('runs.getMany', () => {
  it('returns the records runs.get returns, in the order asked, and lists the ids with no run', async () => {
    const { store } = await services.lab();
    const a = await writeSyntheticRun(store, { steps: 30, seed: 1, shape: 'calm', name: 'a' });
    const b = await writeSyntheticRun(store, { steps: 30, seed: 2, shape: 'cispo_collapse', name: 'b' });
    const res = await call('runs.getMany', { runIds: [b.id, 'gone-run', a.id] });
    expect(res.ok).toBe(true);
    expect(res.value.runs.map((r: { id: string }) => r.id)).toEqual([b.id, a.id]);
    expect(res.value.missing).toEqual(['gone-run']);
    expect(res.value.runs[0]).toEqual((await call('runs.get', { runId: b.id })).value);
    expect(res.value.runs[1]).toEqual((await call('runs.get', { runId: a.id })).value);
  });

  it('names the field when the ids are bad', async () => {
    const empty = await call('runs.getMany', { runIds: [] });
    expect(empty.error.code).toBe('VALIDATION');
    expect(empty.error.field).toBe('runIds');
    const bad = await call('runs.getMany', { runIds: ['not a run id!'] });
    expect(bad.error.code).toBe('VALIDATION');
    expect(bad.error.field).toBe('runIds.0');
    const tooMany = await call('runs.getMany', { runIds: Array.from({ length: 65 }, (_, i) => `r${i}`) });
    expect(tooMany.error.field).toBe('runIds');
  });
});
