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
import type { RolloutEngineFactory } from '../agent/engine';
import type { GradientPoolFactory } from './shards';
import type { HfModelLoader, LlmRolloutEngineFactory } from './hfRun';

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

/** Where inside a step `TrainerHooks.interrupted` is asked. */
export type StepPart = 'rollout' | 'logprobs' | 'update' | 'validation';

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
  /**
   * Optional, awaited inside a step: before each rollout or validation turn (one batched generation), between
   * log-prob chunks and before each update mini-batch. True once a stop was asked for: the trainer abandons the
   * step in progress (nothing of it is logged; weights, optimizer, RNG and task cursor go back to the last
   * completed step) and ends 'stopped' with that step's checkpoint, so a stop waits for the piece of work in
   * progress rather than the rest of the step.
   */
  interrupted?(part: StepPart): Promise<boolean>;
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
  /** Model files in the agent's format (src/core/agent/checkpoint.ts): model.json, weights.bin, tokenizer.json. */
  readonly files: Record<string, Uint8Array>;
  /** Where it came from, e.g. `shipped:sokoban@<sha256 of weights.bin>`; recorded in the checkpoint state. */
  readonly ref: string;
}

/**
 * Loads a shipped warm-start checkpoint for an env and model size (+ history window: prompts must match what it
 * was trained on); resolves null when none fits, and the trainer then runs behaviour cloning from scratch.
 */
export type WarmStartLoader = (q: { env: string; modelSize: string; historyWindow: number }) => Promise<WarmStartCheckpoint | null>;

/**
 * Injected compute: src/main/compute builds it (the tfjs backend is already initialised when runTraining is
 * called; the onnxruntime engine factory is optional).
 */
export interface TrainerDeps {
  readonly clock: Clock;
  readonly compute: TrainerCompute;
  /** Shipped warm-start checkpoints (warmStart.source = 'shipped'); absent → BC from scratch. */
  readonly loadWarmStart?: WarmStartLoader;
  /** Reads the Hugging Face model folder of model.source = hf:PATH (src/main/compute/models); absent → lab models only. */
  readonly loadHfModel?: HfModelLoader;
  /** The rollout engine of an hf run with compute.rolloutEngine = onnxruntime (src/main/compute); absent → tfjs. */
  readonly createLlmRolloutEngine?: LlmRolloutEngineFactory;
}

/** Backend description recorded with the run, plus the rollout-engine factory from src/main/compute. */
export interface TrainerCompute {
  readonly info: { readonly training: string; readonly rollout: string; readonly detail: string };
  /**
   * A forward-only engine holding the given weights (onnxruntime with a KV cache when the run asks for it). The
   * trainer uses one for rollouts (compute.rolloutEngine = 'onnxruntime') and one holding π_ref for reference
   * log-probs (compute.refLogProbEngine = 'onnxruntime', the default), and one holding θ for old log-probs when
   * compute.logProbEngine = 'onnxruntime'. Undefined → everything runs on the tfjs trainer model.
   */
  readonly createRolloutEngine?: RolloutEngineFactory;
  /**
   * compute.workers = 0 (one per core) resolves to this: the machine's cores, as src/main counts them. Absent → 1.
   */
  readonly workers?: number;
  /** Starts K data-parallel gradient workers (src/main/compute/gradPool.ts); absent → K = 1 only. */
  readonly createGradientPool?: GradientPoolFactory;
  /** GPU memory the training backend holds now, GB (perf/max_memory_allocated_gb); absent off the GPU → NaN. */
  readonly memoryGb?: () => number;
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
  /** K, the gradient workers this run trained with (workersOf). */
  readonly workers: number;
}
