/**
 * One run's directory: run.json (the authoritative record), metrics.jsonl, trajectories.jsonl, checkpoints/.
 *
 * Exactly one writer per run at a time (the session worker, or a CLI `train` process) appends metrics and
 * trajectories and saves checkpoints through this class. Checkpoints are written to a temp directory and
 * renamed into place, so a kill never leaves a half checkpoint that `loadLatestCheckpoint` would pick.
 */
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import type { MetricRecord } from '../../shared/metrics';
import type { Trajectory } from '../../shared/api';
import { fsyncDir, writeFileAtomic } from './atomic';
import { storeFaults } from './faults';
import { JsonlAppender, decodeMetricRecord, encodeMetricRecord, readJsonl } from './jsonl';
import { writerTag } from '../platform/process';

/** Structurally the trainer's `TrainerCheckpoint` (src/core/training/types.ts). */
export interface StoredCheckpoint {
  readonly step: number;
  readonly files: Record<string, Uint8Array>;
  readonly meta: Record<string, unknown>;
}

export const RUN_FILE = 'run.json';
export const METRICS_FILE = 'metrics.jsonl';
export const TRAJECTORIES_FILE = 'trajectories.jsonl';
export const CHECKPOINTS_DIR = 'checkpoints';
/** How many step checkpoints to keep per run (older ones are pruned; the newest is what resume and bundles use). */
export const KEEP_CHECKPOINTS = 2;

const FILE_NAME = /^[A-Za-z0-9._-]{1,100}$/;

/** A checkpoint file that does not match the SHA-256 its meta.json records (or that records none). */
export class CheckpointIntegrityError extends Error {
  /** The CLI prints this as one line. */
  readonly expected = true;
  constructor(message: string) {
    super(message);
    this.name = 'CheckpointIntegrityError';
  }
}

/**
 * Every file of a checkpoint must match the SHA-256 its meta.json lists (a flipped byte in
 * policy.bin used to load, train and evaluate). Returns null when all match, else what is wrong. `legacyOk`: a
 * meta.json with no `sha256` at all (written before checkpoints carried hashes) is accepted unverified.
 */
export function checkpointHashProblem(
  dirName: string,
  meta: { files?: unknown; sha256?: unknown },
  files: Readonly<Record<string, Uint8Array>>,
  legacyOk: boolean,
): string | null {
  const listed = Array.isArray(meta.files) ? (meta.files as unknown[]).filter((f): f is string => typeof f === 'string') : [];
  const hashes = meta.sha256 !== null && typeof meta.sha256 === 'object' ? (meta.sha256 as Record<string, unknown>) : null;
  if (!hashes && legacyOk) return null;
  for (const f of listed) {
    const want = hashes && Object.hasOwn(hashes, f) ? hashes[f] : undefined;
    if (typeof want !== 'string')
      return `checkpoint ${dirName}: meta.json lists no SHA-256 for ${f} (stripped, or written by an older version); it cannot be verified, so it is not loaded`;
    const d = files[f];
    if (!d) return `checkpoint ${dirName}: ${f} is listed in its meta.json but missing`;
    if (createHash('sha256').update(d).digest('hex') !== want)
      return `checkpoint ${dirName}: ${f} does not match the SHA-256 in its meta.json; the file was damaged or altered, so it is not loaded`;
  }
  for (const f of Object.keys(files))
    if (!listed.includes(f)) return `checkpoint ${dirName}: ${f} is not one of the files its meta.json lists`;
  return null;
}

export function checkpointDirName(step: number): string {
  return `step-${String(step).padStart(8, '0')}`;
}

export class RunFiles {
  private metrics: JsonlAppender;
  private trajectories: JsonlAppender;

  constructor(readonly dir: string) {
    this.metrics = new JsonlAppender(join(dir, METRICS_FILE));
    this.trajectories = new JsonlAppender(join(dir, TRAJECTORIES_FILE));
  }

  appendMetrics(records: readonly MetricRecord[]): Promise<void> {
    return this.metrics.append(records.map(encodeMetricRecord));
  }

  appendTrajectories(trajs: readonly Trajectory[]): Promise<void> {
    return this.trajectories.append(trajs.map((t) => JSON.stringify(t)));
  }

  /** fsync both streams: everything appended so far survives a kill. */
  async flush(): Promise<void> {
    await this.metrics.flush();
    await this.trajectories.flush();
  }

  async close(): Promise<void> {
    await this.metrics.close();
    await this.trajectories.close();
  }

  async readMetrics(): Promise<MetricRecord[]> {
    const chunk = await readJsonl(join(this.dir, METRICS_FILE));
    const out: MetricRecord[] = [];
    for (const item of chunk.items) {
      const r = decodeMetricRecord(item);
      if (r) out.push(r);
    }
    return out;
  }

  async saveCheckpoint(c: StoredCheckpoint): Promise<void> {
    const root = join(this.dir, CHECKPOINTS_DIR);
    await mkdir(root, { recursive: true });
    const name = checkpointDirName(c.step);
    const tmp = join(root, `.${name}.${writerTag()}.tmp`); // named by its writer: see cleanStaleTemps
    await rm(tmp, { recursive: true, force: true });
    await mkdir(tmp);
    const fileNames: string[] = [];
    for (const [fname, bytes] of Object.entries(c.files)) {
      if (!FILE_NAME.test(fname))
        throw new Error(`checkpoint file name "${fname}" is not a plain file name (letters, digits, ".", "_", "-")`);
      await writeFileAtomic(join(tmp, fname), bytes);
      fileNames.push(fname);
    }
    // Each file's own SHA-256, checked whenever the checkpoint is loaded (resume, eval, bundle import).
    const sha256 = Object.fromEntries(fileNames.map((f) => [f, createHash('sha256').update(c.files[f]).digest('hex')]));
    await writeFileAtomic(join(tmp, 'meta.json'), JSON.stringify({ step: c.step, files: fileNames, sha256, meta: c.meta }));
    const dest = join(root, name);
    storeFaults().at('checkpoint-rename');
    await rm(dest, { recursive: true, force: true });
    await rename(tmp, dest);
    await fsyncDir(root);
    await this.pruneCheckpoints();
  }

