/**
 * runs.chartCsv through the real router and a real store: the CSV is read back with the lab's own W&B-CSV
 * parser (core/formats) and compared with the stored metric records, value for value.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLineParser } from '../../../core/formats';
import type { SourceStep } from '../../../core/formats/types';
import type { LabServices } from '../../app/lab';
import { writeSyntheticRun } from '../../store/synthetic';
import { createRunsHandlers } from './runs';
import { openHandlerTestLab, type HandlerTestLab } from '../../testing/testLab';

let lab: HandlerTestLab;
let services: LabServices;
const call = async (m: string, input?: unknown): Promise<any> => lab.call(m, input);

beforeAll(async () => {
  lab = await openHandlerTestLab('arl-chartcsv-', createRunsHandlers);
  ({ services } = lab);
});
afterAll(() => lab.close());

function parse(csv: string): SourceStep[] {
  const out: SourceStep[] = [];
  const p = createLineParser('wandb-csv', (s) => out.push(s));
  for (const line of csv.trimEnd().split('\n')) p.push(line);
  p.end();
  expect(p.skipped).toEqual({});
  return out;
}

describe('runs.chartCsv', () => {
  it('writes every stored point of the metric for each run, NaN kept, twins told apart by short id', async () => {
    const { store } = await services.lab();
    const a = await writeSyntheticRun(store, { steps: 700, seed: 1, shape: 'calm', name: 'twin', nanAt: 650 });
    const b = await writeSyntheticRun(store, { steps: 300, seed: 2, shape: 'cispo_collapse', name: 'twin' });
    const key = 'actor/grad_norm';
    const res = await call('runs.chartCsv', { runIds: [a.id, b.id], key });
    expect(res.ok).toBe(true);
    expect(res.value.fileName).toBe('compare.actor_grad_norm.csv');
    expect(res.value.csv.split('\n')[0]).toBe(
      `Step,twin (${a.id.slice(-6)}) - ${key},twin (${a.id.slice(-6)}) - ${key}__MIN,twin (${a.id.slice(-6)}) - ${key}__MAX,` +
        `twin (${b.id.slice(-6)}) - ${key},twin (${b.id.slice(-6)}) - ${key}__MIN,twin (${b.id.slice(-6)}) - ${key}__MAX`,
    );
    const back = parse(res.value.csv);
    for (const [run, id] of [
      [`twin (${a.id.slice(-6)})`, a.id],
      [`twin (${b.id.slice(-6)})`, b.id],
    ] as const) {
      const stored = (await store.readMetrics(id))
        .filter((r) => r.values[key] !== undefined)
        .map((r) => ({ step: r.step, v: r.values[key] }));
      const got = back.filter((s) => s.run === run).map((s) => ({ step: s.step, v: s.values[key] }));
      // Not downsampled: 700 points where the charts get at most a few hundred.
      expect(got).toEqual(stored);
    }
    expect(back.some((s) => Number.isNaN(s.values[key]))).toBe(true);
    expect(res.value.rows).toBe(700);
  });

  it("leaves out a validation key's NaN between validations, as the chart does", async () => {
    const { store } = await services.lab();
    const r = await writeSyntheticRun(store, { steps: 60, seed: 3, shape: 'calm', name: 'val' });
    const key = 'val/success_rate';
    const stored = (await store.readMetrics(r.id)).filter((x) => Number.isFinite(x.values[key])).map((x) => x.step);
    expect(stored.length).toBeGreaterThan(1);
    const res = await call('runs.chartCsv', { runIds: [r.id], key });
    expect(res.value.fileName).toBe('val.val_success_rate.csv');
    expect(parse(res.value.csv).map((s) => s.step)).toEqual(stored);
  });

  it('says which run is missing, and when no run logged the metric', async () => {
    const { store } = await services.lab();
    const r = await writeSyntheticRun(store, { steps: 5, seed: 4, shape: 'calm', name: 'x' });
    const gone = await call('runs.chartCsv', { runIds: [r.id, 'gone-run'], key: 'actor/grad_norm' });
    expect(gone.error.code).toBe('NOT_FOUND');
    expect(gone.error.message).toContain('gone-run');
    const none = await call('runs.chartCsv', { runIds: [r.id], key: 'no/such_key' });
    expect(none.error).toMatchObject({ code: 'NOT_FOUND', field: 'key' });
    expect(none.error.message).toBe(`no point of "no/such_key" in run ${r.id}`);
  });
});
