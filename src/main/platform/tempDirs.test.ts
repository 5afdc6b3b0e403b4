/**
 * processTempDir (the onnxruntime LLM engine's folder for a model's external weights): a folder a process killed
 * with SIGKILL left is removed when the next folder of its prefix is made; a live process's folder, and a folder of
 * another prefix, stay. Before, each kill left its folder (gigabytes for a model past 2 GiB) in the temp dir for good.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { processTempDir } from './tempDirs';
import { writerTag } from './process';

const HOLDER = fileURLToPath(new URL('../testing/tempDirHolder.mjs', import.meta.url));
let root: string;
const children: ChildProcess[] = [];
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'arl-temp-dirs-'));
});
afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await rm(root, { recursive: true, force: true });
});

/** A process holding a folder of `prefix`: its folder's path. */
async function holder(prefix: string): Promise<{ child: ChildProcess; dir: string }> {
  const child = spawn(process.execPath, [HOLDER, root, prefix], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  return { child, dir: String(line).trim() };
}

it("a killed process's folder is removed when the next one of its prefix is made; a live one's stays", async () => {
  const [killed, live] = await Promise.all([holder('arl-onnx-'), holder('arl-onnx-')]);
  killed.child.kill('SIGKILL');
  await once(killed.child, 'exit');
  const other = join(root, 'someone-else-123-abc');
  await mkdir(other);

  const mine = await processTempDir('arl-onnx-', root);
  expect(existsSync(killed.dir), 'the killed process’s folder').toBe(false);
  expect(existsSync(live.dir)).toBe(true);
  expect(existsSync(other)).toBe(true);
  expect(mine.startsWith(join(root, `arl-onnx-${writerTag()}-`)), mine).toBe(true);
}, 30_000);

// A step of the wall clock (an NTP correction; a VM's clock set forward after its host slept) moves every process's
// start as /proc gives it in wall-clock time, not a folder's last change: a live process's folder, last changed
// soon after it started, then reads as changed before its process started — as a dead predecessor's with that pid —
// and the next process of the prefix removed it, weights and all, under the live engine.
it("a live process's folder stays after a forward step of the wall clock (its last change then dates from before its start)", async () => {
  const live = await holder('arl-step-');
  const before = new Date(Date.now() - 3_600_000); // as the folder reads after the clock was set an hour forward
  await utimes(live.dir, before, before);
  await processTempDir('arl-step-', root);
  expect(existsSync(live.dir), 'the live process’s folder').toBe(true);
}, 30_000);

// The folder names its writer as every temp does (writerTag: pid, start in ticks, host): in a temp dir two hosts share
// (bind-mounted into containers, each with its own pids) a name of pid and start alone was judged by this host's
// processes, and another host's live engine lost its weights under it. Another host's folder is judged by its age.
it("another host's folder is left until unchanged for a day; this host's dead writer's and an older version's go at once", async () => {
  const host = /h([0-9a-f]{8})$/.exec(writerTag())![1]!;
  const elsewhere = host === '00000000' ? '00000001' : '00000000';
  // pid 999999999 is no process here; on another host it may be a live engine's
  const young = join(root, `arl-host-p999999999s1h${elsewhere}-aaaaaa`);
  const old = join(root, `arl-host-p999999999s1h${elsewhere}-bbbbbb`);
  const deadHere = join(root, `arl-host-p999999999s1h${host}-cccccc`);
  const olderVersion = join(root, 'arl-host-999999999-1-dddddd');
  for (const d of [young, old, deadHere, olderVersion]) await mkdir(d);
  const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000);
  await utimes(old, twoDaysAgo, twoDaysAgo);
  await processTempDir('arl-host-', root);
  expect(existsSync(young), 'another host’s folder changed now').toBe(true);
  expect(existsSync(old), 'another host’s folder unchanged for two days').toBe(false);
  expect(existsSync(deadHere), 'a folder of no process here').toBe(false);
  expect(existsSync(olderVersion), 'an older version’s name of no process').toBe(false);
});
