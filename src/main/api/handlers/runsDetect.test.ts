/**
 * runs.detect through the real router (input and output checked against the contract) and a real store: the
 * detector over a stored run, which rules could run on its keys, and `save` storing the alerts as
 * `arlarena check --save` does (a synthetic collapse run showed no alerts until then).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Alert } from '../../../shared/api';
import type { LabServices } from '../../app/lab';
import { writeSyntheticRun } from '../../store/synthetic';
import { createRunsHandlers } from './runs';
import { createAlertsHandlers } from './alerts';
import { openHandlerTestLab, type HandlerTestLab } from '../../testing/testLab';

let lab: HandlerTestLab;
let services: LabServices;
const call = async (m: string, input?: unknown): Promise<any> => lab.call(m, input);

beforeAll(async () => {
  lab = await openHandlerTestLab('arl-detect-', (s) => ({ ...createRunsHandlers(s), ...createAlertsHandlers(s) }));
  ({ services } = lab);
});
afterAll(() => lab.close());

describe('runs.detect', () => {
  it('finds the alerts of a stored collapse run, stores them only with save, and announces them', async () => {
    const { store } = await services.lab();
    const run = await writeSyntheticRun(store, { steps: 120, seed: 3, shape: 'cispo_collapse', name: 'collapse' });
    expect((await call('runs.get', { runId: run.id })).value.alerts).toEqual([]);
    // A synthetic run was never read by the detector: its empty alert list is not "no collapse".
    expect((await call('runs.get', { runId: run.id })).value.detectedThrough).toBeNull();
    expect((await call('runs.list', {})).value.find((r: { id: string }) => r.id === run.id).detectedThrough).toBeNull();

    const dry = await call('runs.detect', { runId: run.id });
    expect(dry.ok).toBe(true);
    expect(dry.value.saved).toBe(false);
    expect(dry.value.alerts.length).toBeGreaterThan(0);
    expect(dry.value.alerts.every((a: Alert) => a.runId === run.id)).toBe(true);
    // Without save nothing is stored.
    expect((await call('runs.get', { runId: run.id })).value.alerts).toEqual([]);
    expect((await call('runs.get', { runId: run.id })).value.detectedThrough).toBeNull();

    const events: Alert[] = [];
    const off = services.bus.subscribe('run.alert', (p) => events.push(p.alert));
    const saved = await call('runs.detect', { runId: run.id, save: true });
    off();
    expect(saved.value.saved).toBe(true);
    expect(saved.value.alerts.map((a: Alert) => a.id)).toEqual(dry.value.alerts.map((a: Alert) => a.id));
    const rec = (await call('runs.get', { runId: run.id })).value;
    expect(rec.alerts.map((a: Alert) => a.id).sort()).toEqual(dry.value.alerts.map((a: Alert) => a.id).sort());
    expect(rec.alertCount).toBe(dry.value.alerts.length);
    // Saved: the record says the detector has read it to its last step (120 steps, 1–120).
    expect(rec.detectedThrough).toBe(120);
    expect((await call('runs.list', {})).value.find((r: { id: string }) => r.id === run.id).detectedThrough).toBe(120);
    expect(events.map((a) => a.id).sort()).toEqual(rec.alerts.map((a: Alert) => a.id).sort());

    // Running it again keeps an acknowledgement and adds no duplicate.
    const first = rec.alerts[0] as Alert;
    expect((await call('alerts.ack', { runId: run.id, alertId: first.id })).ok).toBe(true);
    const again = await call('runs.detect', { runId: run.id, save: true });
    expect(again.value.alerts.find((a: Alert) => a.id === first.id)?.acknowledged).toBe(true);
    expect((await call('runs.get', { runId: run.id })).value.alerts.length).toBe(rec.alerts.length);
  });

  it('says which rules could not run and which metric they lack on a run with few keys', async () => {
    const { store } = await services.lab();
    const run = await store.createRun({
      name: 'two keys',
      tags: [],
      env: 'imported',
      preset: 'imported',
      seed: 0,
      config: {},
      totalSteps: 30,
      status: 'running',
    });
    // A loss that turns NaN at step 20 and a grad norm: nothing else (as a sparse external log would have).
    const recs = Array.from({ length: 30 }, (_, i) => ({
      step: i,
      values: { 'actor/pg_loss': i >= 20 ? Number.NaN : 0.1 - i * 0.001, 'actor/grad_norm': 1 + (i % 3) * 0.1 },
    }));
    await store.appendMetrics(run.id, recs);
    await store.flush(run.id);
    await store.updateRun(run.id, { status: 'completed' });

    const res = await call('runs.detect', { runId: run.id, save: true });
    expect(res.ok).toBe(true);
    const byRule = new Map<string, { applicable: boolean; missing: string[]; needs: string }>(
      res.value.coverage.map((c: { rule: string }) => [c.rule, c]),
    );
    expect(byRule.get('non_finite')).toMatchObject({ applicable: true, missing: [] });
    expect(byRule.get('grad_norm_spike')).toMatchObject({ applicable: true, missing: [] });
    expect(byRule.get('entropy_shift')).toMatchObject({ applicable: false, missing: ['actor/entropy'], needs: 'all' });
    const kl = byRule.get('kl_drift')!;
    expect(kl.applicable).toBe(false);
    expect(kl.needs).toBe('any');
    expect(kl.missing).toContain('actor/ppo_kl');
    // The NaN loss is what an imported log's alert comes from.
    expect(res.value.alerts.some((a: Alert) => a.rule === 'non_finite' && a.metric === 'actor/pg_loss' && a.firstStep === 20)).toBe(true);

    // coverageOnly: the same coverage from the keys alone, no detection.
    const cov = await call('runs.detect', { runId: run.id, coverageOnly: true });
    expect(cov.value.coverage).toEqual(res.value.coverage);
    expect(cov.value.alerts).toEqual([]);
    expect(cov.value.saved).toBe(false);
    const both = await call('runs.detect', { runId: run.id, coverageOnly: true, save: true });
    expect(both.error.code).toBe('VALIDATION');
    expect(both.error.field).toBe('coverageOnly');
  });

  it('names the run when it does not exist, and the field when the input is bad', async () => {
    const gone = await call('runs.detect', { runId: 'no-such-run' });
    expect(gone.error.code).toBe('NOT_FOUND');
    expect(gone.error.message).toContain('no-such-run');
    const bad = await call('runs.detect', { runId: 'x', save: 'yes' });
    expect(bad.error.code).toBe('VALIDATION');
    expect(bad.error.field).toBe('save');
  });
});
