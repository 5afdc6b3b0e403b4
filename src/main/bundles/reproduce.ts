/**
 * `arlarena reproduce FILE`: verify a bundle, rerun its config + seed as a new run (tagged `reproduction`),
 * and compare the metric streams.
 *
 * The comparison is src/core/stats/reproduce.ts (compareStreams): bit-identical, within float tolerance (the
 * tolerance stated), within band, or diverged. Bit-identity is only expected when the compute backend matches (a
 * run is a function of config, seed, app version and backend); the report says whether it does.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { MetricRecord } from '../../shared/metrics';
import { decodeMetricRecord } from '../store/jsonl';
import type { RunStore } from '../store/runStore';
import { runJob } from '../sessions/jobRunner';
import type { TrainingJob } from '../sessions/job';
import { verifyBundle } from './importBundle';
import { BundleError } from './manifest';
import { validateConfig, type RunConfig } from '../../core/config/index';
import { hfSourceOf } from '../../core/training/hfRun';
import { HfFolderError } from '../compute/models/hfFolder';
import { checkHfFolder, expandHome } from '../compute/models/hfRunModel';
import type { Alert, ComputeBackendInfo, HfModelRecord } from '../../shared/api';
import { compareStreams, type ComparisonReport } from '../../core/stats/reproduce';

export {
  compareStreams,
  verdictLabel,
  FLOAT_TOLERANCE,
  type ComparisonReport,
  type KeyComparison,
  type ReproduceVerdict,
} from '../../core/stats/reproduce';

export interface ReproduceResult extends ComparisonReport {
  readonly originalRunId: string;
  readonly rerunId: string;
  readonly originalBackend: string;
  readonly rerunBackend: string;
  readonly backendMatches: boolean;
  /** Gradient workers K of the original run and of the rerun (null: not recorded; such runs trained on one). */
  readonly originalWorkers: number | null;
  readonly rerunWorkers: number | null;
  readonly rerunStatus: 'completed' | 'stopped' | 'failed';
  readonly error: string | null;
}

export interface ReproduceOptions {
  /** Rerun only the first N steps (a quicker check); the comparison covers those steps. */
  readonly steps?: number;
  /**
   * What reruns the config (default: the real trainer) and the check its config must pass first (default: the
   * trainer's validateConfig). Test kits pass a stand-in job with its own check.
   */
  readonly job?: {
    readonly job: TrainingJob;
    readonly validateConfig: (config: Record<string, unknown>) => ReadonlyArray<{ readonly message: string }>;
  };
  readonly onProgress?: (step: number, total: number) => void;
  /**
   * A Hugging Face model run: the base model's folder on this machine (default: the path the run recorded, when it
   * exists here). Its files must hash as the run recorded them, or the rerun is refused naming the file.
   */
  readonly modelFolder?: string;
}

/**
 * The config a hf run reruns with: model.source pointed at `modelFolder` (or the recorded path), after checking that
 * folder's files against the run's recorded hashes. Other configs come back unchanged.
 */
export async function withCheckedModel(
  config: Record<string, unknown>,
  recorded: HfModelRecord | undefined,
  modelFolder: string | undefined,
): Promise<Record<string, unknown>> {
  // A bundle's config is outside input (and a test job's may have no model section at all).
  const source = (config.model as { source?: unknown } | undefined)?.source;
  if (typeof source !== 'string' || hfSourceOf({ model: { source } } as unknown as RunConfig) === null) return config;
  if (!recorded)
    throw new BundleError(
      `the run trained a Hugging Face model (${source}) but its record has no model hashes, so no folder can be checked against it; it cannot be rerun`,
    );
  const folder = modelFolder ?? expandHome(recorded.path);
  if (modelFolder === undefined && !existsSync(folder))
    throw new BundleError(
      `the run trained ${recorded.architecture} from ${recorded.path}, which is not on this machine; give the same checkpoint's folder with --model-folder PATH`,
    );
  try {
    const { info } = await checkHfFolder(folder, recorded);
    return { ...config, model: { ...(config.model as Record<string, unknown>), source: `hf:${info.dir}` } };
  } catch (e) {
    if (e instanceof HfFolderError) throw new BundleError(e.message);
    throw e;
  }
}

/** The config with compute.workers = 0 (one per core) replaced by the K the run recorded. */
export function withRecordedWorkers(config: Record<string, unknown>, workers: number | undefined): Record<string, unknown> {
  const compute = config.compute;
  if (workers === undefined || compute === null || typeof compute !== 'object') return config;
  const asked = (compute as { workers?: unknown }).workers;
  if (asked !== undefined && asked !== 0) return config;
  return { ...config, compute: { ...(compute as Record<string, unknown>), workers } };
}

/**
 * Native TensorFlow runs match only on the same libtensorflow and thread pools (the intra-op count sets how kernels
 * split their reductions, hence float rounding); runs on other backends have no such record on either side.
 */
function sameTensorflow(a: ComputeBackendInfo['tensorflow'], b: ComputeBackendInfo['tensorflow']): boolean {
  if (!a || !b) return !a && !b;
  return (
    a.version === b.version &&
    a.intraOpThreads === b.intraOpThreads &&
    a.interOpThreads === b.interOpThreads &&
    a.deterministicOps === b.deterministicOps &&
    a.gpu === b.gpu
  );
}

export function withRecordedThreads(
  config: Record<string, unknown>,
  tensorflow: ComputeBackendInfo['tensorflow'],
): Record<string, unknown> {
  const compute = config.compute;
  if (!tensorflow || compute === null || typeof compute !== 'object') return config;
  const c = compute as { intraOpThreads?: unknown; interOpThreads?: unknown };
  const intraOpThreads = c.intraOpThreads === undefined || c.intraOpThreads === 0 ? tensorflow.intraOpThreads : c.intraOpThreads;
  const interOpThreads = c.interOpThreads === undefined || c.interOpThreads === 0 ? tensorflow.interOpThreads : c.interOpThreads;
  return { ...config, compute: { ...(compute as Record<string, unknown>), intraOpThreads, interOpThreads } };
}

