/**
 * A log the lab may not read: `arlarena import` says so in one line (exit 1, no stack trace) and creates nothing.
 * The tests run as root, which reads through `chmod 000`, so the real CLI is run as user nobody (setpriv drops the
 * uid, gid and groups) and the permission error really happens. Skipped, saying why, only where privileges cannot
 * be dropped (not root, or no setpriv).
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunStore } from '../store/runStore';

const NOBODY = 65534;
const ROOT = resolve(import.meta.dirname, '..', '..', '..');
const probe = spawnSync('setpriv', ['--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups', 'true'], { encoding: 'utf8' });
const canDrop = probe.status === 0 && process.getuid?.() === 0;
if (!canDrop)
  console.warn(
    `importDenied.integration: SKIPPED — needs root and setpriv to run the CLI as nobody (${probe.error?.message ?? (probe.stderr?.trim() || `uid ${process.getuid?.()}`)})`,
  );

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-import-denied-'));
  // nobody writes its data folder (and tsx's cache, HOME) here.
  await chmod(dir, 0o777);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const verl = Array.from({ length: 6 }, (_, i) => `step:${i + 1} - actor/entropy:0.5 - critic/score/mean:0.${i}`).join('\n') + '\n';

/** `arlarena --data-dir D import PATH` as user nobody: its exit code and output. */
function importAsNobody(path: string, dataDir: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(
      'setpriv',
      [
        '--reuid',
        String(NOBODY),
        '--regid',
        String(NOBODY),
        '--clear-groups',
        process.execPath,
        join(ROOT, 'bin', 'arlarena.mjs'),
        '--data-dir',
        dataDir,
        'import',
        path,
      ],
      { cwd: dir, env: { ...process.env, HOME: dir, TMPDIR: dir } },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', fail);
    child.on('exit', (code) => done({ code, stdout, stderr }));
  });
}

async function runsIn(dataDir: string): Promise<number> {
  const store = await RunStore.open(dataDir);
  try {
    return (await store.listRuns()).length;
  } finally {
    await store.close();
  }
}

describe.skipIf(!canDrop)('importing a log the lab may not read (the CLI runs as nobody)', () => {
  it('a file with mode 000: one line naming it and why, exit 1, no run', async () => {
    const log = join(dir, 'locked.log');
    await writeFile(log, verl);
    await chmod(log, 0o000);
    const data = join(dir, 'data-file');
    const r = await importAsNobody(log, data);
    expect(r.stderr).toBe(`arlarena import: refused: ${log}: permission denied (the lab runs as a user that may not read it)\n`);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    // The same file readable again imports (the refusal was the permission, not the content), and it is the data
    // folder's only run: the refusal left none behind.
    await chmod(log, 0o644);
    const ok = await importAsNobody(log, data);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^imported ".*" as run \S+: steps 1–6/);
    expect(await runsIn(data)).toBe(1);
  }, 120_000);

  it('a file in a folder the lab may not enter: the same one line, exit 1, no run', async () => {
    const folder = join(dir, 'closed');
    await mkdir(folder);
    const log = join(folder, 'run.log');
    await writeFile(log, verl, { mode: 0o644 });
    await chmod(folder, 0o000);
    try {
      const data = join(dir, 'data-folder');
      const r = await importAsNobody(log, data);
      expect(r.stderr).toBe(`arlarena import: refused: ${log}: permission denied (the lab runs as a user that may not read it)\n`);
      expect(r.code).toBe(1);
      expect(await runsIn(data)).toBe(0);
    } finally {
      await chmod(folder, 0o755);
    }
  }, 120_000);
});
