/**
 * A session's end, then the next session, as this lab's machines do them: every process is SIGKILLed, and the
 * restarted commands are handed pids from low numbers again, so the command that finds a dead process's files may
 * carry that very pid. Each session here is a fresh pid namespace (unshare: `sh` is its pid 1 and the CLI its pid
 * 2, every time); ending it kills every process in it with SIGKILL. Before the fixes each of these went wrong:
 * a follow started again made a second run and left the first "running" for good; a command waited until the lock
 * the killed one held turned stale (30 s); an import's half-built staging folder stayed on disk for good.
 * Skipped where user and pid namespaces cannot be made (unshare missing, or unprivileged namespaces turned off).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { until } from '../testing/until';
import { CLI, KILL_POINT_CLI, REPO_ROOT, tempDirForFile } from '../testing/cliKill';
import { storedRuns, verlSteps } from '../testing/verlRuns';

/** A session: a new user + pid namespace with its own /proc; when unshare dies its child (the pid 1) gets SIGKILL. */
const UNSHARE = ['-Urpf', '--mount-proc', '--kill-child=SIGKILL', 'sh', '-c', '"$@"; exit $?', 'sh'];

/** The pid a session's first command gets, or null where namespaces cannot be made here. */
const sessionPid = ((): number | null => {
  const r = spawnSync('unshare', [...UNSHARE, process.execPath, '-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return r.status === 0 && /^\d+$/.test(r.stdout) ? Number(r.stdout) : null;
})();

/**
 * The next session starts this long after the last one ended (on the machines: minutes). pidAlive allows 2 s of
 * clock skew between a recorded time and a process's start, and reads the start to the second (/proc/stat's btime),
 * so a process with the dead one's pid started within about 3 s of its record still reads as the dead one.
 */
const NEXT_SESSION_AFTER_MS = 4000;
const nextSession = () => new Promise((r) => setTimeout(r, NEXT_SESSION_AFTER_MS));

const tmp = tempDirForFile('arl-session-end-');

/** Start a session running `node ARGS…`; `ended` resolves with its exit code and output. */
function session(args: readonly string[]): { proc: ChildProcess; ended: Promise<{ code: number | null; out: string }> } {
  const proc = spawn('unshare', [...UNSHARE, process.execPath, ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  tmp.started.push(proc);
  let out = '';
  proc.stdout!.on('data', (d) => (out += String(d)));
  proc.stderr!.on('data', (d) => (out += String(d)));
  return { proc, ended: new Promise((r) => proc.on('close', (code) => r({ code, out }))) };
}

it.runIf(sessionPid !== null)(
  'a follow killed with its session and started again in the next (the same pid) continues its one run',
  async () => {
    const data = join(tmp.path, 'follow');
    const log = join(tmp.path, 'train.log');
    await writeFile(log, verlSteps(1, 5));
    const first = session([CLI, '--data-dir', data, 'follow', log, '--json']);
    await until('the follower stored 5 steps', async () => (await storedRuns(data).catch(() => []))[0]?.steps === 5, 60_000, 100);
    const [{ id }] = await storedRuns(data);
    const owner = JSON.parse(await readFile(join(data, 'runs', id, '.owner'), 'utf8')) as { pid: number };
    expect(owner.pid).toBe(sessionPid);
    first.proc.kill('SIGKILL');
    await first.ended;
    await appendFile(log, verlSteps(6, 8));
    await nextSession();

    const next = await session([CLI, '--data-dir', data, 'follow', log, '--until-idle', '1', '--json']).ended;
    expect(next.code, next.out).toBe(0);
    expect(await storedRuns(data)).toEqual([{ id, status: 'completed', steps: 8 }]);
  },
  120_000,
);

it.runIf(sessionPid !== null)(
  'the catalog lock of a command killed mid-write is taken at once by the next session’s command with its pid',
  async () => {
    const data = join(tmp.path, 'lock');
    const killed = await session([KILL_POINT_CLI, '1', 'atomic-before-rename', '--data-dir', data, 'runs', 'synth', '--steps', '3']).ended;
    expect(killed.code, killed.out).toBe(137);
    const lock = JSON.parse(await readFile(join(data, 'runs.json.lock'), 'utf8')) as { pid: number };
    expect(lock.pid).toBe(sessionPid);
    await nextSession();

    const t0 = Date.now();
    const next = await session([CLI, '--data-dir', data, 'runs', 'synth', '--steps', '3']).ended;
    const took = Date.now() - t0;
    expect(next.code, next.out).toBe(0);
    // The lock turns stale 30 s after it was taken (26 s after this session started); the CLI starts in a few.
    expect(took, next.out).toBeLessThan(15_000);
    expect((await storedRuns(data)).map((r) => r.status)).toContain('completed');
  },
  120_000,
);

it.runIf(sessionPid !== null)(
  "an import killed with its session leaves a staging folder the next session's import (the same pid) removes",
  async () => {
    const data = join(tmp.path, 'import');
    const log = join(tmp.path, 'import.log');
    await writeFile(log, verlSteps(1, 40));
    const killed = await session([KILL_POINT_CLI, '2', 'jsonl-append', '--data-dir', data, 'import', log]).ended;
    expect(killed.code, killed.out).toBe(137);
    const left = await readdir(join(data, '.imports'));
    // named p<pid>s<start>h<host>-<random> (writerTag): the session's pid, its start in ticks since boot, the host
    expect(left.map((n) => Number(/^p(\d+)(?:s\d+)?h[0-9a-f]{8}-/.exec(n)?.[1]))).toEqual([sessionPid]);
    await nextSession();

    const next = await session([CLI, '--data-dir', data, 'import', log, '--json']).ended;
    expect(next.code, next.out).toBe(0);
    expect(existsSync(join(data, '.imports', left[0])), 'the killed import’s staging folder').toBe(false);
    expect(await storedRuns(data)).toEqual([expect.objectContaining({ status: 'completed', steps: 40 })]);
  },
  120_000,
);
