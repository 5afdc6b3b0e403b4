/**
 * Two processes on one data dir: what a second lab (the desktop app's boot — createLab, then lab(), whose recovery
 * marks runs a dead process left as interrupted — or `arlarena serve`), a study's resume and any CLI command do to
 * the runs another live lab holds but has not started yet. Not Electron itself (its binary is absent here): the
 * main-side logic its adapter (src/main/index.ts) calls. The first lab is a real process (testing/queuedLab.ts).
 *
 * A run waiting in a lab's queue, or paused there before its worker started, had no owner file (a run was claimed
 * only when its worker launched), so the second lab's start-up recovery took it for a dead process's and marked it
 * interrupted, and so did a study's resume (markInterrupted), and any CLI command marked the paused one; each could
 * then be resumed in the second process while the first still launched it when its turn came — two processes
 * training one run. A lab now claims a run when it takes it into its queue.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLab } from './lab';
import { syntheticJobs } from '../testing/jobs/index';
import { testCliContext } from '../testing/testContext';
import runs from '../cli/commands/runs';
import stop from '../cli/commands/stop';

const HELPER = fileURLToPath(new URL('../testing/queuedLab.ts', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));

let dir: string;
let child: ChildProcess | null = null;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-second-lab-'));
});
afterAll(async () => {
  child?.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

/** The next JSON line the helper prints. */
function nextLine(c: ChildProcess, err: () => string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (d: Buffer): void => {
      buf += String(d);
      const nl = buf.indexOf('\n');
      if (nl < 0) return;
      c.stdout!.off('data', onData);
      resolve(JSON.parse(buf.slice(0, nl)) as Record<string, unknown>);
    };
    c.stdout!.on('data', onData);
    c.once('exit', (code) => reject(new Error(`the first lab ended (exit ${code}): ${err()}`)));
  });
}

it("a second lab's start, a CLI command and a second resume leave alone the runs another live lab has queued or paused before they started; a stop reaches them", async () => {
  const data = join(dir, 'data');
  const c = spawn(process.execPath, ['--import', 'tsx', HELPER, data], { cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  child = c;
  let err = '';
  c.stderr!.on('data', (d) => (err += String(d)));
  const ids = (await nextLine(c, () => err)) as { running: string; queued: string; paused: string };

  // The second lab, as the desktop app's boot opens it (src/main/index.ts: createLab, then lab()).
  const second = createLab({
    dataDir: data,
    computeInfo: async () => ({ training: 'wasm', rollout: 'tfjs', detail: 'test', available: ['wasm'] }),
    sessions: { ...syntheticJobs(), flushMs: 50 },
  });
  try {
    const { recovered, store, sessions } = await second.lab();
    expect(recovered, 'runs the second lab marked interrupted at its start').toEqual([]);
    const status = async (id: string) => (await store.getRun(id))!.status;
    expect(await status(ids.queued)).toBe('queued');
    expect(await status(ids.paused)).toBe('paused');

    // Any CLI command (arlarena runs marks a dead process's runs interrupted first).
    const cli = testCliContext(data);
    expect(await runs.run([], cli.ctx), cli.err()).toBe(0);
    expect(cli.err()).not.toContain('marked interrupted');
    expect(await status(ids.paused)).toBe('paused');
    // A study's resume marks dead runs with the same rule as a lab's start.
    expect(await store.markInterrupted()).toEqual([]);

    // Neither run can be trained here beside the first lab.
    await expect(sessions.resume(ids.queued)).rejects.toThrow(/in another process/);
    await expect(sessions.resume(ids.paused)).rejects.toThrow(new RegExp(`in another process \\(pid ${c.pid}\\)`));

    // The first lab trains its queued run when its turn comes, once.
    c.stdin!.write('go\n');
    expect(await nextLine(c, () => err)).toEqual({ status: 'completed', step: 3 });
    // With nothing training there, `arlarena stop` of the run paused in it is still taken by that lab (it polled stop
    // requests only while a run trained or waited in its queue: the stop waited out its --wait and failed).
    const stopCli = testCliContext(data);
    expect(await stop.run([ids.paused, '--wait', '10'], stopCli.ctx), stopCli.err() + stopCli.out()).toBe(0);
    expect(await status(ids.paused)).toBe('stopped');
    c.stdin!.write('end\n');
    expect(await nextLine(c, () => err)).toEqual({ paused: 'ended' });
    await new Promise((r) => c.once('exit', r));
    expect(c.exitCode, err).toBe(0);
    expect(await status(ids.queued)).toBe('completed');
  } finally {
    await second.dispose();
  }
}, 120_000);
