/**
 * The trainer ↔ main interface (agreed in the team notes): `runTraining(config, deps, hooks, resume?)`.
 *
 * The trainer is pure core code (tfjs is pure JS); everything that needs Node — the tfjs backend set-up, the
 * onnxruntime forward engine, reading shipped warm-start checkpoints from disk — is injected through
 * `TrainerDeps`. Everything the trainer produces leaves through `TrainerHooks`: a metric record per step (every
 * catalog key present, NaN where not applicable), sampled trajectories, checkpoints, status lines, and a control
 * poll between steps (pause/stop). The run store and the sessions worker (src/main) implement the hooks.
 */
import type { Clock } from '../util/rng';
import type { MetricRecord } from '../../shared/metrics';
import type { Trajectory } from '../../shared/api';

export type TrainerPhase = 'warmstart' | 'rl' | 'validation' | 'done';

export interface TrainerStatus {
  readonly phase: TrainerPhase;
  /** RL step just finished (0 before the first RL step, BC update count during the warm start). */
  readonly step: number;
  /** RL steps in the run (BC updates in the warm-start phase). */
  readonly totalSteps: number;
  readonly message?: string;
}

export type TrainerControl = 'continue' | 'stop';

export interface TrainerHooks {
  /** One record per RL step, every key of METRIC_CATALOG present (NaN when not applicable), plus `val/<env>/<type>/…`. */
  onMetrics(rec: MetricRecord): void;
  /** Sampled trajectories (training rollouts and validation episodes) for the trajectory viewer. */
  onTrajectory(t: Trajectory): void;
  /** Awaited: the store writes the files before the trainer goes on. */
  onCheckpoint(c: TrainerCheckpoint): Promise<void>;
  onStatus(s: TrainerStatus): void;
  /** Awaited between steps; blocks while paused; 'stop' ends the run after the current step (a checkpoint is written). */
  checkControl(): Promise<TrainerControl>;
}

/**
 * A resumable snapshot. `files` are opaque blobs (see checkpoint.ts for their names and formats: policy weights,
 * AdamW moments, RNG state, reference-weights reference); `meta` is small JSON (step, format version, config hash).
 */
export interface TrainerCheckpoint {
  readonly step: number;
  readonly files: Record<string, Uint8Array>;
  readonly meta: Record<string, unknown>;
}

/** What a shipped or cached warm-start checkpoint provides: BC weights (they become π_ref) and their provenance. */
export interface WarmStartCheckpoint {
  /** Policy weights in the checkpoint weight format (checkpoint.ts `encodeWeights`). */
  readonly weights: Uint8Array;
  /** Where it came from, e.g. `resources/warmstart/sokoban` + its manifest hash; recorded in checkpoint meta. */
  readonly ref: string;
  /** The recipe's own description (updates, batch, lr, held-out results), recorded as is. */
  readonly meta: Record<string, unknown>;
}

/** Loads a shipped warm-start checkpoint for an env + model shape; resolves null when none fits (the trainer then runs BC). */
export type WarmStartLoader = (env: string, model: Record<string, unknown>) => Promise<WarmStartCheckpoint | null>;

/**
 * Injected compute. `compute` is what src/main/compute builds (tfjs backend already initialised, optional
 * onnxruntime forward engine factory); its concrete shape is the policy developer's (src/core/agent) and is
 * narrowed in trainer.ts where it is used.
 */
export interface TrainerDeps {
  readonly clock: Clock;
  readonly compute: TrainerCompute;
  /** Shipped warm-start checkpoints (warmStart.source = 'shipped'); absent → BC from scratch. */
  readonly loadWarmStart?: WarmStartLoader;
}

/** Backend description recorded with the run, plus the engine factory from src/main/compute. */
export interface TrainerCompute {
  readonly info: { readonly training: string; readonly rollout: string; readonly detail: string };
  /** Forward-only engine factory (onnxruntime) when available; undefined → every forward runs on the tfjs trainer engine. */
  readonly forwardEngine?: unknown;
}

export interface EvalInterval {
  /** Successes / episodes. */
  readonly rate: number;
  /** 95 % Wilson score interval. */
  readonly lo: number;
  readonly hi: number;
  readonly n: number;
}

export interface EvalSummary {
  readonly env: string;
  readonly episodes: number;
  readonly success: EvalInterval;
  readonly scoreMean: number;
  readonly validFormatRatio: number;
  readonly byTaskType: Record<string, EvalInterval>;
}

export interface TrainingResult {
  readonly status: 'completed' | 'stopped';
  /** Last RL step completed. */
  readonly step: number;
  readonly lastMetrics: MetricRecord | null;
  /** Last validation (held-out) result, if any ran. */
  readonly validation: EvalSummary | null;
  /** Final state (also passed to onCheckpoint). */
  readonly checkpoint: TrainerCheckpoint;
  /** Seconds of wall time in this call (clock-based). */
  readonly wallSeconds: number;
}
