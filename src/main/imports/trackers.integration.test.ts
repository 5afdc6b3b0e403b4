/**
 * The trackers' own Python writers (tests/peers/trackers_peer.py in the `trackers` venv: wandb 0.31 offline,
 * mlflow-skinny 3.18 with both stores, trackio 0.43) write the inputs; the lab reads them back value for value.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { venvPython } from '../../../tests/support/peers';
import { TRACKERS_PEER, startSlowWriter } from '../../../tests/support/trackersPeer';
import type { SourceStep } from '../../core/formats/types';
import { SKIP_BAD_CRC, SKIP_TORN } from '../../core/formats/wandbLog';
import { RunStore } from '../store/runStore';
import { importTrackerRuns } from './importTrackers';
import { importLogs } from './importLogs';
import { LogFollower } from './follow';
import { TrackerDbFollower } from './followTrackers';
import { scanTrackers, type TrackerRun } from './trackers';
import { testCliContext } from '../testing/testContext';
import importCommand from '../cli/commands/import';
import exportCommand from '../cli/commands/export';
import followCommand from '../cli/commands/follow';
import { openHandlerTestLab } from '../testing/testLab';
import { createImportsHandlers } from '../api/handlers/imports';
import { createRunsHandlers } from '../api/handlers/runs';

type Expected = Record<
  string,
  Record<
    string,
    {
      name: string;
      steps: Record<string, Record<string, number | string>>;
      config?: unknown;
      state?: string;
      group?: string;
      tags?: string[];
      params?: Record<string, string>;
    }
  >
>;

let dir: string;
let expected: Expected;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'arl-trackers-'));
  execFileSync(venvPython('trackers'), [TRACKERS_PEER, 'write', dir], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 170_000 });
  expected = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')) as Expected;
}, 180_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function num(v: number | string): number {
  return v === 'NaN'
    ? Number.NaN
    : v === 'Infinity'
      ? Number.POSITIVE_INFINITY
      : v === '-Infinity'
        ? Number.NEGATIVE_INFINITY
        : (v as number);
}

async function readSteps(
  run: TrackerRun,
): Promise<{ steps: SourceStep[]; meta: Awaited<ReturnType<TrackerRun['read']>>['meta']; skipped: Record<string, number> }> {
  const steps: SourceStep[] = [];
  const r = await run.read({ add: (s) => steps.push(s), afterChunk: async () => undefined });
  return { steps, ...r };
}

/** Every logged value is there at its step, with NaN and ±inf kept. */
function expectValues(
  steps: readonly SourceStep[],
  want: Record<string, Record<string, number | string>>,
  opts: { prefixOnly?: boolean } = {},
): void {
  const byStep = new Map(steps.map((s) => [s.step, s.values]));
  const wantSteps = Object.keys(want)
    .map(Number)
    .sort((a, b) => a - b);
  if (opts.prefixOnly) {
    expect(steps.length).toBeGreaterThan(0);
    expect(steps.map((s) => s.step)).toEqual(wantSteps.slice(0, steps.length));
  } else expect(steps.map((s) => s.step)).toEqual(wantSteps);
  for (const s of steps) {
    for (const [k, v] of Object.entries(want[String(s.step)])) {
      const got = byStep.get(s.step)?.[k];
      expect(got, `step ${s.step} ${k}`).toBeDefined();
      if (Number.isNaN(num(v))) expect(got).toBeNaN();
      else expect(got).toBe(num(v));
    }
  }
}

