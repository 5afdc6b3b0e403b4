import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtemp, mkdir, readFile, readdir, rm, writeFile, appendFile, utimes } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { RunStore } from './runStore';
import { writeSyntheticRun } from './synthetic';
import { lttbIndices } from './lttb';

let dir: string;
let opened: RunStore[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-store-'));
});
afterEach(async () => {
  // Close every store a test opened: an open stream's FileHandle left to the GC is a Node deprecation (DEP0137).
  for (const s of opened) await s.close();
  opened = [];
  await rm(dir, { recursive: true, force: true });
});

async function openStore(d: string): Promise<RunStore> {
  const s = await RunStore.open(d);
  opened.push(s);
  return s;
}

const base = { preset: 'sampo', env: 'sokoban', seed: 7, config: { optim: { lr: 1e-4 } }, totalSteps: 10 };
/** A trajectory of `step` (one per uid; the trajectory tests read them back by step). */
const traj = (step: number, uid: string) => ({
  step,
  split: 'train' as const,
  env: 'sokoban',
  taskId: `t${step}`,
  uid,
  trajUid: uid,
  won: false,
  episodeReturn: step,
  turns: [],
});

describe('RunStore', () => {
  it('creates, lists, filters, sorts, updates and deletes runs', async () => {
    const s = await openStore(dir);
    const a = await s.createRun({ ...base, name: 'alpha', tags: ['x'] });
    const b = await s.createRun({ ...base, env: 'frozenlake', name: 'beta' });
    expect((await s.listRuns()).map((r) => r.id).sort()).toEqual([a.id, b.id].sort());
    expect((await s.listRuns({ env: 'frozenlake' })).map((r) => r.id)).toEqual([b.id]);
    expect((await s.listRuns({ tag: 'x' })).map((r) => r.id)).toEqual([a.id]);
    expect((await s.listRuns({ search: 'BETA' })).map((r) => r.id)).toEqual([b.id]);
    expect((await s.listRuns({ sortBy: 'name', sortDir: 'asc' })).map((r) => r.name)).toEqual(['alpha', 'beta']);
    await s.updateRun(a.id, { status: 'running' });
    expect((await s.getRun(a.id))?.status).toBe('running');
    // Reopen: everything persisted.
    await s.close();
    const s2 = await openStore(dir);
    expect(s2.warnings).toEqual([]);
    expect((await s2.getRun(a.id))?.status).toBe('running');
    expect((await s2.markInterrupted()).sort()).toEqual([a.id, b.id].sort());
    expect((await s2.getRun(a.id))?.status).toBe('interrupted');
    expect(await s2.deleteRun(b.id)).toBe(true);
    expect(await s2.getRun(b.id)).toBeUndefined();
    expect((await s2.listRuns()).map((r) => r.id)).toEqual([a.id]);
  });

  it('lists a running run with its ETA and the last validation success with its episode count (runs table)', async () => {
    const s = await openStore(dir);
    const r = await s.createRun(base);
    await s.updateRun(r.id, { status: 'running' });
    await s.appendMetrics(r.id, [
      { step: 1, values: { 'perf/wall_s': 2, 'val/success_rate': 0.25, 'val/episodes': 32 } },
      { step: 2, values: { 'perf/wall_s': 4, 'val/success_rate': NaN, 'val/episodes': NaN } },
    ]);
    const [row] = await s.listRuns();
    // 2 s a step, 8 of 10 steps left.
    expect(row?.etaSeconds).toBe(16);
    expect(row?.summary['val/success_rate']).toBe(0.25);
    expect(row?.summary['val/episodes']).toBe(32);
    // base's config has no training section: the validation temperature is unknown.
    expect(row?.valTemperature).toBeNull();
    const g = await s.createRun({ ...base, config: { training: { valTemperature: 0 } } });
    expect((await s.listRuns()).find((x) => x.id === g.id)?.valTemperature).toBe(0);
  });

  it('round-trips non-finite metrics and ignores + repairs a torn last line', async () => {
    const s = await openStore(dir);
    const r = await s.createRun(base);
    await s.appendMetrics(r.id, [
      { step: 1, values: { 'actor/grad_norm': 0.5, 'val/success_rate': NaN } },
      { step: 2, values: { 'actor/grad_norm': NaN, 'actor/pg_loss': Infinity } },
      { step: 3, values: { 'actor/grad_norm': -Infinity } },
    ]);
    await s.flush(r.id);
    await appendFile(join(s.runDir(r.id), 'metrics.jsonl'), '{"step":4,"values":{"actor/gr');
    await s.close();
    const s2 = await openStore(dir);
    const rows = await s2.readMetrics(r.id);
    expect(rows.map((x) => x.step)).toEqual([1, 2, 3]);
    expect(rows[1].values['actor/grad_norm']).toBeNaN();
    expect(rows[1].values['actor/pg_loss']).toBe(Infinity);
    expect(rows[2].values['actor/grad_norm']).toBe(-Infinity);
    const series = await s2.series(r.id, 'actor/grad_norm');
    expect(series.y).toEqual([0.5, null, null]);
    expect(series.nonFinite).toEqual([
      { step: 2, value: 'NaN' },
      { step: 3, value: '-Infinity' },
    ]);
    // validation NaN is "not applicable", not an event
    expect((await s2.series(r.id, 'val/success_rate')).nonFinite).toEqual([]);
    expect(await s2.metricKeys(r.id)).toEqual(['actor/grad_norm', 'actor/pg_loss', 'val/success_rate']);
    // next append repairs the torn tail first
    await s2.appendMetrics(r.id, [{ step: 4, values: { 'actor/grad_norm': 1, 'actor/entropy': 0.7 } }]);
    await s2.flush(r.id);
    // Keys are collected when asked for: one logged after the first read is there too.
    expect(await s2.metricKeys(r.id)).toEqual(['actor/entropy', 'actor/grad_norm', 'actor/pg_loss', 'val/success_rate']);
    const text = await readFile(join(s2.runDir(r.id), 'metrics.jsonl'), 'utf8');
    expect(
      text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).step),
    ).toEqual([1, 2, 3, 4]);
  });

  it('keeps how far the collapse detector has read a run: from detected appends, a saved detection, or (old records) where the run came from', async () => {
    const s = await openStore(dir);
    const r = await s.createRun(base);
    expect((await s.getRun(r.id))!.detectedThrough).toBeNull();
    // A writer that did not feed the detector (a synthetic run) leaves it null.
    await s.appendMetrics(r.id, [
      { step: 1, values: { x: 1 } },
      { step: 2, values: { x: 2 } },
    ]);
    expect((await s.getRun(r.id))!.detectedThrough).toBeNull();
    // A training session or an import feeds each record to the detector as it stores it.
    await s.appendMetrics(r.id, [{ step: 3, values: { x: 3 } }], { detected: true });
    await s.noteMetrics(r.id, [{ step: 4, values: { x: 4 } }], { detected: true });
    expect((await s.getRun(r.id))!.detectedThrough).toBe(4);
    await s.flush(r.id);
    await s.close();
    const s2 = await openStore(dir);
    expect((await s2.getRun(r.id))!.detectedThrough).toBe(4);
    expect((await s2.listRuns()).find((x) => x.id === r.id)!.detectedThrough).toBe(4);
    // A detection pass never moves it back, and one over an empty run leaves it as it was.
    expect((await s2.recordDetection(r.id, [], 2)).detectedThrough).toBe(4);
    expect((await s2.recordDetection(r.id, [], null)).detectedThrough).toBe(4);
    expect((await s2.recordDetection(r.id, [], 9)).detectedThrough).toBe(9);

    // Records written before the field existed: a lab run or an import was read live, a synthetic one never.
    const legacy = await s2.createRun({ ...base, name: 'old lab run' });
    const legacySynth = await s2.createRun({ ...base, name: 'old synthetic run', tags: ['synthetic'] });
    for (const id of [legacy.id, legacySynth.id]) {
      await s2.appendMetrics(id, [
        { step: 1, values: { x: 1 } },
        { step: 2, values: { x: 2 } },
      ]);
      await s2.flush(id);
    }
    await s2.close();
    for (const id of [legacy.id, legacySynth.id]) {
      const file = join(dir, 'runs', id, 'run.json');
      const { detectedThrough: _dropped, ...old } = JSON.parse(await readFile(file, 'utf8'));
      await writeFile(file, JSON.stringify(old));
    }
    await rm(join(dir, 'runs.json'), { force: true });
    const s3 = await openStore(dir);
    const list = await s3.listRuns();
    expect(list.find((x) => x.id === legacy.id)!.detectedThrough).toBe(2);
    expect(list.find((x) => x.id === legacySynth.id)!.detectedThrough).toBeNull();
  });

  it("reads a growing run's new lines once when asked for its metrics twice at the same time", async () => {
    const s = await openStore(dir);
    const r = await s.createRun(base);
    await s.appendMetrics(
      r.id,
      [1, 2, 3].map((step) => ({ step, values: { x: step } })),
    );
    await s.flush(r.id);
    expect((await s.readMetrics(r.id)).map((x) => x.step)).toEqual([1, 2, 3]);
    await s.appendMetrics(
      r.id,
      [4, 5].map((step) => ({ step, values: { x: step } })),
    );
    await s.flush(r.id);
    const [a, b, series] = await Promise.all([s.readMetrics(r.id), s.readMetrics(r.id), s.series(r.id, 'x')]);
    expect(a.map((x) => x.step)).toEqual([1, 2, 3, 4, 5]);
    expect(b).toBe(a);
    expect(series.steps).toEqual([1, 2, 3, 4, 5]);
  });

  it('moves a corrupt catalog aside and rebuilds it from run folders', async () => {
    const s = await openStore(dir);
    const r = await s.createRun(base);
    await s.close();
    await writeFile(join(dir, 'runs.json'), '{"schemaVersion":1,"runs":{"x"');
    const s2 = await openStore(dir);
    expect(s2.warnings[0]).toMatch(/could not be read.*moved aside/);
    const names = await readdir(dir);
    const aside = names.find((n) => n.startsWith('runs.json.corrupt-'));
    expect(aside).toBeDefined();
    expect(await readFile(join(dir, aside!), 'utf8')).toBe('{"schemaVersion":1,"runs":{"x"');
    expect((await s2.listRuns()).map((x) => x.id)).toEqual([r.id]);
  });

  it('moves a corrupt run.json aside and still opens', async () => {
    const s = await openStore(dir);
    const r = await s.createRun(base);
    const r2 = await s.createRun({ ...base, seed: 8 });
    await s.close();
    await writeFile(join(dir, 'runs.json'), '');
    await writeFile(join(dir, 'runs', r.id, 'run.json'), 'garbage');
    const s2 = await openStore(dir);
    expect(s2.warnings.join('\n')).toMatch(new RegExp(`Run ${r.id}: its record run.json was unreadable`));
    // Neither the catalog nor run.json survived: the run stays listed as damaged, deletable.
    expect((await s2.listRuns()).map((x) => x.id).sort()).toEqual([r.id, r2.id].sort());
    expect((await s2.getRun(r.id))?.tags).toContain('damaged');
    expect((await s2.getRun(r2.id))?.seed).toBe(8);
  });

  it('series by wall time / tokens and LTTB keeps a spike and non-finite markers', async () => {
    const s = await openStore(dir);
    const run = await writeSyntheticRun(s, { steps: 2000, seed: 3, nanAt: 1500 });
    const rows = await s.readMetrics(run.id);
    // Inject a spike by a second run with a manual stream.
    const r2 = await s.createRun(base);
    await s.appendMetrics(
      r2.id,
      rows.map((r) => ({ step: r.step, values: { ...r.values, 'actor/grad_norm': r.step === 777 ? 500 : r.values['actor/grad_norm'] } })),
    );
    const full = await s.series(r2.id, 'actor/grad_norm');
    expect(full.totalPoints).toBe(2000);
    const ds = await s.series(r2.id, 'actor/grad_norm', { maxPoints: 100 });
    expect(ds.x.length).toBeLessThanOrEqual(100);
    expect(ds.steps).toContain(777);
    expect(ds.steps).toContain(1500);
    expect(ds.y[ds.steps.indexOf(1500)]).toBeNull();
    expect(ds.nonFinite).toEqual([{ step: 1500, value: 'NaN' }]);
    const wall = await s.series(r2.id, 'actor/grad_norm', { xAxis: 'wall' });
    expect(wall.x[0]).toBeCloseTo(rows[0].values['perf/wall_s']);
    const tok = await s.series(r2.id, 'actor/grad_norm', { xAxis: 'tokens' });
    expect(tok.x[1]).toBe(40_000);
    const summary = (await s.getRun(run.id))!.summary;
    expect(summary['best/episode/success_rate']).toBeGreaterThan(0.3);
    expect(lttbIndices([0, 1, 2], [0, 1, 2], 10)).toEqual([0, 1, 2]);
  });

  it('checkpoints: latest loads, older pruned, resume truncation drops later steps', async () => {
    const s = await openStore(dir);
    const r = await s.createRun(base);
    for (const step of [2, 4, 6])
      await s.saveCheckpoint(r.id, { step, files: { 'weights.bin': new Uint8Array([step, 1, 2]) }, meta: { step } });
    const c = await s.loadLatestCheckpoint(r.id);
    expect(c?.step).toBe(6);
    expect([...c!.files['weights.bin']]).toEqual([6, 1, 2]);
    expect(await s.filesOf(r.id).checkpointSteps()).toEqual([4, 6]);
    expect(await s.checkpointSteps(r.id)).toEqual([4, 6]);
    expect([...(await s.loadCheckpointAt(r.id, 4))!.files['weights.bin']]).toEqual([4, 1, 2]);
    expect(await s.loadCheckpointAt(r.id, 2)).toBeUndefined();
    await s.appendMetrics(
      r.id,
      [1, 2, 3, 4, 5, 6, 7, 8].map((step) => ({ step, values: { x: step } })),
    );
    await s.appendTrajectories(r.id, [
      { step: 8, split: 'train', env: 'sokoban', taskId: 't', uid: 'u', trajUid: 'tu', won: false, episodeReturn: 0, turns: [] },
    ]);
    await s.filesOf(r.id).truncateAfterStep(6);
    expect((await s.readMetrics(r.id)).map((m) => m.step)).toEqual([1, 2, 3, 4, 5, 6]);
    expect((await s.trajectories(r.id)).steps).toEqual([]);
  });

  it('cleans temp files and checkpoint temp folders left by killed writers (only stale ones)', async () => {
    const s = await openStore(dir);
    const r = await s.createRun(base);
    await s.close();
    const old = new Date(Date.now() - 10 * 60_000);
    const stale = [join(dir, '.runs.json.1-0-1.tmp'), join(s.runDir(r.id), '.run.json.1-0-2.tmp')];
    for (const f of stale) {
      await writeFile(f, 'partial');
      await utimes(f, old, old);
    }
    const staleDir = join(s.runDir(r.id), 'checkpoints', '.step-00000004.1.tmp');
    await mkdir(staleDir, { recursive: true });
    await writeFile(join(staleDir, 'w.bin'), 'x');
    await utimes(staleDir, old, old);
    const fresh = join(dir, '.runs.json.2-0-1.tmp');
    await writeFile(fresh, 'a live writer');
    await openStore(dir);
    expect((await readdir(dir)).filter((n) => n.endsWith('.tmp'))).toEqual(['.runs.json.2-0-1.tmp']);
    expect((await readdir(s.runDir(r.id))).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    expect(await readdir(join(s.runDir(r.id), 'checkpoints'))).toEqual([]);
  });

  it('start-up recovery leaves runs owned by a live process alone', async () => {
    const s = await openStore(dir);
    const live = await s.createRun({ ...base, status: 'running' });
    const dead = await s.createRun({ ...base, status: 'running', seed: 2 });
    const mine = await s.createRun({ ...base, status: 'running', seed: 3 });
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 20000)']);
    await s.claimRun(live.id, child.pid);
    const gone = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => gone.on('exit', r));
    await s.claimRun(dead.id, gone.pid);
    await s.claimRun(mine.id); // this process's own stale claim: a previous life of the app
    try {
      expect((await s.markInterrupted()).sort()).toEqual([dead.id, mine.id].sort());
      expect((await s.getRun(live.id))!.status).toBe('running');
      await s.releaseRun(live.id);
      expect(await s.markInterrupted()).toEqual([live.id]);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('trajectories by step through an incremental line index', async () => {
    const s = await openStore(dir);
    const r = await s.createRun(base);
    await s.appendTrajectories(r.id, [traj(1, 'a'), traj(1, 'b'), traj(2, 'c')]);
    expect(await s.trajectories(r.id)).toEqual({ steps: [1, 2], trajectories: [traj(2, 'c')] });
    await s.appendTrajectories(r.id, [traj(3, 'd'), traj(3, 'e'), traj(3, 'f')]);
    await appendFile(join(s.runDir(r.id), 'trajectories.jsonl'), '{"step":4,"spl');
    const got = await s.trajectories(r.id, { step: 3, limit: 2 });
    expect(got.steps).toEqual([1, 2, 3]);
    expect(got.trajectories.map((t) => t.trajUid)).toEqual(['d', 'e']);
    expect((await s.trajectories(r.id, { step: 1 })).trajectories.map((t) => t.trajUid)).toEqual(['a', 'b']);
    expect((await s.trajectories(r.id, { step: 9 })).trajectories).toEqual([]);
  });

  it('concurrent trajectory queries index each new line once', async () => {
    const s = await openStore(dir);
    const r = await s.createRun(base);
    await s.appendTrajectories(r.id, [traj(1, 'a'), traj(1, 'b')]);
    await s.trajectories(r.id);
    await s.appendTrajectories(r.id, [traj(2, 'c'), traj(2, 'd')]);
    const answers = await Promise.all([
      s.trajectories(r.id, { step: 2 }),
      s.trajectories(r.id, { step: 2 }),
      s.trajectories(r.id, { step: 2 }),
    ]);
    for (const a of answers) expect(a.trajectories.map((t) => t.trajUid)).toEqual(['c', 'd']);
  });

  it("two stores on one data directory see and keep each other's changes", async () => {
    // Two instances in one process use the same lock and files as two processes would (concurrency.test.ts
    // does it with real processes).
    const app = await openStore(dir);
    const cli = await openStore(dir);
    const run = await app.createRun(base);
    // A run created elsewhere is listed, and its record read, without reopening.
    expect((await cli.listRuns()).map((r) => r.id)).toEqual([run.id]);
    const alert = {
      id: 'a1',
      runId: run.id,
      rule: 'non_finite',
      severity: 'warning' as const,
      metric: 'actor/grad_norm',
      firstStep: 3,
      lastStep: 3,
      message: 'm',
      hint: 'h',
      evidence: { steps: [3], values: [null] },
      acknowledged: false,
    };
    await app.upsertAlerts(run.id, [alert]);
    // The CLI tags the run and acknowledges the alert while the app is folding metrics into its record.
    await app.appendMetrics(run.id, [{ step: 1, values: { 'perf/wall_s': 1 } }]);
    await cli.updateRun(run.id, { tags: ['keep'] });
    await cli.updateRun(run.id, (r) => ({ alerts: r.alerts.map((a) => ({ ...a, acknowledged: true })) }));
    expect((await app.getRun(run.id))!.tags).toEqual(['keep']);
    // The app's next writes (a live alert update, its metric fold) start from the record on disk.
    await app.upsertAlerts(run.id, [{ ...alert, lastStep: 4 }]);
    await app.appendMetrics(run.id, [{ step: 2, values: { 'perf/wall_s': 2 } }]);
    await app.flush(run.id);
    for (const s of [app, cli]) {
      const r = (await s.getRun(run.id))!;
      expect(r.tags).toEqual(['keep']);
      expect(r.alerts.map((a) => [a.lastStep, a.acknowledged])).toEqual([[4, true]]);
      expect(r.step).toBe(2);
      const listed = (await s.listRuns())[0];
      expect([listed.tags, listed.step]).toEqual([['keep'], 2]);
    }
    expect(JSON.parse(await readFile(join(dir, 'runs.json'), 'utf8')).runs[run.id].tags).toEqual(['keep']);
    // A deletion elsewhere: gone from the list, and an update says so instead of resurrecting it.
    await cli.deleteRun(run.id);
    expect(await app.listRuns()).toEqual([]);
    await expect(app.updateRun(run.id, { name: 'x' })).rejects.toThrow(`no run with id "${run.id}"`);
  });

  it('a catalog change waits for the data directory lock and says who holds it', async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 20000)']);
    try {
      const s = await RunStore.open(dir, { lock: { staleMs: 60_000, timeoutMs: 300 } });
      opened.push(s);
      await writeFile(s.lockFile, JSON.stringify({ pid: child.pid, host: hostname(), at: Date.now(), nonce: 'n' }));
      await expect(s.createRun(base)).rejects.toThrow(`held by process ${child.pid}`);
      expect(await s.listRuns()).toEqual([]);
      // Its holder gone (kill -9), the lock is taken over at once.
      child.kill('SIGKILL');
      await new Promise((r) => child.on('exit', r));
      expect((await s.createRun(base)).id).toBeTruthy();
    } finally {
      child.kill('SIGKILL');
    }
  });
});
