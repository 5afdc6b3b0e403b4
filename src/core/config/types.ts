/**
 * RunConfig: everything a run is a function of (with the seed, the app version and the backend). The shape is
 * the one agreed in the team contract (notes/common.md); fields may be added, never renamed.
 *
 * Each field's full documentation — what it does, when to change it, the paper's value where the laptop
 * default differs — lives ONCE in the field table (fields.ts), which also feeds `CONFIG_FIELDS` (the UI's
 * "Customise" editor and `catalog.configFields`). The one-liners here are for the editor tooltip in code.
 */
import type { AdvantageName } from '../algorithms/advantages/types';
import type { AggregationName } from '../algorithms/aggregation/types';
import type { KlName } from '../algorithms/kl/types';
import type { PolicyLossName } from '../algorithms/losses/types';

export type EnvName = 'sokoban' | 'frozenlake' | 'household' | 'shop';
export type ModelSizeName = 'nano' | 'small' | 'base' | 'custom';
export type BackendName = 'auto' | 'tensorflow-gpu' | 'tensorflow' | 'wasm' | 'cpu';

export interface RunConfig {
  /** Name of the preset this config was resolved from (presets/). */
  readonly preset: string;
  /** Master seed: tasks, sampling and initialisation all derive from it. */
  readonly seed: number;
  readonly env: {
    /** Testbed environment (spec §3). */
    readonly name: EnvName;
    /** History window k: past (observation, action) pairs in the prompt (paper 2). */
    readonly historyWindow: number;
    /** Horizon: max turns per episode. */
    readonly maxSteps: number;
    /** Env-specific knobs, validated by the env catalog (src/core/envs). */
    readonly settings: Readonly<Record<string, number | boolean | string>>;
  };
  readonly model: {
    /** Named policy size; `custom` uses the dims below as given. */
    readonly size: ModelSizeName;
    readonly dModel: number;
    readonly nLayers: number;
    readonly nHeads: number;
    readonly dFF: number;
    /** Context length in tokens (prompt + response). */
    readonly maxSeqLen: number;
  };
  readonly compute: {
    /** tfjs backend for training; `auto` picks the fastest available. */
    readonly backend: BackendName;
    /** Engine that generates rollouts. */
    readonly rolloutEngine: 'onnxruntime' | 'tfjs';
    /** Where old and reference log-probs are computed. */
    readonly logProbEngine: 'trainer' | 'onnxruntime';
  };
  readonly rollout: {
    /** B: task instances per step. */
    readonly tasksPerStep: number;
    /** G: rollouts per task (the group). */
    readonly groupSize: number;
    readonly temperature: number;
    readonly topP: number;
    /** 0 = no top-k cut. */
    readonly topK: number;
    /** Max response tokens per turn (paper 512). */
    readonly maxResponseTokens: number;
  };
  readonly algorithm: {
    /** Dimension 1: loss aggregation (spec §1.1). */
    readonly aggregation: AggregationName;
    /** Dimension 2: importance-sampling clipping (spec §1.2). */
    readonly policyLoss: {
      readonly mode: PolicyLossName;
      readonly clipRatioLow: number;
      readonly clipRatioHigh: number;
      readonly clipRatioC: number;
      readonly tauPos: number;
      readonly tauNeg: number;
      readonly sapoPerTokenTau: boolean;
      readonly seqMask: { readonly enabled: boolean; readonly delta: number };
    };
    /** Dimension 3: advantage design (spec §1.3). */
    readonly advantage: {
      readonly estimator: AdvantageName;
      readonly normByStd: boolean;
      readonly crossSteps: boolean;
      readonly epsilon: number;
      readonly gamma: number;
      readonly stepAdvantageW: number;
      readonly gigpoMode: 'mean_std_norm' | 'mean_norm';
      readonly empg: { readonly k: number; readonly kf: number; readonly zeta: number };
    };
    /** KL loss to the reference policy (spec §2.1). */
    readonly kl: { readonly enabled: boolean; readonly type: KlName; readonly coef: number; readonly inReward: boolean };
    /** β_H, entropy bonus. */
    readonly entropyCoeff: number;
    /** λ, invalid-action penalty. */
    readonly invalidPenalty: number;
    /** Dimension 4: dynamic filtering (spec §1.4). */
    readonly filter: { readonly enabled: boolean; readonly maxRounds: number; readonly coldStartSteps: number };
    /** DAPO overlong-response shaping. */
    readonly overlong: { readonly enabled: boolean; readonly bufferFrac: number; readonly penaltyFactor: number };
  };
  readonly optim: {
    readonly lr: number;
    readonly weightDecay: number;
    readonly beta1: number;
    readonly beta2: number;
    readonly eps: number;
    /** Global-norm gradient clip. */
    readonly gradClip: number;
    /** Rows per sequential mini-batch (one optimiser step each). */
    readonly miniBatchRows: number;
    readonly epochs: number;
  };
  readonly warmStart: {
    /** Where the starting policy (and π_ref) comes from. */
    readonly source: 'shipped' | 'scratch' | 'none';
    readonly bcUpdates: number;
    readonly bcBatchRows: number;
    readonly bcLr: number;
  };
  readonly training: {
    readonly steps: number;
    readonly validateEvery: number;
    readonly valEpisodes: number;
    readonly valTemperature: number;
    readonly checkpointEvery: number;
    readonly sampleTrajectories: number;
  };
}

/** A dotted-path override value, as the API's ConfigOverrides (strings are parsed by the field's type). */
export type OverrideValue = string | number | boolean | null;

export interface ConfigIssue {
  readonly field: string;
  readonly value: unknown;
  readonly message: string;
}