describe('W&B offline run folder (wandb 0.31 wandb-core writer)', () => {
  it('finds one run per W&B run id (a resumed run is one run over its two files) with its steps, values, config and end', async () => {
    const scan = await scanTrackers(join(dir, 'wandb'));
    const runs = scan.runs.filter((r) => r.format === 'wandb');
    expect(runs.map((r) => r.info.id).sort()).toEqual(Object.keys(expected.wandb).sort());
    for (const run of runs) {
      const want = expected.wandb[run.info.id];
      const { steps, meta, skipped } = await readSteps(run);
      // The crashed process died before W&B wrote its last rows; what is there must be the logged prefix.
      expectValues(steps, want.steps, { prefixOnly: want.state === 'crashed' });
      // A killed writer may leave half a record at the end: counted, never an error.
      if (want.state === 'crashed') expect(Object.keys(skipped).every((k) => k === SKIP_TORN)).toBe(true);
      else expect(skipped).toEqual({});
      expect(meta.config).toEqual(want.config);
      expect(meta.run).toMatchObject({
        tracker: 'wandb',
        id: run.info.id,
        name: want.name,
        project: 'arl-peer',
        group: want.group,
        state: want.state,
      });
      if ((want.tags ?? []).length > 0) expect(meta.run?.tags).toEqual(want.tags);
    }
    const resumed = runs.find((r) => r.info.id === 'peerres3')!;
    expect(resumed.files.length).toBe(2);
  });

  it('imports the folder as lab runs: names, tags, true step counts, mapped values, config', async () => {
    const store = await RunStore.open(join(dir, 'store-wandb'));
    try {
      const scan = await scanTrackers(join(dir, 'wandb'));
      const out = await importTrackerRuns(store, scan.runs);
      expect(out.trackers).toEqual({ wandb: 4 });
      const recs = await Promise.all(out.runIds.map((id) => store.getRun(id)));
      const fin = recs.find((r) => r?.name === 'finished')!;
      expect(fin.tags).toEqual(expect.arrayContaining(['wandb', 'project:arl-peer', 'group:sweep-a', 'grpo', 'peer']));
      expect(fin.step).toBe(11);
      expect(fin.preset).toBe('grpo');
      expect(fin.env).toBe('gsm8k');
      const rows = await store.readMetrics(fin.id);
      expect(rows.length).toBe(12);
      // verl's critic/score/mean is the catalog's episode/score_mean; val-core/…/mean@1 its val/score_mean.
      expect(rows[2].values['episode/score_mean']).toBe(0.14);
      expect(rows[2].values['val/score_mean']).toBe(0.27);
      expect(rows[3].values['actor/grad_norm']).toBeNaN();
      expect(rows[4].values['actor/grad_norm']).toBe(Number.POSITIVE_INFINITY);
      const crashed = recs.find((r) => r?.name === 'crashed')!;
      expect(crashed.tags).toContain('crashed');
      const resumed = recs.find((r) => r?.name === 'resumed')!;
      expect((await store.readMetrics(resumed.id)).map((m) => m.step)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    } finally {
      await store.close();
    }
  });
});

describe('a damaged .wandb file (a real one with a flipped byte and a cut tail)', () => {
  it('skips and counts the bad block and the torn tail, imports the rest', async () => {
    const fin = (await scanTrackers(join(dir, 'wandb'))).runs.find((r) => r.info.id === 'peercrs2')!;
    const bytes = new Uint8Array(readFileSync(fin.files[0]));
    expect(bytes.length).toBeGreaterThan(3 * 32_768);
    bytes[32_768 + 500] ^= 0x5a; // inside block 1
    const p = join(dir, 'damaged.wandb');
    writeFileSync(p, bytes.subarray(0, bytes.length - 100));
    const scan = await scanTrackers(p);
    expect(scan.runs.length).toBe(1);
    const { steps, skipped } = await readSteps(scan.runs[0]);
    expect(skipped[SKIP_BAD_CRC]).toBe(1);
    expect(skipped[SKIP_TORN]).toBe(1);
    const all = await readSteps((await scanTrackers(fin.files[0])).runs[0]);
    // Block 1's rows are lost, the rows before and after it are read, each with the values it had.
    expect(steps.length).toBeLessThan(all.steps.length);
    expect(steps.length).toBeGreaterThan(all.steps.length / 2);
    const byStep = new Map(all.steps.map((s) => [s.step, s.values]));
    for (const s of steps) expect(s.values).toEqual(byStep.get(s.step));
  });
});

describe('a single .wandb file through the log importer (what an upload in the app takes)', () => {
  it('is detected by content and imported as one run with all its steps', async () => {
    const store = await RunStore.open(join(dir, 'store-one'));
    try {
      const fin = (await scanTrackers(join(dir, 'wandb'))).runs.find((r) => r.info.id === 'peerfin1')!;
      const r = await importLogs(store, [fin.files[0]]);
      expect(r.format).toBe('wandb');
      expect(r.steps).toBe(12);
      expect((await store.readMetrics(r.runIds[0]))[4].values['actor/grad_norm']).toBe(Number.POSITIVE_INFINITY);
    } finally {
      await store.close();
    }
  });
});

describe('live follow of a growing .wandb file', () => {
  it("the crashed run's file arriving in pieces cut mid-record and mid-block: the same records as a one-shot import", async () => {
    const store = await RunStore.open(join(dir, 'store-follow'));
    try {
      const crashed = (await scanTrackers(join(dir, 'wandb'))).runs.find((r) => r.info.id === 'peercrs2')!;
      const bytes = readFileSync(crashed.files[0]);
      const p = join(dir, 'growing.wandb');
      writeFileSync(p, bytes.subarray(0, 5));
      const f = await LogFollower.start(store, p, { pollMs: 40 });
      const cuts = [5, 7, 1000, 32_768 + 3, 70_001, Math.floor(bytes.length / 2), bytes.length - 9, bytes.length];
      for (let i = 1; i < cuts.length; i++) {
        appendFileSync(p, bytes.subarray(cuts[i - 1], cuts[i]));
        await new Promise((r) => setTimeout(r, 120));
      }
      const t0 = Date.now();
      const want = (await importLogs(store, [crashed.files[0]])).runIds[0];
      const wantRows = await store.readMetrics(want);
      while ((await store.readMetrics(f.runId)).length < wantRows.length && Date.now() - t0 < 15_000)
        await new Promise((r) => setTimeout(r, 40));
      const info = await f.stop();
      expect(info).toMatchObject({ format: 'wandb', steps: wantRows.length });
      expect(await store.readMetrics(f.runId)).toEqual(wantRows);
    } finally {
      await store.close();
    }
  }, 30_000);
});

describe('MLflow stores (mlflow-skinny 3.18)', () => {
  for (const [tag, sub] of [
    ['mlflow-file', 'mlruns'],
    ['mlflow-sqlite', 'mlflow.db'],
  ] as const) {
    it(`${tag}: one run per MLflow run, experiment and run names kept, "_at_" back to "@", NaN and ±inf kept, params as config`, async () => {
      const scan = await scanTrackers(join(dir, sub));
      const runs = scan.runs.filter((r) => r.format === tag);
      expect(runs.map((r) => r.info.id).sort()).toEqual(Object.keys(expected[tag]).sort());
      for (const run of runs) {
        const want = expected[tag][run.info.id];
        expect(run.label).toBe(want.name);
        const { steps, meta } = await readSteps(run);
        expectValues(steps, want.steps);
        expect(meta.run).toMatchObject({ tracker: 'mlflow', name: want.name, state: 'finished' });
        const cfg = meta.config as {
          actor_rollout_ref: { actor: { clip_ratio: number; use_kl_loss: boolean } };
          algorithm: { adv_estimator: string };
        };
        expect(cfg.algorithm.adv_estimator).toBe('grpo');
        expect(cfg.actor_rollout_ref.actor.clip_ratio).toBe(0.2);
        expect(cfg.actor_rollout_ref.actor.use_kl_loss).toBe(true);
      }
    });
  }
});

describe('Trackio (trackio 0.43)', () => {
  for (const sub of ['trackio', 'trackio-old']) {
    it(`${sub}: runs, steps, "NaN" strings, config${sub === 'trackio-old' ? ' (schema without run_id)' : ''}`, async () => {
      const scan = await scanTrackers(join(dir, sub));
      const runs = scan.runs.filter((r) => r.format === 'trackio');
      expect(runs.map((r) => r.label)).toEqual(['tr-a', 'tr-b']);
      for (const run of runs) {
        const { steps, meta } = await readSteps(run);
        expectValues(steps, expected.trackio[run.label].steps);
        expect(meta.config).toMatchObject({ algo: 'grpo', nested: { n: 5 } });
      }
    });
  }
});

describe('arlarena import / export over the trackers (the CLI commands)', () => {
  it('imports every tracker source by content, says how many runs of which tracker, refuses a second import, exports to W&B and MLflow', async () => {
    const data = join(dir, 'cli-data');
    const a = testCliContext(data);
    const paths = ['wandb', 'mlruns', 'mlflow.db', join('trackio', 'arl-peer.db'), join('swift', 'logging.jsonl')].map((p) => join(dir, p));
    expect(await importCommand.run([...paths, '--json'], a.ctx)).toBe(0);
    const r = JSON.parse(a.out().trim()) as { runIds: string[]; trackers: Record<string, number>; format: string; steps: number };
    expect(r.trackers).toEqual({ wandb: 4, 'mlflow-file': 3, 'mlflow-sqlite': 3, trackio: 2 });
    expect(r.runIds.length).toBe(4 + 3 + 3 + 2 + 1);
    expect(r.format.split(',')).toContain('jsonl');
    const b = testCliContext(data);
    expect(await importCommand.run([join(dir, 'mlflow.db')], b.ctx)).toBe(1);
    expect(b.err()).toMatch(/already imported/);
    const store = await RunStore.open(data);
    let swiftId = '';
    try {
      for (const id of r.runIds) {
        const rec = await store.getRun(id);
        if (rec?.source?.framework === 'ms-swift') swiftId = id;
      }
    } finally {
      await store.close();
    }
    expect(swiftId).not.toBe('');
    const d = testCliContext(join(dir, 'cli-follow'));
    expect(await followCommand.run([join(dir, 'mlflow.db'), '--until-idle', '0.5', '--poll-ms', '100', '--json'], d.ctx)).toBe(0);
    const events = d
      .out()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { event: string; runIds?: string[]; format?: string });
    expect(events[0]).toMatchObject({ event: 'started', format: 'mlflow-sqlite' });
    expect(events.at(-1)).toMatchObject({ event: 'stopped', steps: 24 });
    // The detector's alerts on the followed runs (the peer's planted NaN / ±inf), printed as raised.
    expect(events.slice(1, -1).length).toBeGreaterThan(0);
    expect(events.slice(1, -1).every((e) => e.event === 'alert')).toBe(true);
    expect(events.at(-1)?.runIds?.length).toBe(3);
    // Each followed MLflow run carries its params as its config, as the same run imported does (verl's config).
    const followedStore = await RunStore.open(join(dir, 'cli-follow'));
    const importedStore = await RunStore.open(data);
    try {
      const importedSqlite = [];
      for (const id of r.runIds) {
        const rec = (await importedStore.getRun(id))!;
        if (rec.source?.format === 'mlflow-sqlite') importedSqlite.push(rec);
      }
      for (const id of events.at(-1)!.runIds!) {
        const rec = (await followedStore.getRun(id))!;
        const twin = importedSqlite.find((x) => x.name === rec.name)!;
        expect(rec.config).toEqual(twin.config);
        expect(JSON.stringify(rec.config)).toContain('adv_estimator');
      }
    } finally {
      await followedStore.close();
      await importedStore.close();
    }
    for (const format of ['wandb', 'mlflow']) {
      const c = testCliContext(data);
      expect(await exportCommand.run([r.runIds[0], '--format', format, '--out', join(dir, `cli-${format}`), '--json'], c.ctx)).toBe(0);
      expect(JSON.parse(c.out().trim())).toMatchObject({ format, steps: expect.any(Number) });
    }
  }, 60_000);
});

