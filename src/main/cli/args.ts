/**
 * Arguments shared by the commands that train (train, arena, warmstart, eval, remote verl): preset + env +
 * `--set` overrides resolved into a run config, integer and model-size options, and the one-line progress bar —
 * every complaint a `UsageError` (exit 2) naming the valid choices.
 */
import { resolveConfig, parseSetArgs, PRESET_NAMES, type RunConfig } from '../../core/config/index';
import { ENV_CATALOG } from '../../core/envs/index';
import type { Progress } from '../app/trainRun';
import { UsageError } from './types';

export const MODEL_SIZES = ['nano', 'small', 'base', 'custom'] as const;

export interface RunRequest {
  readonly preset: string;
  readonly env: string;
  readonly overrides: Record<string, string | number | boolean>;
}

/** Resolve preset + env + overrides, or throw a UsageError listing every issue (each names the valid choices). */
export function resolveOrUsage(req: RunRequest): RunConfig {
  if (!PRESET_NAMES.includes(req.preset)) throw new UsageError(`unknown preset "${req.preset}"; valid presets: ${PRESET_NAMES.join(', ')}`);
  if (!ENV_CATALOG.some((e) => e.name === req.env))
    throw new UsageError(`unknown env "${req.env}"; valid envs: ${ENV_CATALOG.map((e) => e.name).join(', ')}`);
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

export function progressLine(runId: string, p: Progress): string {
  const width = 24;
  const frac = p.totalSteps > 0 ? Math.min(1, p.step / p.totalSteps) : 0;
  const bar = '█'.repeat(Math.round(frac * width)).padEnd(width, '░');
  const f = (x: number | null, d: number): string => (x === null || !Number.isFinite(x) ? '–' : x.toFixed(d));
  const eta = p.eta === null ? '–' : `${Math.floor(p.eta / 60)}m${String(Math.round(p.eta % 60)).padStart(2, '0')}s`;
  return `${runId} ${bar} step ${p.step}/${p.totalSteps}  success ${f(p.success, 2)}  grad-norm ${f(p.gradNorm, 3)}  ETA ${eta}`;
}
