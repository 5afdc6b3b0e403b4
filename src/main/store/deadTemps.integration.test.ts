/**
 * The temps a write makes before its rename — writeFileAtomic's files, a checkpoint's folder, a log import's staging
 * folder — name their writer's pid and its start in ticks since boot (writerTag), and the cleanups judge them by that
 * writer alone. The run store's open (the app's start, any CLI command) removed every hidden `.….tmp` unchanged for a
 * minute: a live checkpoint written for longer (a large model, a loaded disk) lost its folder under it and its rename
 * failed, while a killed writer's temp younger than the minute stayed. A log import's staging folder was judged by its
 * last change against its pid's start in wall-clock time, which a forward step of the clock gets wrong for a live
 * import. The writers here are real processes: killWriter.ts SIGKILLed at a write boundary, stalledWriter.ts stopped
 * inside one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { RunStore } from './runStore';
import { importLogs, STAGING_DIR } from '../imports/importLogs';
import { bundleTestProcess } from '../testing/testProcess';

let work: string;
let killWriter: string;
/** stalledWriter.ts run by tsx in the repository (an import needs the project root beside it: appVersion). */
const STALLED_WRITER = fileURLToPath(new URL('../testing/stalledWriter.ts', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));
let dir: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'arl-dead-temps-'));
  killWriter = await bundleTestProcess(new URL('../testing/killWriter.ts', import.meta.url), join(work, 'killWriter.mjs'));
}, 60_000);
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});
beforeEach(async () => {
  dir = await mkdtemp(join(work, 'case-'));
});
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

const exitOf = (c: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> =>
  new Promise((resolve) => c.once('exit', (code, signal) => resolve({ code, signal })));

/** Every hidden `.….tmp` under `root`, files and folders (not looking inside a temp folder), relative to it. */
async function temps(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true }).catch(() => [])) {
      const p = join(d, e.name);
      if (e.name.startsWith('.') && e.name.endsWith('.tmp')) out.push(relative(root, p));
      else if (e.isDirectory()) await walk(p);
    }
  };
  await walk(root);
  return out.sort();
}

/** A stalled writer (stalledWriter.ts): resolves once it is stopped inside its write, with its stderr so far. */
async function stalled(args: readonly string[]): Promise<{ child: ChildProcess; go: () => Promise<void>; err: () => string }> {
  const goFile = join(dir, 'go');
  const child = spawn(process.execPath, ['--import', 'tsx', STALLED_WRITER, args[0]!, goFile, ...args.slice(1)], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let err = '';
  child.stderr!.on('data', (d) => (err += String(d)));
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += String(d);
      if (out.includes('stalled')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the writer ended before it stalled (exit ${code}): ${err}`)));
  });
  return { child, go: () => writeFile(goFile, ''), err: () => err };
}

it("a writer SIGKILLed before its rename leaves temps that the store's next open removes at once, not a minute later", async () => {
  // the soak writer (a run's appends, record updates, checkpoints) killed before its 3rd checkpoint's rename, and before
  // its 6th atomic write's (a record update's)
  for (const [label, at, left] of [
    ['checkpoint-rename', 3, /^runs\/soak\/checkpoints\/\.step-\d+\.(p\d+(s\d+)?h[0-9a-f]{8}|\d+)\.tmp$/],
    ['atomic-before-rename', 6, /(^|\/)\.[^/]+\.(p\d+(s\d+)?h[0-9a-f]{8}|\d+)-\d+-\d+\.tmp$/],
  ] as const) {
    const data = join(dir, label);
    const c = spawn(process.execPath, [killWriter, data, '12', String(at), label], { stdio: 'ignore' });
    children.push(c);
    expect((await exitOf(c)).signal).toBe('SIGKILL');
    expect(await temps(data), `what the kill at ${label} left`).toEqual([expect.stringMatching(left)]);
    const store = await RunStore.open(data);
    await store.close();
    expect(await temps(data), `seconds after the kill at ${label}, the next open`).toEqual([]);
  }
}, 60_000);

it("a live writer's checkpoint temp unchanged for longer than the age limit stays when another process opens the store, and its checkpoint lands", async () => {
  const data = join(dir, 'data');
  const w = await stalled([data, 'checkpoint']);
  const [tmp] = await temps(data);
  expect(tmp).toMatch(/^runs\/slow\/checkpoints\/\.step-\d+\.(p\d+(s\d+)?h[0-9a-f]{8}|\d+)\.tmp$/);
  // as a checkpoint written for two minutes reads: past the minute the open's cleanup allowed a temp
  const twoMinutesAgo = new Date(Date.now() - 120_000);
  await utimes(join(data, tmp!), twoMinutesAgo, twoMinutesAgo);
  const other = await RunStore.open(data); // the app starting, or any CLI command, beside the writer
  await other.close();
  expect(existsSync(join(data, tmp!)), 'the live writer’s checkpoint folder').toBe(true);
  await w.go();
  expect((await exitOf(w.child)).code, w.err()).toBe(0);
  const after = await RunStore.open(data);
  try {
    expect(await after.checkpointSteps('slow')).toEqual([1]);
  } finally {
    await after.close();
  }
}, 60_000);

it("a live log import's staging folder stays when another import starts after a forward step of the wall clock, and the import lands", async () => {
  const data = join(dir, 'data');
  const slowLog = join(dir, 'slow.log');
  const otherLog = join(dir, 'other.log');
  await writeFile(slowLog, 'step:1 - actor/entropy:0.5 - critic/score/mean:0.1\nstep:2 - actor/entropy:0.4 - critic/score/mean:0.2\n');
  await writeFile(otherLog, 'step:1 - actor/entropy:0.9 - critic/score/mean:0.3\n');
  const w = await stalled([data, 'import', slowLog]);
  const staging = await readdir(join(data, STAGING_DIR));
  expect(staging).toHaveLength(1);
  // as it reads after the clock was set an hour forward: last changed an hour before its importer started
  const anHourBefore = new Date(Date.now() - 3_600_000);
  await utimes(join(data, STAGING_DIR, staging[0]!), anHourBefore, anHourBefore);
  const store = await RunStore.open(data);
  try {
    expect((await importLogs(store, [otherLog])).steps).toBe(1);
    expect(existsSync(join(data, STAGING_DIR, staging[0]!)), 'the live import’s staging folder').toBe(true);
    await w.go();
    expect((await exitOf(w.child)).code, w.err()).toBe(0);
    // the other log's run (1 step) and the stalled import's (2 steps), whole
    expect((await store.listRuns()).map((r) => [r.kind, r.step]).sort()).toEqual([
      ['imported', 1],
      ['imported', 2],
    ]);
  } finally {
    await store.close();
  }
}, 60_000);
