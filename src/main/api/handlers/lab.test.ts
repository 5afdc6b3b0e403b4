/** runs.*, sessions.*, alerts.*, bundles.* through the real router (zod at the door, output checked). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import type { LabServices } from '../../app/lab';
import { writeSyntheticRun } from '../../store/synthetic';
import { createRunsHandlers } from './runs';
import { openHandlerTestLab, type HandlerTestLab } from '../../testing/testLab';
import { createSessionsHandlers } from './sessions';
import { createAlertsHandlers } from './alerts';
import { createBundlesHandlers } from './bundles';

let lab: HandlerTestLab;
let services: LabServices;
const call = async (m: string, input?: unknown): Promise<any> => lab.call(m, input);

beforeAll(async () => {
  lab = await openHandlerTestLab(
    'arl-api-',
    (s) => ({ ...createRunsHandlers(s), ...createSessionsHandlers(s), ...createAlertsHandlers(s), ...createBundlesHandlers(s) }),
    { transport: 'browser', publishDownload: (_p, n) => `/download/${n}?token=t` },
  );
  ({ services } = lab);
});
afterAll(() => lab.close());

describe('lab API handlers', () => {
  it('runs: list, get, rename, tag, metrics, keys, trajectories, check, alerts, delete', async () => {
    const { store } = await services.lab();
    const run = await writeSyntheticRun(store, { steps: 120, seed: 2, shape: 'cispo_collapse', collapseAt: 70 });
    const list = await call('runs.list', { sortBy: 'success' });
    expect(list.ok).toBe(true);
    expect(list.value.map((r: any) => r.id)).toContain(run.id);
    expect((await call('runs.get', { runId: 'missing' })).error.code).toBe('NOT_FOUND');
    expect((await call('runs.rename', { runId: run.id, name: 'renamed' })).value.name).toBe('renamed');
    expect((await call('runs.tag', { runId: run.id, tags: ['a', 'a', 'b'] })).value.tags).toEqual(['a', 'b']);
    const series = await call('runs.metrics', {
      runIds: [run.id],
      keys: ['actor/grad_norm', 'episode/success_rate'],
      xAxis: 'tokens',
      maxPoints: 50,
    });
    expect(series.ok).toBe(true);
    expect(series.value).toHaveLength(2);
    expect(series.value[0].x.length).toBeLessThanOrEqual(50);
    expect((await call('runs.metricKeys', { runId: run.id })).value).toContain('actor/entropy');
    expect((await call('runs.trajectories', { runId: run.id })).value).toEqual({ steps: [], trajectories: [] });
    const check = await call('runs.check', { runId: run.id });
    expect(check.value.some((a: any) => a.rule === 'grad_norm_spike')).toBe(true);
    await store.upsertAlerts(run.id, check.value);
    const alerts = await call('alerts.list', { runId: run.id, acknowledged: false });
    expect(alerts.value.length).toBe(check.value.length);
    expect(alerts.value[0].severity).toBe('critical');
    const acked = await call('alerts.ack', { runId: run.id, alertId: alerts.value[0].id });
    expect(acked.value.acknowledged).toBe(true);
    expect((await call('alerts.list', { acknowledged: true })).value.map((a: any) => a.id)).toEqual([alerts.value[0].id]);
    expect((await call('alerts.ack', { runId: run.id, alertId: 'nope' })).error.code).toBe('NOT_FOUND');
    // bundles
    const ex = await call('bundles.export', { runId: run.id });
    expect(ex.ok).toBe(true);
    expect(ex.value.downloadUrl).toMatch(/^\/download\//);
    const data = await readFile(ex.value.path);
    const bad = Buffer.from(data);
    bad[bad.length - 30] ^= 0xff;
    const refused = await call('bundles.import', { fileName: 'x.zip', dataBase64: data.subarray(0, 500).toString('base64') });
    expect(refused.error.code).toBe('BUNDLE_INVALID');
    expect(refused.error.message).toMatch(/^x\.zip: /);
    // The bundle of a run still here is refused as `arlarena import` refuses it, naming the run; again: true copies it.
    const held = await call('bundles.import', { fileName: 'x.zip', dataBase64: data.toString('base64') });
    expect(held.error.code).toBe('CONFLICT');
    expect(held.error.message).toBe(
      `x.zip: already in the lab as run ${run.id} (the run this bundle holds: same metrics, by SHA-256); nothing was changed; again: true to import a copy under a new id`,
    );
    expect((await call('runs.list')).value.map((r: any) => r.id)).toEqual([run.id]);
    const imported = await call('bundles.import', { fileName: 'x.zip', dataBase64: data.toString('base64'), again: true });
    expect(imported.ok).toBe(true);
    expect(imported.value.runId).not.toBe(run.id);
    const twice = await call('bundles.import', { fileName: 'x.zip', dataBase64: data.toString('base64') });
    expect(twice.error.code).toBe('CONFLICT');
    expect(twice.error.message).toMatch(/^x\.zip: already in the lab as run /);
    expect(twice.error.message).toContain(run.id);
    expect(twice.error.message).toContain(imported.value.runId);
    expect((await call('runs.delete', { runId: imported.value.runId })).value.deleted).toBe(true);
    expect((await call('runs.delete', { runId: imported.value.runId })).value.deleted).toBe(false);
  });

  it('sessions: start from a preset (validated), list, stop; bad input named', async () => {
    const bad = await call('sessions.start', { preset: 'nope', env: 'sokoban' });
    expect(bad.error.code).toBe('VALIDATION');
    expect(bad.error.message).toMatch(/unknown preset "nope"/);
    const badOverride = await call('sessions.start', { preset: 'sampo', env: 'sokoban', overrides: { 'optim.lrr': 1 } });
    expect(badOverride.error.code).toBe('VALIDATION');
    expect(badOverride.error.field).toBe('overrides.optim.lrr');
    const started = await call('sessions.start', { preset: 'sampo', env: 'sokoban', seed: 3, overrides: { 'training.steps': 400 } });
    expect(started.ok).toBe(true);
    const { runId } = started.value;
    const rec = (await call('runs.get', { runId })).value;
    expect(rec.seed).toBe(3);
    expect(rec.config.algorithm.policyLoss.mode).toBeDefined();
    expect(rec.backend.training).toBe('wasm');
    expect((await call('sessions.list')).value.map((s: any) => s.runId)).toContain(runId);
    expect((await call('runs.delete', { runId })).error.code).toBe('CONFLICT');
    const { sessions } = await services.lab();
    const stopped = await call('sessions.stop', { runId });
    expect(stopped.ok).toBe(true);
    expect(await sessions.waitFor(runId)).toBe('stopped');
    expect((await call('sessions.pause', { runId })).error.code).toBe('CONFLICT');
    expect((await call('sessions.pause', { runId: 'ghost' })).error.code).toBe('NOT_FOUND');
  });
});
