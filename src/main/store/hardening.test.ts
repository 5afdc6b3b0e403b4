/**
 * Damaged state a kill or a hand edit leaves behind is repaired or reported, never a TypeError: a checkpoint
 * without meta.json, a flipped byte in a checkpoint, a catalog entry that is no record, a corrupt run.json and a
 * folder where the lock file belongs. Each case makes that damage by hand on a small run.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunStore } from './runStore';
import { LockPathError } from './fileLock';
import { CheckpointIntegrityError, checkpointDirName } from './runFiles';

let dir: string;
let opened: RunStore[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-hard-'));
});
afterEach(async () => {
  for (const s of opened) await s.close().catch(() => undefined);
  opened = [];
  await rm(dir, { recursive: true, force: true });
});

async function openStore(): Promise<RunStore> {
  const s = await RunStore.open(dir, { lock: { staleMs: 60_000, timeoutMs: 2_000 } });
  opened.push(s);
  return s;
}

const base = { preset: 'sampo', env: 'sokoban', seed: 7, config: { optim: { lr: 1e-4 } }, totalSteps: 10 };

async function runWithMetrics(): Promise<string> {
  const s = await openStore();
  const r = await s.createRun({ ...base, name: 'victim', status: 'running' });
  await s.appendMetrics(
    r.id,
    [1, 2, 3].map((step) => ({ step, values: { 'actor/grad_norm': step / 10, 'perf/wall_s': step } })),
  );
  await s.updateRun(r.id, { status: 'completed' });
  await s.close();
  opened = opened.filter((o) => o !== s);
  return r.id;
}

describe('store repairs', () => {
  it('a checkpoint folder without meta.json (kill during pruning) is not listed and is cleaned up', async () => {
    const s = await openStore();
    const r = await s.createRun(base);
    for (const step of [1, 2]) await s.saveCheckpoint(r.id, { step, files: { 'w.bin': new Uint8Array([step]) }, meta: { step } });
    // The state `rm -r` leaves when killed after unlinking meta.json but before the folder is gone.
    const torn = join(s.runDir(r.id), 'checkpoints', checkpointDirName(1));
    await rm(join(torn, 'meta.json'));
    expect(await s.checkpointSteps(r.id)).toEqual([2]);
    await s.saveCheckpoint(r.id, { step: 3, files: { 'w.bin': new Uint8Array([3]) }, meta: { step: 3 } });
    expect(await s.checkpointSteps(r.id)).toEqual([2, 3]);
    expect((await readdir(join(s.runDir(r.id), 'checkpoints'))).filter((n) => !n.startsWith('.'))).toEqual([
      checkpointDirName(2),
      checkpointDirName(3),
    ]);
  });

  it('a checkpoint file with one flipped byte is refused on load (resume, eval), naming the file', async () => {
    const s = await openStore();
    const r = await s.createRun(base);
    await s.saveCheckpoint(r.id, {
      step: 1,
      files: { 'policy.bin': new Uint8Array(64).fill(7), 'state.json': new TextEncoder().encode('{}') },
      meta: { step: 1 },
    });
    const meta = JSON.parse(await readFile(join(s.runDir(r.id), 'checkpoints', checkpointDirName(1), 'meta.json'), 'utf8'));
    expect(Object.keys(meta.sha256).sort()).toEqual(['policy.bin', 'state.json']);
    const file = join(s.runDir(r.id), 'checkpoints', checkpointDirName(1), 'policy.bin');
    const bytes = await readFile(file);
    bytes[10] ^= 0x01;
    await writeFile(file, bytes);
    await expect(s.loadCheckpointAt(r.id, 1)).rejects.toThrow(CheckpointIntegrityError);
    await expect(s.loadLatestCheckpoint(r.id)).rejects.toThrow(/policy\.bin does not match the SHA-256 in its meta\.json/);
  });

  it('a catalog that is valid JSON but holds a non-record entry is repaired from run.json', async () => {
    const id = await runWithMetrics();
    await writeFile(join(dir, 'runs.json'), JSON.stringify({ schemaVersion: 1, runs: { [id]: 5, ghost: { id: 'ghost' } } }));
    const s = await openStore();
    expect(s.warnings.join('\n')).toMatch(new RegExp(`catalog entry for run ${id} was not a run record`));
    const runs = await s.listRuns();
    expect(runs.map((r) => r.id)).toEqual([id]);
    expect(runs[0].name).toBe('victim');
    expect((await s.findRun(id)).status).toBe('completed');
    // The catalog file on disk was rewritten with the good entry only.
    const cat = JSON.parse(await readFile(join(dir, 'runs.json'), 'utf8'));
    expect(Object.keys(cat.runs)).toEqual([id]);
    expect(cat.runs[id].id).toBe(id);
  });

  it('a corrupt run.json is rebuilt from the catalog; without a catalog entry the run is listed as damaged and can be deleted', async () => {
    const id = await runWithMetrics();
    await writeFile(join(dir, 'runs', id, 'run.json'), '{"id":');
    let s = await openStore();
    expect(s.warnings.join('\n')).toMatch(/run\.json was unreadable/);
    expect(s.warnings.join('\n')).toMatch(/rebuilt from the catalog/);
    const got = await s.findRun(id);
    expect(got.name).toBe('victim');
    expect(got.status).toBe('completed');
    expect((await s.getRun(id))?.id).toBe(id);
    expect(JSON.parse(await readFile(join(dir, 'runs', id, 'run.json'), 'utf8')).id).toBe(id);
    await s.close();
    opened = [];

    // No catalog to rebuild from: the metric stream gives the step, the record says it is damaged.
    await writeFile(join(dir, 'runs', id, 'run.json'), '{"id":');
    await rm(join(dir, 'runs.json'));
    s = await openStore();
    const damaged = await s.findRun(id);
    expect(damaged.status).toBe('failed');
    expect(damaged.step).toBe(3);
    expect(damaged.tags).toContain('damaged');
    expect(damaged.error).toMatch(/run\.json was unreadable.*moved aside/);
    expect((await s.listRuns()).map((r) => r.id)).toEqual([id]);
    expect((await s.readMetrics(id)).map((m) => m.step)).toEqual([1, 2, 3]);
    expect(await s.deleteRun(id)).toBe(true);
    expect(await s.listRuns()).toEqual([]);
  });

  it('a directory where the lock file belongs is a clear error, not EISDIR', async () => {
    const id = await runWithMetrics();
    const s = await openStore();
    await mkdir(join(dir, 'runs.json.lock'));
    const e = await s.updateRun(id, { name: 'x' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(LockPathError);
    expect((e as Error).message).toMatch(/runs\.json\.lock is a directory.*remove it/);
    await rm(join(dir, 'runs.json.lock'), { recursive: true });
    expect((await s.updateRun(id, { name: 'x' })).name).toBe('x');
  });
});
