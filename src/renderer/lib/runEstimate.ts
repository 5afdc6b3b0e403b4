/**
 * How long a new run will take on this machine, from the measured step times of runs already trained here.
 *
 * A step's wall time is driven by the env (prompt lengths, horizon), the model size, how many rollouts a step
 * makes (tasksPerStep × groupSize) and the training backend; the preset changes it less (filtering resamples
 * groups, a reference model adds a pass). So a stored run counts only when those four match, and runs of the same
 * preset are preferred when there are any. Each run's seconds per step is its recorded training wall time
 * (perf/wall_s: validation and checkpoints included, paused time not) over its steps done; the estimate is the
 * median over the most recent few, times the new run's steps. Imports, bundle copies and synthetic runs are left
 * out: their times were not measured on this machine.
 */
import type { RunRecord } from '../../shared/api';
import { getPath } from './configPaths';

/** One stored run's measured pace and what it ran. */
export interface StepTimeSample {
  readonly runId: string;
  readonly preset: string;
  readonly env: string;
  readonly modelSize: string;
  readonly rolloutsPerStep: number;
  readonly backend: string;
  readonly steps: number;
  readonly wallSeconds: number;
  readonly updatedAt: string;
}

/** What the new run will run: read from its resolved config. */
export interface EstimateTarget {
  readonly preset: string;
  readonly env: string;
  readonly modelSize: string;
  readonly rolloutsPerStep: number;
  readonly steps: number;
}

export interface RunEstimate {
  readonly seconds: number;
  readonly secondsPerStep: number;
  /** How many stored runs the median is over, and whether they ran the same preset. */
  readonly runs: number;
  readonly samePreset: boolean;
  readonly backend: string;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The target of a resolved engine config (config.resolve's `config`), or null when a field it needs is missing. */
export function targetOf(preset: string, env: string, config: Record<string, unknown>, steps?: number): EstimateTarget | null {
  const size = getPath(config, 'model.size');
  const tasks = num(getPath(config, 'rollout.tasksPerStep'));
  const group = num(getPath(config, 'rollout.groupSize'));
  const cfgSteps = num(getPath(config, 'training.steps'));
  const n = steps ?? cfgSteps;
  if (typeof size !== 'string' || tasks === null || group === null || n === null) return null;
  return { preset, env, modelSize: size, rolloutsPerStep: tasks * group, steps: n };
}

/** A stored run's sample, or null when its time was not measured here or it has not done a step yet. */
export function sampleOf(rec: RunRecord): StepTimeSample | null {
  if ((rec.kind ?? 'lab') !== 'lab' || rec.importedBundle || rec.tags.includes('synthetic')) return null;
  if (rec.step < 1 || !(rec.wallSeconds > 0)) return null;
  const size = getPath(rec.config, 'model.size');
  const tasks = num(getPath(rec.config, 'rollout.tasksPerStep'));
  const group = num(getPath(rec.config, 'rollout.groupSize'));
  if (typeof size !== 'string' || tasks === null || group === null) return null;
  return {
    runId: rec.id,
    preset: rec.preset,
    env: rec.env,
    modelSize: size,
    rolloutsPerStep: tasks * group,
    backend: rec.backend.training,
    steps: rec.step,
    wallSeconds: rec.wallSeconds,
    updatedAt: rec.updatedAt,
  };
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * The estimate for `target` on `backend` (the backend new runs train on), or null when no stored run matches.
 * `maxRuns` most recent matching runs count (recent ones reflect the machine's current load and build).
 */
export function estimateRunTime(
  samples: readonly StepTimeSample[],
  target: EstimateTarget,
  backend: string,
  maxRuns = 5,
): RunEstimate | null {
  const like = samples.filter(
    (s) =>
      s.env === target.env && s.modelSize === target.modelSize && s.rolloutsPerStep === target.rolloutsPerStep && s.backend === backend,
  );
  if (like.length === 0) return null;
  const same = like.filter((s) => s.preset === target.preset);
  const pool = (same.length ? same : like)
    .slice()
    .sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0))
    .slice(0, Math.max(1, maxRuns));
  const perStep = median(pool.map((s) => s.wallSeconds / s.steps));
  return { seconds: perStep * target.steps, secondsPerStep: perStep, runs: pool.length, samePreset: same.length > 0, backend };
}

/** The card's one line on what the estimate rests on (or why there is none), for the user to judge it by. */
export function estimateBasis(e: RunEstimate | null, t: EstimateTarget, backend: string, fmtSeconds: (s: number) => string): string {
  const what = `${t.env} · ${t.modelSize} model · ${t.rolloutsPerStep} rollouts/step · ${backend}`;
  if (!e) return `No estimate yet: no run of ${what} has trained on this machine. The first one's step times will give one.`;
  const runs = e.runs === 1 ? 'run' : 'runs';
  const preset = e.samePreset ? `${e.runs} ${t.preset} ${runs}` : `${e.runs} ${runs} of other presets`;
  return `Median ${fmtSeconds(e.secondsPerStep)}/step over the latest ${preset} of ${what} trained here (validation included).`;
}
