/**
 * The store watch (src/main/app/storeWatch.ts) with many runs: what one poll costs the server or the desktop app
 * every 1.5 s while nothing happens, and how long a change another process makes takes to reach open pages.
 *
 *   npm run bench:store-watch                      table (500 run folders)
 *   npm run bench:store-watch -- --runs 2000 --json
 *
 * A data folder with --runs run folders is made (one real run record, made by the store, copied with other ids
 * and seeds: the config of the default preset, ≈ 90 config values each), then opened by a second store as the
 * app opens its own. Two ways of polling are measured in the same process, alternated:
 *   'list'    every poll lists the runs (RunStore.listRuns: the catalog's stamp and every run.json's, then a
 *             summary per run) — the watch before it compared the store's version;
 *   'version' every poll compares RunStore.changeVersion (two stats) and lists only when it moved, or every
 *             FULL_LIST_EVERY polls.
 * Printed per way: CPU time (user + system) and wall time of one idle poll (median over --polls), and the latency
 * from another store's updateRun of one run to the watch's event at the real period (WATCH_STORE_MS), over
 * --changes changes made at random moments. The load average is printed: on a shared machine wall time includes
 * the wait for a core.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchArgs, usageError } from './args';
import { DEFAULT_CONFIG } from '../src/core/config/index';
import { RunStore } from '../src/main/store/runStore';
import { RUN_FILE } from '../src/main/store/runFiles';
import { FULL_LIST_EVERY, WATCH_STORE_MS, watchStore, type StoreWatch } from '../src/main/app/storeWatch';

const USAGE = `Usage: npm run bench:store-watch -- [--runs N] [--polls N] [--changes N] [--json]
  Makes a data folder of N run folders and measures the app's store watch on it: CPU and wall time of an idle
  poll, listing every poll against comparing the store's version first, and the latency of another process's
  change reaching the watch.
  --runs N     run folders (default 500)
  --polls N    idle polls measured per way (default 40)
  --changes N  changes whose latency is measured per way (default 6)
  --json       one JSON object per line
  --help       this text`;

const opts = benchArgs('store-watch', USAGE, {
  runs: { type: 'string', default: '500' },
  polls: { type: 'string', default: '40' },
  changes: { type: 'string', default: '6' },
  json: { type: 'boolean', default: false },
});
const nRuns = Number(opts.runs);
const nPolls = Number(opts.polls);
const nChanges = Number(opts.changes);
if (!Number.isInteger(nRuns) || nRuns < 1) usageError('store-watch', USAGE, `--runs must be a whole number >= 1, got "${opts.runs}"`);
if (!Number.isInteger(nPolls) || nPolls < 1) usageError('store-watch', USAGE, `--polls must be a whole number >= 1, got "${opts.polls}"`);
if (!Number.isInteger(nChanges) || nChanges < 0)
  usageError('store-watch', USAGE, `--changes must be a whole number >= 0, got "${opts.changes}"`);

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const cpuUs = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

const dir = await mkdtemp(join(tmpdir(), 'arl-bench-watch-'));
try {
  // One record made by the store, then copied: 500 createRun calls would rewrite a growing catalog 500 times.
  const maker = await RunStore.open(dir);
  const first = await maker.createRun({
    preset: 'sampo',
    env: 'sokoban',
    seed: 0,
    config: DEFAULT_CONFIG as unknown as Record<string, unknown>,
    totalSteps: 200,
    status: 'completed',
  });
  await maker.close();
  const template = JSON.parse(await readFile(join(dir, 'runs', first.id, RUN_FILE), 'utf8')) as Record<string, unknown>;
  const t0 = Date.now();
  for (let i = 1; i < nRuns; i++) {
    const id = `${first.id.slice(0, 40)}-b${String(i).padStart(5, '0')}`;
    await cp(join(dir, 'runs', first.id), join(dir, 'runs', id), { recursive: true });
    const config = { ...(template.config as Record<string, unknown>), seed: i };
    await writeFile(join(dir, 'runs', id, RUN_FILE), JSON.stringify({ ...template, id, name: `run ${i}`, seed: i, config }, null, 1));
  }
  // The app's store: opening it reads every run folder once and writes the catalog.
  const app = await RunStore.open(dir);
  const cli = await RunStore.open(dir);
  const made = Date.now() - t0;
  const listed = (await app.listRuns()).length;
  if (listed !== nRuns) throw new Error(`expected ${nRuns} runs listed, got ${listed}`);

  type Way = 'list' | 'version';
  const rows: Record<string, unknown>[] = [];
  const events: { runId: string; at: number }[] = [];
  const watchOf = (way: Way, intervalMs: number): StoreWatch =>
    watchStore({
      list: () => app.listRuns(),
      ...(way === 'version' ? { version: () => app.changeVersion() } : {}),
      emit: (event, payload) => {
        if (event === 'runs.changed') events.push({ runId: (payload as { runId: string }).runId, at: performance.now() });
      },
      own: () => new Set(),
      intervalMs,
    });

  const idle: Record<Way, { cpu: number[]; wall: number[] }> = { list: { cpu: [], wall: [] }, version: { cpu: [], wall: [] } };
  const watches: Record<Way, StoreWatch> = { list: watchOf('list', 3_600_000), version: watchOf('version', 3_600_000) };
  for (const w of Object.values(watches)) await w.poll();
  // Alternated, one poll each, so both see the same machine load.
  for (let i = 0; i < nPolls; i++) {
    for (const way of ['list', 'version'] as Way[]) {
      const c0 = cpuUs();
      const w0 = performance.now();
      await watches[way].poll();
      idle[way].wall.push(performance.now() - w0);
      idle[way].cpu.push(cpuUs() - c0);
    }
  }
  for (const w of Object.values(watches)) w.stop();

  // Latency at the real period: another store changes one run at a random moment of the period.
  const latency: Record<Way, number[]> = { list: [], version: [] };
  const ids = (await app.listRuns()).map((r) => r.id);
  for (const way of ['list', 'version'] as Way[]) {
    const w = watchOf(way, WATCH_STORE_MS);
    await w.poll();
    for (let i = 0; i < nChanges; i++) {
      await new Promise((r) => setTimeout(r, Math.random() * WATCH_STORE_MS));
      const id = ids[(i * 37) % ids.length];
      events.length = 0;
      await cli.updateRun(id, { step: 1000 + i });
      const at = performance.now();
      const deadline = at + 20 * WATCH_STORE_MS;
      while (!events.some((e) => e.runId === id) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      const hit = events.find((e) => e.runId === id);
      latency[way].push(hit ? hit.at - at : NaN);
    }
    w.stop();
  }

  const load = loadavg()[0];
  for (const way of ['list', 'version'] as Way[]) {
    rows.push({
      bench: 'store-watch',
      way,
      runs: nRuns,
      polls: nPolls,
      idlePollCpuMs: +(median(idle[way].cpu) / 1000).toFixed(3),
      idlePollWallMs: +median(idle[way].wall).toFixed(3),
      changes: nChanges,
      latencyMedianMs: +median(latency[way]).toFixed(0),
      latencyMaxMs: latency[way].length ? +Math.max(...latency[way]).toFixed(0) : null,
      periodMs: WATCH_STORE_MS,
      fullListEvery: way === 'version' ? FULL_LIST_EVERY : 1,
      setupMs: made,
      load1: +load.toFixed(2),
    });
  }
  await cli.close();
  await app.close();
  if (opts.json) for (const r of rows) process.stdout.write(`${JSON.stringify(r)}\n`);
  else {
    process.stdout.write(
      `store watch, ${nRuns} run folders, ${nPolls} idle polls and ${nChanges} changes per way, load ${load.toFixed(2)}\n\n`,
    );
    process.stdout.write(
      '| way | idle poll CPU ms (median) | idle poll wall ms (median) | change → event ms (median / max) |\n|---|---|---|---|\n',
    );
    for (const r of rows)
      process.stdout.write(`| ${r.way} | ${r.idlePollCpuMs} | ${r.idlePollWallMs} | ${r.latencyMedianMs} / ${r.latencyMaxMs} |\n`);
    process.stdout.write(
      `\n'version' lists every ${FULL_LIST_EVERY} polls whatever the version says; its median idle poll is the two-stat check.\n`,
    );
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