/** The bundle file's bytes; a path that is no readable file here is a BundleError that says which, not Node's ENOENT. */
async function readBundleFile(file: string): Promise<Uint8Array> {
  try {
    return new Uint8Array(await readFile(file));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new BundleError('no such file');
    if (code === 'EISDIR') throw new BundleError('a folder, not a bundle file (.arlarena.zip)');
    if (code === 'EACCES' || code === 'EPERM') throw new BundleError(`cannot be read (${(e as Error).message})`);
    throw e;
  }
}

export async function reproduceBundle(store: RunStore, file: string, opts: ReproduceOptions = {}): Promise<ReproduceResult> {
  const { record, files } = verifyBundle(await readBundleFile(file));
  const original: MetricRecord[] = [];
  for (const line of new TextDecoder().decode(files['metrics.jsonl']).split('\n')) {
    if (!line.trim()) continue;
    const r = decodeMetricRecord(JSON.parse(line));
    if (r) original.push(r);
  }
  // A partial check stops the rerun after `steps` steps; the config stays as recorded (changing the step count
  // could change schedules and so the stream).
  // compute.workers = 0 means "one per core" where the run started: the rerun uses the K the run recorded, since K
  // sets the float32 summation order of the gradients.
  // Likewise native TensorFlow's thread pools: "one per core" (0 or absent) becomes the counts the run recorded.
  const recordedConfig = withRecordedThreads(withRecordedWorkers(record.config, record.backend.workers), record.backend.tensorflow);
  if (record.kind === 'imported') {
    throw new BundleError(
      `run "${record.name}" was imported from a ${record.source?.format ?? 'training'} log (${record.source?.framework ?? 'unknown'} framework), not trained in this lab, so the lab cannot rerun it; compare it with lab runs instead (its source log is in the bundle under source/)`,
    );
  }
  // What trains must validate like a new run's config (a bundle is input from outside).
  const issues = (opts.job?.validateConfig ?? validateConfig)(recordedConfig);
  if (issues.length > 0)
    throw new BundleError(
      `the bundle's config is not a valid run config: ${issues
        .slice(0, 3)
        .map((i) => i.message)
        .join('; ')}`,
    );
  // A Hugging Face model run: the bundle holds the model's hashes, not its weights; the folder must match them.
  const config = await withCheckedModel(recordedConfig, record.model, opts.modelFolder);
  const limit = opts.steps;
  const rerun = await store.createRun({
    name: `reproduce: ${record.name}`,
    tags: ['reproduction', `of:${record.id}`.slice(0, 50)],
    preset: record.preset,
    env: record.env,
    seed: record.seed,
    config,
    totalSteps: limit ?? record.totalSteps,
    status: 'running',
  });
  const alerts = new Map<string, Alert>();
  const job: TrainingJob = opts.job?.job ?? (await import('../sessions/jobs/training')).trainingJob;
  const result = await runJob({
    start: {
      type: 'start',
      runId: rerun.id,
      runDir: store.runDir(rerun.id),
      dataDir: store.dataDir,
      config,
      seed: record.seed,
      resume: false,
    },
    job,
    stopAfterStep: limit,
    post: (m) => {
      if (m.type === 'metrics') void store.noteMetrics(rerun.id, m.records, { detected: true });
      // A Hugging Face rerun names its model once the job has read the folder, so a rerun that fails still has it (the
      // store serialises writes: this lands before the final record below, which takes done's copy).
      if (m.type === 'model') void store.updateRun(rerun.id, { model: m.model }).catch(() => undefined);
      // The rerun runs the live detector like any run; its alerts are stored with it.
      if (m.type === 'alert') alerts.set(m.alert.id, m.alert);
      if (m.type === 'metrics' && opts.onProgress) opts.onProgress(m.records[m.records.length - 1].step, limit ?? record.totalSteps);
    },
  });
  if (alerts.size > 0) await store.upsertAlerts(rerun.id, [...alerts.values()]);
  const rerunBackend = result.type === 'done' && result.backend ? result.backend.training : 'unknown';
  const rerunWorkers = result.type === 'done' ? result.backend?.workers : undefined;
  await store.updateRun(rerun.id, {
    status: result.type === 'done' ? result.status : 'failed',
    error: result.type === 'failed' ? result.error : null,
    finishedAt: new Date().toISOString(),
    ...(result.type === 'done' && result.backend ? { backend: { ...result.backend, available: [] } } : {}),
    ...(result.type === 'done' && result.model ? { model: result.model } : {}),
  });
  const rerunMetrics = await store.readMetrics(rerun.id);
  const compared = limit !== undefined ? original.filter((r) => r.step <= limit) : original;
  const report = compareStreams(compared, rerunMetrics);
  return {
    ...report,
    originalRunId: record.id,
    rerunId: rerun.id,
    originalBackend: record.backend.training,
    rerunBackend,
    backendMatches:
      record.backend.training === rerunBackend &&
      rerunBackend !== 'unknown' &&
      (record.backend.workers ?? 1) === (rerunWorkers ?? 1) &&
      sameTensorflow(record.backend.tensorflow, result.type === 'done' ? result.backend?.tensorflow : undefined),
    originalWorkers: record.backend.workers ?? null,
    rerunWorkers: rerunWorkers ?? null,
    rerunStatus: result.type === 'done' ? result.status : 'failed',
    error: result.type === 'failed' ? result.error : null,
  };
}