describe('live follow of tracker databases gaining rows (read-only polling)', () => {
  for (const kind of ['mlflow', 'trackio'] as const) {
    it(`${kind}: a run written step by step while followed ends as the run a one-shot import of the final database makes`, async () => {
      const { exited, dbPath } = await startSlowWriter(dir, kind, 12, 0.4);
      const store = await RunStore.open(join(dir, `store-live-${kind}`));
      try {
        // Trackio writes from a background thread: its database appears a moment after the first log call.
        let f: TrackerDbFollower | null = null;
        for (let t0 = Date.now(); f === null; await new Promise((r) => setTimeout(r, 50))) {
          try {
            if (existsSync(dbPath)) f = await TrackerDbFollower.start(store, dbPath, { pollMs: 100 });
          } catch (e) {
            if (Date.now() - t0 > 15_000) throw e;
          }
          if (f === null && Date.now() - t0 > 15_000) throw new Error(`${dbPath} did not appear`);
        }
        // Steps show while the writer is still writing, not only when following stops.
        let done = false;
        void exited.then(() => (done = true));
        let seen = 0;
        while (!done && seen === 0) {
          const id = Object.values(f.info.runs)[0];
          if (id) seen = (await store.readMetrics(id)).length;
          await new Promise((r) => setTimeout(r, 50));
        }
        expect(seen).toBeGreaterThan(0);
        expect(await exited).toBe(0);
        const info = await f.stop();
        const ids = Object.values(info.runs);
        expect(ids.length).toBe(1);
        const followed = await store.readMetrics(ids[0]!);
        const oneShot = await importTrackerRuns(store, (await scanTrackers(dbPath)).runs);
        const full = await store.readMetrics(oneShot.runIds[0]);
        expect(full.length).toBe(12);
        expect(followed.map((r) => r.step)).toEqual(full.map((r) => r.step));
        expect(followed).toEqual(full);
        const rec = (await store.getRun(ids[0]!))!;
        expect(rec).toMatchObject({ status: 'completed', name: 'live', source: { following: false } });
        // The detector ran on the followed steps as on a lab run: the writer's planted NaN grad norm (step 3) is
        // an alert of the followed run, and its alerts are the one-shot import's.
        const brief = (r: typeof rec) => r.alerts.map((a) => `${a.rule} ${a.metric} ${a.firstStep}`).sort();
        expect(brief(rec).some((a) => /grad_norm 3$/.test(a))).toBe(true);
        expect(brief(rec)).toEqual(brief((await store.getRun(oneShot.runIds[0]))!));
      } finally {
        await store.close();
      }
    }, 90_000);
  }
});

