/**
 * A followed log made unreadable for a moment (`chmod 000`, then back) is retried: following resumes once it is
 * readable and the run goes on (hardening round three: EACCES failed the run, and following did not resume).
 * Unreadable for longer than goneMs, the run ends stopped with the reason, keeping its steps. The follower runs
 * in a helper process as user nobody (root reads through chmod 000); skipped, saying why, where setpriv cannot
 * drop to that user.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { appendFile, chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleTestProcess } from '../testing/testProcess';
import { until as untilWithin } from '../testing/until';
import { verlSteps } from '../testing/verlRuns';

const until = (what: string, cond: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> => untilWithin(what, cond, ms, 25);

const NOBODY = 65534;
const probe = spawnSync('setpriv', ['--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups', 'true'], { encoding: 'utf8' });
const canDrop = probe.status === 0 && process.getuid?.() === 0;
if (!canDrop)
  console.warn(
    `followDenied.integration: SKIPPED — needs root and setpriv to run the follower as nobody (${probe.error?.message ?? probe.stderr?.trim() ?? `uid ${process.getuid?.()}`})`,
  );

let dir: string;
let helper: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-follow-denied-'));
  await chmod(dir, 0o777);
  // The bundled helper finds the app's version the way the app does: a package.json named arlarena-lab above it.
  await mkdir(join(dir, 'app'));
  await writeFile(join(dir, 'app', 'package.json'), JSON.stringify({ name: 'arlarena-lab', version: '0.0.0-test' }));
  helper = await bundleTestProcess(new URL('../testing/followWhileDenied.ts', import.meta.url), join(dir, 'app', 'followWhileDenied.mjs'));
  await chmod(join(dir, 'app'), 0o755);
  await chmod(helper, 0o644);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function start(
  name: string,
  goneMs: number,
): {
  child: ChildProcessWithoutNullStreams;
  steps: () => number;
  done: Promise<{ status: string; error: string | null; steps: number }>;
  log: string;
} {
  const log = join(dir, `${name}.log`);
  const data = join(dir, `data-${name}`);
  const child = spawn(
    'setpriv',
    ['--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups', process.execPath, helper, data, log, String(goneMs)],
    { cwd: dir },
  );
  let steps = 0;
  let buf = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const done = new Promise<{ status: string; error: string | null; steps: number }>((resolve, reject) => {
    child.stdout.on('data', (d) => {
      buf += d;
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const m = JSON.parse(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        if (typeof m.steps === 'number') steps = m.steps;
        if (m.done) resolve(m.done);
      }
    });
    child.on('exit', (code) => reject(new Error(`helper exited ${code} before reporting: ${err}`)));
  });
  return { child, steps: () => steps, done, log };
}

describe.skipIf(!canDrop)('a followed log the follower may not read', () => {
  it('a brief chmod 000 is retried: following resumes and the run completes with every step', async () => {
    const log = join(dir, 'brief.log');
    await writeFile(log, verlSteps(1, 5), { mode: 0o644 });
    const h = start('brief', 5000);
    await until('5 steps', () => h.steps() === 5);
    await chmod(log, 0o000);
    await appendFile(log, verlSteps(6, 8));
    await new Promise((r) => setTimeout(r, 600));
    await chmod(log, 0o644);
    await until('8 steps after the file was readable again', () => h.steps() === 8);
    h.child.stdin.write('stop\n');
    expect(await h.done).toEqual({ status: 'completed', error: null, steps: 8 });
  }, 60_000);

  it('unreadable past goneMs: stopped with the reason, steps kept', async () => {
    const log = join(dir, 'long.log');
    await writeFile(log, verlSteps(1, 4), { mode: 0o644 });
    const h = start('long', 500);
    await until('4 steps', () => h.steps() === 4);
    await chmod(log, 0o000);
    // It grows while unreadable: the follower tries to read it and is denied.
    await appendFile(log, verlSteps(5, 6));
    const done = await h.done;
    expect(done.status).toBe('stopped');
    expect(done.error).toMatch(
      /long\.log could not be read for 1 s \(EACCES: permission denied\); the 4 step\(s\) read until then are kept/,
    );
    expect(done.steps).toBe(4);
  }, 60_000);
});