  /**
   * Steps of the complete checkpoints (a step folder with its meta.json). A folder without one is debris of a
   * prune killed half-way (older stores removed folders in place): never listed, removed by the next prune.
   */
  async checkpointSteps(): Promise<number[]> {
    return (await this.stepFolders()).filter((f) => f.complete).map((f) => f.step);
  }

  private async stepFolders(): Promise<Array<{ step: number; complete: boolean }>> {
    let names: string[];
    try {
      names = await readdir(join(this.dir, CHECKPOINTS_DIR));
    } catch {
      return [];
    }
    const out: Array<{ step: number; complete: boolean }> = [];
    for (const n of names) {
      const m = /^step-(\d+)$/.exec(n);
      if (!m) continue;
      const complete = await stat(join(this.dir, CHECKPOINTS_DIR, n, 'meta.json')).then(
        (st) => st.isFile(),
        () => false,
      );
      out.push({ step: Number(m[1]), complete });
    }
    return out.sort((a, b) => a.step - b.step);
  }

  async loadCheckpoint(step: number): Promise<StoredCheckpoint | undefined> {
    const dir = join(this.dir, CHECKPOINTS_DIR, checkpointDirName(step));
    let metaRaw: string;
    try {
      metaRaw = await readFile(join(dir, 'meta.json'), 'utf8');
    } catch {
      return undefined;
    }
    const m = JSON.parse(metaRaw) as { step: number; files: string[]; sha256?: Record<string, string>; meta: Record<string, unknown> };
    const files: Record<string, Uint8Array> = {};
    for (const f of m.files) {
      if (!FILE_NAME.test(f))
        throw new CheckpointIntegrityError(`checkpoint ${checkpointDirName(step)}: meta.json lists "${f}", which is not a plain file name`);
      files[f] = new Uint8Array(await readFile(join(dir, f)));
    }
    const problem = checkpointHashProblem(checkpointDirName(step), m, files, true);
    if (problem) throw new CheckpointIntegrityError(`${problem}. Delete ${dir} to resume from the checkpoint before it.`);
    return { step: m.step, files, meta: m.meta };
  }

  async loadLatestCheckpoint(): Promise<StoredCheckpoint | undefined> {
    const steps = await this.checkpointSteps();
    for (let i = steps.length - 1; i >= 0; i--) {
      try {
        const c = await this.loadCheckpoint(steps[i]);
        if (c) return c;
      } catch (e) {
        // A file that fails its hash is refused loudly (resuming silently from an older one would hide it);
        // an unreadable meta.json falls back to the previous checkpoint.
        if (e instanceof CheckpointIntegrityError) throw e;
      }
    }
    return undefined;
  }

  /**
   * Keep the newest KEEP_CHECKPOINTS complete checkpoints. Each folder to drop is first renamed to a hidden temp
   * name (one atomic step), then removed: a kill mid-removal leaves a `.…tmp` folder, named by its writer, that
   * cleanStaleTemps deletes at the next open once that writer is gone, never a step folder without its meta.json.
   */
  private async pruneCheckpoints(): Promise<void> {
    const folders = await this.stepFolders();
    const complete = folders.filter((f) => f.complete);
    const drop = [...folders.filter((f) => !f.complete), ...complete.slice(0, Math.max(0, complete.length - KEEP_CHECKPOINTS))];
    const root = join(this.dir, CHECKPOINTS_DIR);
    for (const f of drop) {
      const name = checkpointDirName(f.step);
      const trash = join(root, `.prune-${name}.${writerTag()}.tmp`);
      try {
        await rename(join(root, name), trash);
      } catch {
        continue; // already gone
      }
      storeFaults().at('checkpoint-prune');
      await rm(trash, { recursive: true, force: true });
    }
  }

  /**
   * Resume support: drop metric and trajectory lines after `step` (written after the checkpoint the run resumes
   * from), rewriting each file atomically, so the resumed stream has no duplicate steps.
   */
  async truncateAfterStep(step: number): Promise<void> {
    await this.close();
    for (const file of [METRICS_FILE, TRAJECTORIES_FILE]) {
      const p = join(this.dir, file);
      const chunk = await readJsonl(p);
      const kept = chunk.items.filter((it) => typeof (it as { step?: unknown }).step === 'number' && (it as { step: number }).step <= step);
      if (kept.length === chunk.items.length && !chunk.tornTail && chunk.badLines === 0) continue;
      await writeFileAtomic(p, kept.map((k) => `${JSON.stringify(k)}\n`).join(''));
    }
  }

  async writeRecord(record: unknown): Promise<void> {
    await writeFileAtomic(join(this.dir, RUN_FILE), JSON.stringify(record, null, 1));
  }

  static async ensureDir(dir: string): Promise<void> {
    await mkdir(dir, { recursive: true });
    // Touch the stream files so a run's directory always has its full shape.
    for (const f of [METRICS_FILE, TRAJECTORIES_FILE]) await writeFile(join(dir, f), '', { flag: 'a' });
  }
}
