/**
 * Shared set-up for the trainer invariant tests: the wasm backend (or native TensorFlow with
 * ARLARENA_TEST_BACKEND=tensorflow: CI runs the trainer tests both ways), a tiny
 * config (a 1-layer d16 custom model, 2 tasks × 2 rollouts, 2-turn Sokoban, short responses) and hooks that
 * record everything the trainer emits.
 */
import { resolveConfig, type RunConfig } from '../src/core/config/index';
import type { MetricRecord } from '../src/shared/metrics';
import type { Trajectory } from '../src/shared/api';
import type { TrainerCheckpoint, TrainerHooks, TrainerStatus, TrainerDeps } from '../src/core/training/types';
import { initBackend, silenceTfjsBanner } from '../src/main/compute/index';
import { isTimingKey } from '../src/core/training/metrics';
import { TINY_CLI } from '../src/main/testing/tinyCli';

/**
 * The tfjs backend the trainer tests train on: tfjs-wasm unless ARLARENA_TEST_BACKEND says `tensorflow` (tfjs-node
 * built by `npm run setup:tensorflow`). Gradient pools in the tests use it too.
 */
export const TEST_BACKEND: 'wasm' | 'tensorflow' = (() => {
  const v = process.env.ARLARENA_TEST_BACKEND ?? 'wasm';
  if (v !== 'wasm' && v !== 'tensorflow') throw new Error(`ARLARENA_TEST_BACKEND=${JSON.stringify(v)}: expected wasm or tensorflow`);
  return v;
})();

/**
 * The CLI tests' tiny model and batches (src/main/testing/tinyCli.ts) with the trainer tests' own: one step, 20-token
 * responses, no validation or checkpoints, one sampled trajectory, on TEST_BACKEND.
 */
export const TINY: Record<string, string | number | boolean> = {
  ...TINY_CLI,
  'rollout.maxResponseTokens': 20,
  'training.steps': 1,
  'training.validateEvery': 0,
  'training.valEpisodes': 1,
  'training.checkpointEvery': 0,
  'training.sampleTrajectories': 1,
  'compute.backend': TEST_BACKEND,
};

export function tinyConfig(preset: string, extra: Record<string, string | number | boolean> = {}): RunConfig {
  const { config, issues } = resolveConfig(preset, 'sokoban', { ...TINY, ...extra });
  if (!config) throw new Error(`tiny config for ${preset}: ${issues.map((i) => `${i.field}: ${i.message}`).join('; ')}`);
  return config;
}

export async function useWasm(): Promise<void> {
  silenceTfjsBanner();
  const info = await initBackend(TEST_BACKEND).catch((e: Error) => {
    throw new Error(
      `ARLARENA_TEST_BACKEND=${TEST_BACKEND}: ${e.message}${TEST_BACKEND === 'tensorflow' ? ' (build it with `npm run setup:tensorflow`)' : ''}`,
    );
  });
  if (info.training !== TEST_BACKEND) throw new Error(`asked for ${TEST_BACKEND}, initBackend chose ${info.training}`);
}

/** A clock that advances 1 ms per reading: deterministic, so even perf/* values are reproducible in tests. */
export function fakeClock(): TrainerDeps['clock'] {
  let t = 0;
  return { now: () => (t += 1) };
}

export function deps(): TrainerDeps {
  return { clock: fakeClock(), compute: { info: { training: TEST_BACKEND, rollout: `tfjs-${TEST_BACKEND}`, detail: 'test' } } };
}

export interface Recorded {
  metrics: MetricRecord[];
  trajectories: Trajectory[];
  checkpoints: TrainerCheckpoint[];
  statuses: TrainerStatus[];
}

export function recorder(control: (step: number) => 'continue' | 'stop' = () => 'continue'): { hooks: TrainerHooks; rec: Recorded } {
  const rec: Recorded = { metrics: [], trajectories: [], checkpoints: [], statuses: [] };
  let lastStep = 0;
  const hooks: TrainerHooks = {
    onMetrics: (r) => {
      rec.metrics.push(r);
      lastStep = r.step;
    },
    onTrajectory: (t) => rec.trajectories.push(t),
    onCheckpoint: async (c) => {
      rec.checkpoints.push(c);
    },
    onStatus: (s) => rec.statuses.push(s),
    checkControl: async () => control(lastStep),
  };
  return { hooks, rec };
}

/** The metric stream without wall-clock keys (perf/* except perf/total_tokens), NaN made comparable. */
export function deterministicPart(ms: readonly MetricRecord[]): Array<{ step: number; values: Record<string, number | string> }> {
  return ms.map((m) => ({
    step: m.step,
    values: Object.fromEntries(
      Object.entries(m.values)
        .filter(([k]) => !isTimingKey(k))
        .map(([k, v]) => [k, Number.isNaN(v) ? 'NaN' : v]),
    ),
  }));
}
