/**
 * A killed lab process stays a zombie until its parent reaps it, and a zombie answers signal 0. Long commands run as
 * orphans (started in the background of a shell that has ended: the studies' ladders have parent pid 1), and where
 * pid 1 is no init (a container whose pid 1 is a shell or the app) orphans are never reaped: a follow or a ladder
 * killed there kept its runs "owned" for good — the next follow of the log made a second run and left the first
 * running, and `arlarena resume` refused a run "running in another process". (The lab's machines' pid 1 reaps about
 * every 2 s.) Here the parent that does not reap is `sh` reading its stdin after starting the follow in the
 * background (dash reaps it at the `wait` after the read, at the test's end); the follow is killed with SIGKILL.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { appendFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { until } from '../testing/until';
import { CLI, REPO_ROOT, tempDirForFile } from '../testing/cliKill';
import { storedRuns, verlSteps } from '../testing/verlRuns';

const tmp = tempDirForFile('arl-zombie-owner-');

it.runIf(existsSync('/proc/self/status'))(
  'a follow killed while its parent never reaps it (a zombie) is continued by the next follow of the log',
  async () => {
    const data = join(tmp.path, 'data');
    const log = join(tmp.path, 'train.log');
    await writeFile(log, verlSteps(1, 5));
    const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    const parent = spawn(
      'sh',
      ['-c', `${[process.execPath, CLI, '--data-dir', data, 'follow', log].map(q).join(' ')} >/dev/null 2>&1 & echo $!; read x; wait`],
      {
        cwd: REPO_ROOT,
        stdio: ['pipe', 'pipe', 'ignore'],
      },
    );
    tmp.started.push(parent);
    const [line] = (await once(parent.stdout!, 'data')) as [Buffer];
    const pid = Number(String(line).trim());
    await until('the follower stored 5 steps', async () => (await storedRuns(data).catch(() => []))[0]?.steps === 5, 60_000, 100);
    process.kill(pid, 'SIGKILL');
    await until('the killed follower to be a zombie', () => /^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8')), 5000);
    const [{ id }] = await storedRuns(data);
    await appendFile(log, verlSteps(6, 8));

    const next = spawn(process.execPath, [CLI, '--data-dir', data, 'follow', log, '--until-idle', '1', '--json'], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    tmp.started.push(next);
    let err = '';
    next.stderr!.on('data', (d) => (err += String(d)));
    const [code] = (await once(next, 'close')) as [number | null];
    expect(code, err).toBe(0);
    expect(await storedRuns(data)).toEqual([{ id, status: 'completed', steps: 8 }]);
    parent.stdin!.end();
    await once(parent, 'close');
  },
  120_000,
);
