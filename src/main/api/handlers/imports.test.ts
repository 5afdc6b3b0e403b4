import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appendFile, readdir, readFile, writeFile } from 'node:fs/promises';
import { exportRun } from '../../bundles/exportBundle';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFollowHandlers, createImportsHandlers } from './imports';
import { createRunsHandlers } from './runs';
import { createSessionsHandlers } from './sessions';
import { liveEvents, openHandlerTestLab, type HandlerTestLab } from '../../testing/testLab';
import { until as untilWithin } from '../../testing/until';

const until = (what: string, cond: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> => untilWithin(what, cond, ms, 25);

let lab: HandlerTestLab;
beforeEach(async () => {
  // Browser mode with the temp folder allowed (serve --allow-dir): the files these tests name live there.
  lab = await openHandlerTestLab(
    'arl-imports-api-',
    (s) => ({ ...createImportsHandlers(s), ...createFollowHandlers(s), ...createRunsHandlers(s), ...createSessionsHandlers(s) }),
    { transport: 'browser', publishDownload: null, importRoots: [tmpdir()] },
  );
});
afterEach(async () => {
  await lab.close();
});

/** A verl console log as verl prints it: Ray prefix, ANSI colours, `step:N - key:value` lines. */
function verlLines(from: number, to: number, grad: (i: number) => string = (i) => (2 + (i % 3) * 0.1).toFixed(2)): string {
  let s = '';
  for (let i = from; i <= to; i++) {
    s += `\x1b[36m(main_task pid=4242)\x1b[0m step:${i} - actor/entropy_loss:${(0.5 - i * 0.001).toFixed(4)} - actor/grad_norm:${grad(i)} - critic/score/mean:${(0.1 + i * 0.01).toFixed(3)} - response_length/mean:120.5\n`;
  }
  return s;
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('imports.* and follow.* through the router', () => {
  it("imports.file: an uploaded verl log becomes an imported run named by the user's file; the same bytes again are reported as a duplicate", async () => {
    const text = verlLines(0, 19);
    const r = await lab.call('imports.file', { fileName: 'ppo-gsm8k.log', dataBase64: b64(text), tags: ['cluster'] });
    expect(r.ok).toBe(true);
    expect(r.value).toEqual({ runIds: [expect.any(String)], format: 'verl-console', steps: 20, skipped: {} });
    const rec = await lab.call('runs.get', { runId: r.value.runIds[0] });
    expect(rec.value).toMatchObject({ kind: 'imported', name: 'ppo-gsm8k.log', tags: ['cluster'], status: 'completed', step: 19 });
    expect(rec.value.source).toMatchObject({
      format: 'verl-console',
      framework: 'verl',
      paths: ['ppo-gsm8k.log'],
      keyMap: { 'actor/entropy': 'actor/entropy_loss', 'actor/grad_norm': 'actor/grad_norm' },
    });
    const keys = await lab.call('runs.metricKeys', { runId: r.value.runIds[0] });
    expect(keys.value).toContain('actor/entropy');
    const series = await lab.call('runs.metrics', { runIds: r.value.runIds, keys: ['actor/entropy'] });
    expect(series.value[0].y[0]).toBeCloseTo(0.5, 6);
    // The temporary copy is gone.
    expect(await readdir(join(lab.dir, '.uploads')).catch(() => [])).toEqual([]);

    const again = await lab.call('imports.file', { fileName: 'copy.log', dataBase64: b64(text) });
    expect(again.value).toMatchObject({ runIds: [], duplicateOf: r.value.runIds });
    const forced = await lab.call('imports.file', { fileName: 'copy.log', dataBase64: b64(text), again: true });
    expect(forced.value.runIds).toHaveLength(1);
  });

  it('imports.file refuses a file in no known format naming the formats, and writes nothing', async () => {
    const r = await lab.call('imports.file', { fileName: 'shopping.txt', dataBase64: b64('eggs\nmilk\nbread\n') });
    expect(r.ok).toBe(false);
    expect(r.error.code).toBe('VALIDATION');
    expect(r.error.message).toMatch(/^shopping\.txt is in no known format.*formats tried: verl-console, verl-jsonl, jsonl/s);
    expect((await lab.call('runs.list')).value).toEqual([]);
  });

  it('imports.path wants an absolute path and says so; a missing file is NOT_FOUND', async () => {
    const rel = await lab.call('imports.path', { path: 'logs/run.log' });
    expect(rel.error).toMatchObject({ code: 'VALIDATION', field: 'path' });
    const missing = await lab.call('imports.path', { path: join(lab.dir, 'nope.log') });
    expect(missing.error).toMatchObject({ code: 'NOT_FOUND', field: 'path' });
    const p = join(lab.dir, 'run.log');
    await writeFile(p, verlLines(0, 4));
    const ok = await lab.call('imports.path', { path: p, name: 'by path', format: 'verl-console' });
    expect(ok.value).toMatchObject({ format: 'verl-console', steps: 5 });
    const bad = await lab.call('imports.path', { path: p, format: 'excel' });
    expect(bad.error).toMatchObject({ code: 'VALIDATION', field: 'format' });
    expect(bad.error.message).toMatch(/known formats: verl-console/);
  });

  it('follow.*: a growing log publishes run.metrics and run.alert live; follow.stop completes the run', async () => {
    const { metrics, alerts, statuses } = liveEvents(lab);
    const p = join(lab.dir, 'live.log');
    await writeFile(p, verlLines(0, 9));
    const started = await lab.call('follow.start', { path: p, name: 'live run' });
    expect(started.ok).toBe(true);
    const runId: string = started.value.runId;
    await until('the first records', () => metrics.some((m) => m.runId === runId));
    const listed = await lab.call('follow.list');
    expect(listed.value).toEqual([expect.objectContaining({ runId, path: p, format: 'verl-console', status: 'running' })]);
    await appendFile(p, verlLines(10, 10, () => 'nan') + verlLines(11, 12));
    await until('the NaN alert', () => alerts.some((a) => a.runId === runId && a.alert.rule === 'non_finite'));
    const nanRecord = metrics.flatMap((m) => m.records).find((r) => r.step === 10);
    expect(nanRecord?.values['actor/grad_norm']).toBeNull();
    expect(nanRecord?.nonFinite).toEqual({ 'actor/grad_norm': 'NaN' });
    const stopped = await lab.call('follow.stop', { runId });
    expect(stopped.value).toMatchObject({ runId, status: 'completed', step: 12 });
    expect(metrics.flatMap((m) => m.records).map((r) => r.step)).toEqual(Array.from({ length: 13 }, (_, i) => i));
    expect(statuses.at(-1)).toMatchObject({ runId, status: 'completed' });
    expect((await lab.call('runs.get', { runId })).value).toMatchObject({ status: 'completed', source: { following: false } });
    expect((await lab.call('follow.list')).value).toEqual([]);
    expect((await lab.call('follow.stop', { runId })).error.code).toBe('NOT_FOUND');
  });
});

describe('runs.delete and a followed run', () => {
  it('refuses to delete a run while it is followed, and deletes it once following stopped', async () => {
    const p = join(lab.dir, 'live.log');
    await writeFile(p, verlLines(0, 3));
    const { value } = await lab.call('follow.start', { path: p });
    const refused = await lab.call('runs.delete', { runId: value.runId });
    expect(refused.error).toMatchObject({ code: 'CONFLICT', field: 'runId' });
    expect(refused.error.hint).toMatch(/follow\.stop/);
    await lab.call('follow.stop', { runId: value.runId });
    expect((await lab.call('runs.delete', { runId: value.runId })).value).toEqual({ deleted: true });
  });
});

describe('sessions and an imported run', () => {
  it('an interrupted imported run cannot be resumed: CONFLICT saying it was not trained here', async () => {
    const p = join(lab.dir, 'run.log');
    await writeFile(p, verlLines(0, 4));
    const { value } = await lab.call('imports.path', { path: p });
    const runId = value.runIds[0];
    await (await lab.services.lab()).store.updateRun(runId, { status: 'interrupted' });
    const r = await lab.call('sessions.resume', { runId });
    expect(r.error.code).toBe('CONFLICT');
    expect(r.error.message).toMatch(/imported from a verl-console log, not trained in this lab: it cannot be resumed/);
  });
});

describe('imports.file with a bundle', () => {
  it('routes a zip to the bundle importer: format "bundle", the run and its steps come back', async () => {
    const first = await lab.call('imports.file', { fileName: 'a.log', dataBase64: b64(verlLines(0, 6)) });
    const runId = first.value.runIds[0];
    const { store } = await lab.services.lab();
    const bundle = await exportRun(store, runId, { out: join(lab.dir, 'a.arlarena.zip') });
    const data = (await readFile(bundle.path)).toString('base64');
    // The run it holds is still here: reported, not copied (bundleDuplicate.test.ts); a copy on request.
    const own = await lab.call('imports.file', { fileName: 'a.arlarena.zip', dataBase64: data });
    expect(own.value).toMatchObject({ format: 'bundle', runIds: [], duplicateOf: [runId], exportedFrom: [runId] });
    const r = await lab.call('imports.file', { fileName: 'a.arlarena.zip', dataBase64: data, again: true });
    expect(r.value).toMatchObject({ format: 'bundle', steps: 7, runIds: [expect.any(String)] });
    expect(r.value.runIds[0]).not.toBe(runId);
    const broken = await lab.call('imports.file', {
      fileName: 'broken.zip',
      dataBase64: (await readFile(bundle.path)).subarray(0, 200).toString('base64'),
    });
    expect(broken.error.code).toBe('BUNDLE_INVALID');
    expect(broken.error.message).toMatch(/^broken\.zip: /);
  });
});