describe('the API import paths (imports.file upload, imports.path)', () => {
  it('an uploaded Trackio / MLflow database and a W&B folder by path import as the tracker runs, with per-tracker counts', async () => {
    const lab = await openHandlerTestLab('arl-trackers-api-', (s) => ({ ...createImportsHandlers(s), ...createRunsHandlers(s) }), {
      transport: 'browser',
      publishDownload: null,
      importRoots: [tmpdir()],
    });
    try {
      const up = await lab.call('imports.file', {
        fileName: 'arl-peer.db',
        dataBase64: readFileSync(join(dir, 'trackio', 'arl-peer.db')).toString('base64'),
      });
      if (!up.ok) throw new Error(up.error.message);
      expect(up.value.trackers).toEqual({ trackio: 2 });
      const rec = await lab.call('runs.get', { runId: up.value.runIds[0] });
      if (!rec.ok) throw new Error(rec.error.message);
      expect(rec.value.name).toBe('tr-a');
      expect(rec.value.source?.paths).toEqual(['arl-peer.db']);
      expect(rec.value.source?.notes.join(' ')).toContain('Trackio project arl-peer');
      const ml = await lab.call('imports.file', {
        fileName: 'mlflow.db',
        dataBase64: readFileSync(join(dir, 'mlflow.db')).toString('base64'),
      });
      if (!ml.ok) throw new Error(ml.error.message);
      expect(ml.value.trackers).toEqual({ 'mlflow-sqlite': 3 });
      const wb = await lab.call('imports.path', { path: join(dir, 'wandb') });
      if (!wb.ok) throw new Error(wb.error.message);
      expect(wb.value.trackers).toEqual({ wandb: 4 });
    } finally {
      await lab.close();
    }
  }, 60_000);
});
