/**
 * `arlarena export RUN --format wandb|mlflow --out DIR`: a lab run handed back to W&B or MLflow (the byte and
 * file layouts are core/formats/export/trackers.ts; this module names the output, picks the keys and writes).
 *
 * - wandb: DIR is a `wandb/` folder: the run goes to `DIR/offline-run-<start>-<id>/run-<id>.wandb`, which
 *   `wandb sync DIR/offline-run-…` (or `wandb beta sync DIR`) uploads like any offline run.
 * - mlflow: DIR is an MLflow file store (`mlflow.set_tracking_uri("file://DIR")`, with
 *   MLFLOW_ALLOW_FILE_STORE=true on MLflow ≥ 3.7): the run goes into the experiment "arlarena" (reused when DIR
 *   already has it, else created with the next free numeric id), its run id derived from the lab run id.
 *
 * A run already exported to DIR is refused rather than overwritten. Files are written under a temporary name and
 * renamed into place, the run's folder last, so an interrupted export leaves no half run a tracker would read.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { exportableKeys } from '../../core/formats/export/keys';
import { flatYaml } from './trackers';
import {
  mlflowExperimentMeta,
  mlflowRunFiles,
  wandbRunChunks,
  wandbRunFolder,
  wandbRunId,
  type TrackerExportRun,
} from '../../core/formats/export/trackers';
import type { RunStore } from '../store/runStore';

export const TRACKER_EXPORT_FORMATS = ['wandb', 'mlflow'] as const;
export type TrackerExportFormat = (typeof TRACKER_EXPORT_FORMATS)[number];

export function isTrackerExportFormat(s: string): s is TrackerExportFormat {
  return (TRACKER_EXPORT_FORMATS as readonly string[]).includes(s);
}

export interface TrackerExportResult {
  readonly format: TrackerExportFormat;
  /** The W&B run folder or the MLflow run folder written. */
  readonly path: string;
  /** W&B run id / MLflow run id. */
  readonly trackerId: string;
  readonly steps: number;
  readonly keys: number;
}

async function exists(p: string): Promise<boolean> {
  try {
    await stat(p);
    return true;
  } catch {
    return false;
  }
}

/** The experiment "arlarena" in an MLflow file store: its id, or a new id (max numeric id + 1) to create. */
async function mlflowExperiment(root: string, name: string): Promise<{ id: string; create: boolean }> {
  let max = 0;
  let entries: string[] = [];
  try {
    entries = await readdir(root);
  } catch {
    entries = [];
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    max = Math.max(max, Number(e));
    try {
      const y = flatYaml(await readFile(join(root, e, 'meta.yaml'), 'utf8'));
      if (y.name === name && y.lifecycle_stage !== 'deleted') return { id: e, create: false };
    } catch {
      // a numbered folder without meta.yaml is not an experiment
    }
  }
  return { id: String(max + 1), create: true };
}

export async function exportToTracker(
  store: RunStore,
  runId: string,
  opts: { format: TrackerExportFormat; out?: string; project?: string; version?: string },
): Promise<TrackerExportResult> {
  const rec = await store.getRun(runId);
  if (!rec) throw new Error(`no run ${runId}`);
  const records = await store.readMetrics(rec.id);
  if (records.length === 0) throw new Error(`run ${rec.id} has no metric records to export`);
  const keys = exportableKeys(records);
  const run: TrackerExportRun = {
    id: rec.id,
    name: rec.name,
    tags: rec.tags,
    startedAt: rec.startedAt ?? rec.createdAt,
    ...(rec.finishedAt ? { finishedAt: rec.finishedAt } : {}),
    completed: rec.status === 'completed',
    config: (rec.config ?? {}) as Record<string, unknown>,
  };
  const root = resolve(opts.out ?? join(store.dataDir, 'exports', `${rec.id}-${opts.format}`));
  await mkdir(root, { recursive: true });
  if (opts.format === 'wandb') {
    const wid = wandbRunId(rec.id);
    const folder = join(root, wandbRunFolder(run.startedAt, wid));
    if (await exists(folder))
      throw new Error(`${folder} already exists: run ${rec.id} was exported there before; delete it or pass another --out`);
    const tmp = `${folder}.partial`;
    await rm(tmp, { recursive: true, force: true });
    await mkdir(join(tmp, 'files'), { recursive: true });
    const parts: Uint8Array[] = [];
    for (const c of wandbRunChunks(run, records, {
      keys,
      project: opts.project ?? 'arlarena',
      wandbId: wid,
      producer: `arlarena-lab ${opts.version ?? ''}`.trim(),
    }))
      parts.push(c);
    await writeFile(join(tmp, `run-${wid}.wandb`), Buffer.concat(parts));
    await rename(tmp, folder);
    return { format: 'wandb', path: folder, trackerId: wid, steps: records.length, keys: keys.length };
  }
  const exp = await mlflowExperiment(root, opts.project ?? 'arlarena');
  const uuid = createHash('sha256').update(`arlarena:${rec.id}`).digest('hex').slice(0, 32);
  const runDir = join(root, exp.id, uuid);
  if (await exists(runDir))
    throw new Error(`${runDir} already exists: run ${rec.id} was exported to this MLflow store before; delete it or pass another --out`);
  if (exp.create) {
    await mkdir(join(root, exp.id), { recursive: true });
    await writeFile(
      join(root, exp.id, 'meta.yaml'),
      mlflowExperimentMeta(exp.id, opts.project ?? 'arlarena', root, Date.parse(run.startedAt) || 0),
    );
  }
  const tmpRoot = join(root, exp.id, `.${uuid}.partial`);
  await rm(tmpRoot, { recursive: true, force: true });
  const prefix = `${exp.id}/${uuid}/`;
  for (const f of mlflowRunFiles(run, records, { keys, experimentId: exp.id, runUuid: uuid, root, user: 'arlarena' })) {
    const p = join(tmpRoot, f.path.slice(prefix.length));
    await mkdir(dirname(p), { recursive: true });
    await writeFile(p, f.text);
  }
  await mkdir(join(tmpRoot, 'artifacts'), { recursive: true });
  await rename(tmpRoot, runDir);
  return { format: 'mlflow', path: runDir, trackerId: uuid, steps: records.length, keys: keys.length };
}
