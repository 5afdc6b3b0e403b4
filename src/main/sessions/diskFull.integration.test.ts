/**
 * A full disk under the data folder (a small tmpfs; we run as root in CI — where mounting is not allowed the
 * tests are skipped with the reason printed). Hardening round three: `train` hung for ever after
 * `[sessions] <id>: ENOSPC … write`; `runs` and `import` died with a stack trace; a failed import's half run stayed.
 *   - train fails with exit 1 within its time, naming the full data folder; resume while the disk is still full
 *     says so (the record it could not update read "running in another process") and that there is no checkpoint;
 *   - on a disk with no byte free, `runs` and `show` still read (a one-line warning, no stack), `import` fails with
 *     one line naming the folder and leaves nothing behind; once space is freed, the same import works;
 *   - with no byte free, `runs delete` deletes a run, freeing its space (it failed taking the lock, whose content
 *     is written to a temp file first).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { open, readdir, rm, statfs, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const mnt = mkdtempSync(join(tmpdir(), 'arl-diskfull-'));
const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mnt], { encoding: 'utf8' });
const canMount = mounted.status === 0;
if (!canMount)
  console.warn(
    `diskFull.integration: SKIPPED — cannot mount a 4 MB tmpfs here (${(mounted.stderr || mounted.error?.message || 'mount failed').trim()}); these tests need root or CAP_SYS_ADMIN`,
  );

const data = join(mnt, 'data');
const cli = (args: string[], timeout = 60_000) =>
  spawnSync(process.execPath, [join(ROOT, 'bin', 'arlarena.mjs'), '--data-dir', data, ...args], { cwd: ROOT, encoding: 'utf8', timeout });

/** Write zeros into `path` until the disk refuses (or `bytes` are written). */
async function fill(path: string, bytes = Number.POSITIVE_INFINITY): Promise<void> {
  const fh = await open(path, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  let n = 0;
  try {
    while (n < bytes) {
      const len = Math.min(chunk.length, bytes - n);
      await fh.write(chunk, 0, len);
      n += len;
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
    // Byte-sized writes take what the last chunk left.
    try {
      for (;;) await fh.write(Buffer.alloc(1));
    } catch {
      // full
    }
  } finally {
    await fh.close().catch(() => undefined);
  }
}

afterAll(() => {
  if (canMount) spawnSync('umount', [mnt]);
  rmSync(mnt, { recursive: true, force: true });
});

describe.skipIf(!canMount)('a full disk under the data folder', () => {
  beforeAll(async () => {
    // About 1.9 MB left: the run record and the first steps fit, its trajectories and checkpoint do not.
    await fill(join(mnt, 'filler'), 2_100_000);
  });

  it('train fails with exit 1 naming the full data folder (it hung before)', () => {
    const t0 = Date.now();
    const r = cli(['train', '--steps', '3', '--model', 'nano'], 240_000);
    expect(r.error, 'train did not finish within 240 s').toBeUndefined();
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`the disk holding the data folder ${data} is full`);
    expect(r.stderr).not.toMatch(/^\s+at /m);
    console.log(`train on a full disk: exit ${r.status} after ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }, 250_000);

  it('resume while the disk is still full says so, not "running in another process"; the run has no checkpoint', async () => {
    // The failed train could not write its end into run.json (no room), so the record reads running. The temps its
    // failed writes left hold room, and the next command removes them at once (their writer is gone: its name says
    // so), so it may mark the run interrupted; where they held too little, the record still reads running.
    const trained = cli(['runs', '--json'])
      .stdout.trim()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { id: string; preset: string; status: string })
      .find((r) => r.preset === 'sampo');
    expect(trained).toBeDefined();
    expect(['running', 'interrupted']).toContain(trained!.status);
    await fill(join(mnt, 'filler-resume'));
    try {
      const r = cli(['resume', trained!.id]);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(`the disk holding the data folder ${data} is full`);
      // still running: the resume says what is in the way and that there is nothing to resume from; interrupted: the
      // record already says that ('gone before its first checkpoint'), and the resume stops at its first write
      if (trained!.status === 'running') expect(r.stderr).toContain('it has no checkpoint');
      else expect(cli(['show', trained!.id]).stdout).toContain('before its first checkpoint');
      expect(r.stderr).not.toContain('in another process');
      expect(r.stderr).not.toMatch(/^\s+at /m);
    } finally {
      await rm(join(mnt, 'filler-resume'), { force: true });
    }
  }, 120_000);

  it('with no byte free: runs and show read, import fails in one line and leaves nothing; after freeing space it imports', async () => {
    const lines = (out: string) =>
      out
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('{'));
    // A run to read, whatever the test above left.
    await rm(join(mnt, 'filler'));
    expect(cli(['runs', 'synth', '--steps', '20']).status).toBe(0);
    const before = lines(cli(['runs', '--json']).stdout).length;
    await fill(join(mnt, 'filler'));
    const runs = cli(['runs', '--json']);
    expect(runs.stderr).not.toMatch(/^\s+at /m);
    expect(runs.status).toBe(0);
    const listed = lines(runs.stdout).map((l) => JSON.parse(l) as { id: string });
    expect(listed.length).toBe(before);
    const show = cli(['show', listed[0].id]);
    expect(show.stderr).not.toMatch(/^\s+at /m);
    expect(show.status).toBe(0);
    const log = join(tmpdir(), `arl-diskfull-${process.pid}.log`);
    let text = '';
    for (let i = 1; i <= 2000; i++) text += `step:${i} - actor/entropy:0.5 - critic/score/mean:0.${i % 10}\n`;
    await writeFile(log, text);
    try {
      const imp = cli(['import', log]);
      expect(imp.status).toBe(1);
      expect(imp.stderr).toContain(`the disk holding the data folder ${data} is full`);
      expect(imp.stderr).not.toMatch(/^\s+at /m);
      expect(await readdir(join(data, '.imports')).catch(() => [])).toEqual([]);
      expect(lines(cli(['runs', '--json']).stdout)).toHaveLength(before);
      await rm(join(mnt, 'filler'));
      const again = cli(['import', log, '--json']);
      expect(again.status).toBe(0);
      expect(JSON.parse(again.stdout).steps).toBe(2000);
    } finally {
      await rm(log, { force: true });
    }
  }, 120_000);

  it('with no byte free, runs delete deletes a run and so frees its space (the lock it takes wrote a temp file)', async () => {
    await rm(join(mnt, 'filler'), { force: true });
    const synth = cli(['runs', 'synth', '--steps', '200', '--name', 'to-free']);
    expect(synth.status).toBe(0);
    const id = /run (\S+)/.exec(synth.stdout)![1];
    await fill(join(mnt, 'filler'));
    const del = cli(['runs', 'delete', id]);
    expect(del.stderr).not.toMatch(/^\s+at /m);
    expect(del.status, del.stderr).toBe(0);
    expect(await readdir(join(data, 'runs'))).not.toContain(id);
    const ids = cli(['runs', '--json'])
      .stdout.trim()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => (JSON.parse(l) as { id: string }).id);
    expect(ids).not.toContain(id);
    const fs = await statfs(mnt);
    expect(fs.bavail * fs.bsize).toBeGreaterThan(0);
    // The lock is released (not left empty for the next process to wait out).
    expect(await readdir(data)).not.toContain('runs.json.lock');
  }, 120_000);
});
