/**
 * Glue between the CLI and the lab: resolve a run config from CLI arguments (exit-2 errors naming the valid
 * choices), run it through the same session manager + training worker the app uses (so the run lands in the run
 * store and the app sees it), and render progress (step, success, grad-norm, ETA) on a terminal.
 */
import { resolveConfig, parseSetArgs, PRESET_NAMES, type RunConfig } from '../../core/config/index';
import { ENV_CATALOG } from '../../core/envs/index';
import { RunStore } from '../store/runStore';
import { SessionManager } from '../sessions/sessionManager';
import { appCommit, appVersion } from '../appInfo';
import { UsageError } from '../cli/types';
import type { RunRecord } from '../../shared/api';
import { runTagsFor, type ComputeTarget } from '../remote/computeTarget';

export const MODEL_SIZES = ['nano', 'small', 'base', 'custom'] as const;

export interface RunRequest {
  readonly preset: string;
  readonly env: string;
  readonly overrides: Record<string, string | number | boolean>;
}

/** Resolve preset + env + overrides, or throw a UsageError listing every issue (each names the valid choices). */
export function resolveOrUsage(req: RunRequest): RunConfig {
  if (!PRESET_NAMES.includes(req.preset)) throw new UsageError(`unknown preset "${req.preset}"; valid presets: ${PRESET_NAMES.join(', ')}`);
  if (!ENV_CATALOG.some((e) => e.name === req.env)) throw new UsageError(`unknown env "${req.env}"; valid envs: ${ENV_CATALOG.map((e) => e.name).join(', ')}`);
  const { config, issues } = resolveConfig(req.preset, req.env, req.overrides);
  if (!config) throw new UsageError(issues.map((i) => `${i.field}: ${i.message}`).join('; '));
  return config;
}

/** `--set key=value` list → overrides, or a UsageError naming the bad key/value and the fix. */
export function parseSets(sets: readonly string[]): Record<string, string | number | boolean> {
  const { overrides, issues } = parseSetArgs(sets);
  if (issues.length > 0) throw new UsageError(issues.map((i) => i.message).join('; '));
  return overrides;
}

export function intArg(name: string, raw: string | undefined, min: number): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} ${JSON.stringify(raw)}: expected an integer ≥ ${min}`);
  return n;
}

export function modelArg(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (!(MODEL_SIZES as readonly string[]).includes(raw)) throw new UsageError(`--model "${raw}": valid sizes: ${MODEL_SIZES.join(', ')}`);
  return raw;
}

export interface Progress {
  step: number;
  totalSteps: number;
  success: number | null;
  gradNorm: number | null;
  eta: number | null;
}

export function progressLine(runId: string, p: Progress): string {
  const width = 24;
  const frac = p.totalSteps > 0 ? Math.min(1, p.step / p.totalSteps) : 0;
  const bar = '█'.repeat(Math.round(frac * width)).padEnd(width, '░');
  const f = (x: number | null, d: number): string => (x === null || !Number.isFinite(x) ? '–' : x.toFixed(d));
  const eta = p.eta === null ? '–' : `${Math.floor(p.eta / 60)}m${String(Math.round(p.eta % 60)).padStart(2, '0')}s`;
  return `${runId} ${bar} step ${p.step}/${p.totalSteps}  success ${f(p.success, 2)}  grad-norm ${f(p.gradNorm, 3)}  ETA ${eta}`;
}

export interface TrainedRun {
  readonly record: RunRecord;
}

/**
 * Create the run in the store and train it in the app's training worker; resolves when it ends. `onProgress`
 * gets every step's headline numbers.
 */
export async function trainInStore(
  dataDir: string,
  config: RunConfig,
  opts: {
    name?: string;
    tags?: string[];
    /** Wall-clock budget: stop the run (between updates, with a checkpoint) once it has trained this long. */
    maxMinutes?: number;
    /** Where the trainer runs (default this machine); a Ray target's runs are recorded with tag `on:ray`. */
    target?: ComputeTarget;
    onCreated?: (id: string) => void;
    onProgress?: (id: string, p: Progress) => void;
  } = {},
): Promise<TrainedRun & { budgetHit: boolean }> {
  const store = await RunStore.open(dataDir);
  const progress = new Map<string, Progress>();
  const sessions = new SessionManager({
    store,
    concurrency: 1,
    ...(opts.target?.spawn ? { spawn: opts.target.spawn } : {}),
    emit: (event, payload) => {
      const pl = payload as { runId?: string };
      if (!pl.runId) return;
      const p = progress.get(pl.runId) ?? { step: 0, totalSteps: config.training.steps, success: null, gradNorm: null, eta: null };
      if (event === 'run.metrics') {
        const recs = (payload as { records: Array<{ step: number; values: Record<string, number | null> }> }).records;
        const last = recs[recs.length - 1];
        if (last) {
          p.step = last.step;
          p.success = last.values['episode/success_rate'] ?? null;
          p.gradNorm = last.values['actor/grad_norm'] ?? null;
        }
      } else if (event === 'session.status') {
        const s = payload as { step: number; totalSteps: number; etaSeconds: number | null };
        p.step = s.step;
        p.totalSteps = s.totalSteps;
        p.eta = s.etaSeconds;
      } else return;
      progress.set(pl.runId, p);
      opts.onProgress?.(pl.runId, p);
    },
  });
  try {
    const info = await sessions.startNew({
      preset: config.preset,
      env: config.env.name,
      seed: config.seed,
      config: config as unknown as Record<string, unknown>,
      totalSteps: config.training.steps,
      appVersion: appVersion(),
      appCommit: appCommit(),
      ...(opts.name ? { name: opts.name } : {}),
      ...(opts.tags || opts.target?.kind === 'ray' ? { tags: [...(opts.tags ?? []), ...(opts.target ? runTagsFor(opts.target) : [])] } : {}),
    });
    opts.onCreated?.(info.runId);
    let budgetHit = false;
    const timer =
      opts.maxMinutes === undefined
        ? null
        : setTimeout(() => {
            budgetHit = true;
            void sessions.stop(info.runId).catch(() => undefined);
          }, opts.maxMinutes * 60_000);
    try {
      await sessions.waitFor(info.runId);
    } finally {
      if (timer) clearTimeout(timer);
    }
    await store.flush(info.runId);
    const record = await store.getRun(info.runId);
    if (!record) throw new Error(`run ${info.runId} vanished from the store`);
    return { record, budgetHit: budgetHit && record.status === 'stopped' };
  } finally {
    await sessions.dispose();
    await store.close();
  }
}
