/**
 * RunConfig: everything a run is a function of (with the seed, the app version and the backend). The shape is
 * the one agreed in the team contract (notes/common.md); fields may be added, never renamed.
 *
 * The one-line comments here are for readers of the code. Each field's full documentation — what it does,
 * when to change it, the paper's value where the laptop default differs — lives once in the field table
 * (fields.ts), which also feeds `CONFIG_FIELDS` (the UI's "Customise" editor and `catalog.configFields`).
 */
import type { AdvantageName } from '../algorithms/advantages/types';
import type { AggregationName } from '../algorithms/aggregation/types';
import type { KlName } from '../algorithms/kl/types';
import type { PolicyLossName } from '../algorithms/losses/types';
import type { GeluForm } from '../agent/model';

export type EnvName = 'sokoban' | 'frozenlake' | 'household' | 'shop';
export type ModelSizeName = 'nano' | 'small' | 'base' | 'custom';
export type BackendName = 'auto' | 'tensorflow-gpu' | 'tensorflow' | 'wasm' | 'cpu';
/** Numerics of the onnxruntime rollout engine (compute.rolloutPrecision); the trainer is always float32. */
export type RolloutPrecision = 'fp32' | 'fp16' | 'int8';

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
    /** Named policy size (nano ≈0.15M params is the laptop default; paper: Qwen3-4B); `custom` uses the dims below. */
    readonly size: ModelSizeName;
    /** Width; set by the named size, editable with size `custom`. */
    readonly dModel: number;
    /** Transformer blocks. */
    readonly nLayers: number;
    /** Attention heads; must divide dModel. */
    readonly nHeads: number;
    /** Feed-forward width. */
    readonly dFF: number;
    /** Context length in tokens (prompt + response). */
    readonly maxSeqLen: number;
    /**
     * How GELU's tanh approximation is computed (one function, two float roundings): absent in configs stored
     * before the field, which keep 'tanh' and so reproduce bit for bit.
     */
    readonly geluForm?: GeluForm;
    /**
     * `lab` (the lab's own model) or `hf:PATH`, a local Hugging Face model folder; absent in configs stored
     * before the field (= lab).
     */
    readonly source?: string;
    /** LoRA on an hf: model (rank 0 = full fine-tuning); absent in configs stored before the field (= no LoRA). */
    readonly lora?: {
      /** Adapter rank r; 0 trains every weight. */
      readonly rank: number;
      /** Scale numerator: updates are multiplied by alpha / rank. */
      readonly alpha: number;
      /** Dropout on the adapter input during the update only. */
      readonly dropout: number;
      /** Target projections joined by `+` (q_proj+v_proj …). */
      readonly targets: string;
    };
  };
  readonly compute: {
    /** tfjs backend for training; `auto` picks the fastest available and the run records which ran. */
    readonly backend: BackendName;
    /** Engine that samples rollouts (onnxruntime ≈15× faster on CPU; tfjs is the fallback). */
    readonly rolloutEngine: 'onnxruntime' | 'tfjs';
    /**
     * Numerics of the onnxruntime rollout engine: fp32 (the trainer's), fp16 weights and activations, or dynamic
     * int8 weight matmuls — a real train–inference mismatch; absent in configs stored before the field (= fp32).
     */
    readonly rolloutPrecision?: RolloutPrecision;
    /** Where old log-probs are computed (the reference recomputes them in the trainer). */
    readonly logProbEngine: 'trainer' | 'onnxruntime';
    /** Where frozen reference log-probs are computed (default onnxruntime: exported once, fast). */
    readonly refLogProbEngine: 'trainer' | 'onnxruntime';
    /** Activation-memory budget per differentiated batch (MB); bigger batches are split into gradient-summed chunks. */
    readonly activationBudgetMB: number;
    /** K data-parallel gradient workers; 0 = one per core (resolved in src/main, the core cannot see the machine). */
    readonly workers: number;
    /**
     * The first mini-batch's old log-probs come from the update's own first forward pass (θ = θ_old there) instead
     * of a separate pass; absent in configs stored before the field (they keep the separate pass).
     */
    readonly reuseFirstMiniBatch?: boolean;
    /** Native TensorFlow's intra-op threads (0 = one per core); absent in configs stored before the field (= 0). */
    readonly intraOpThreads?: number;
    /** Native TensorFlow's inter-op threads (0 = one per core); absent in configs stored before the field (= 0). */
    readonly interOpThreads?: number;
  };
  readonly rollout: {
    /** B: task instances per step (laptop 4; paper 16). */
    readonly tasksPerStep: number;
    /** G: rollouts per task, the group advantages compare (laptop 4; paper 8; ≥ 2 for group estimators). */
    readonly groupSize: number;
    /** Sampling temperature of training rollouts (paper 1.0). */
    readonly temperature: number;
    /** Nucleus cut of training rollouts (1 = off; paper 1). */
    readonly topP: number;
    /** Top-k cut of training rollouts (0 = off). */
    readonly topK: number;
    /** Max response tokens per turn (laptop 32; paper 512). */
    readonly maxResponseTokens: number;
    /** Policy lag k: rollouts by the policy of k RL steps ago; absent in configs stored before the field (0). */
    readonly policyLag?: number;
  };
  readonly algorithm: {
    /** Dimension 1 — loss aggregation, also used for the entropy and KL terms (spec §1.1). */
    readonly aggregation: AggregationName;
    /** Dimension 2 — importance-sampling clipping (spec §1.2). */
    readonly policyLoss: {
      /** vanilla (GRPO token clip), cispo / sapo (tolerant), gspo (sequence-level; SAMPO). */
      readonly mode: PolicyLossName;
      /** ε_lo: clip below at 1 − ε_lo (1.0 = no lower bound, CISPO). */
      readonly clipRatioLow: number;
      /** ε_hi: clip above at 1 + ε_hi. */
      readonly clipRatioHigh: number;
      /** Dual-clip cap c > 1 for A < 0 (vanilla). */
      readonly clipRatioC: number;
      /** SAPO temperature for positive-advantage rows. */
      readonly tauPos: number;
      /** SAPO temperature for non-positive-advantage rows. */
      readonly tauNeg: number;
      /** SAPO: τ by each token's advantage sign instead of the row mean. */
      readonly sapoPerTokenTau: boolean;
      /** Sequence masking (GRPO_SM) on vanilla / cispo / sapo: drop A<0 rows whose mean log-ratio fell below −δ. */
      readonly seqMask: { readonly enabled: boolean; readonly delta: number };
    };
    /** Dimension 3 — advantage design (spec §1.3). */
    readonly advantage: {
      /** grpo, grpo_traj, drgrpo, gigpo (SAMPO), empg, rloo. */
      readonly estimator: AdvantageName;
      /** Divide by the group std (off = Dr.GRPO centring). */
      readonly normByStd: boolean;
      /** Group statistics over all turn rows (reference default) vs one sample per trajectory. */
      readonly crossSteps: boolean;
      /** ε in (x − μ)/(σ + ε), 1e-6. */
      readonly epsilon: number;
      /** GiGPO step-return discount γ (0.95). */
      readonly gamma: number;
      /** GiGPO weight ω of the step term (1). */
      readonly stepAdvantageW: number;
      /** GiGPO normalisation: mean_std_norm (ALFWorld) or mean_norm (WebShop). */
      readonly gigpoMode: 'mean_std_norm' | 'mean_norm';
      /** EMPG k, k_f and ζ (1, 1, 0.05). */
      readonly empg: { readonly k: number; readonly kf: number; readonly zeta: number };
    };
    /** KL to the frozen warm-start policy (spec §2.1): k3 with β 0.01 in the paper; inReward = verl use_kl_in_reward. */
    readonly kl: { readonly enabled: boolean; readonly type: KlName; readonly coef: number; readonly inReward: boolean };
    /** β_H, entropy bonus (paper 0.001). */
    readonly entropyCoeff: number;
    /** λ, subtracted from an invalid turn's score and step return (paper 0.1). */
    readonly invalidPenalty: number;
    /** Dimension 4 — DAPO dynamic filtering (spec §1.4): rounds per step and plain-rollout cold start. */
    readonly filter: { readonly enabled: boolean; readonly maxRounds: number; readonly coldStartSteps: number };
    /** DAPO overlong-response shaping (buffer share of max length, penalty at max length). */
    readonly overlong: { readonly enabled: boolean; readonly bufferFrac: number; readonly penaltyFactor: number };
    /**
     * Dimension 5 — rollout correction against the rollout engine's log-probs (verl algorithm.rollout_correction):
     * absent in configs stored before the field, which train without it (rolloutCorrectionOf resolves it).
     */
    readonly rolloutCorrection?: {
      /** IS level: off, token (TIS), sequence, icepop. */
      readonly is: 'off' | 'token' | 'sequence' | 'icepop';
      /** Truncation (token/sequence) or upper bound (icepop) of the weights. */
      readonly isThreshold: number;
      /** IcePop's lower bound. */
      readonly isThresholdLower: number;
      /** Divide the truncated weights by their batch mean. */
      readonly isBatchNormalize: boolean;
      /** Comma-separated rejection options ('' = none). */
      readonly rs: string;
      /** Their thresholds (k1: "lower_upper"). */
      readonly rsThreshold: string;
      /** π_old := the rollout engine's log-probs; the loss becomes lossType. */
      readonly bypassMode: boolean;
      /** Bypass loss: ppo_clip or reinforce. */
      readonly lossType: 'ppo_clip' | 'reinforce';
    };
  };
  readonly optim: {
    /** AdamW learning rate (laptop 1e-4 for a tiny policy; paper 1e-6 for 4B). */
    readonly lr: number;
    /** Decoupled weight decay (0.01). */
    readonly weightDecay: number;
    /** Adam β1. */
    readonly beta1: number;
    /** Adam β2. */
    readonly beta2: number;
    /** Adam ε. */
    readonly eps: number;
    /** Global-norm gradient clip (1.0); non-finite gradients skip the update. */
    readonly gradClip: number;
    /** Rows per sequential mini-batch, one optimiser step each (laptop 64; paper 256/128). */
    readonly miniBatchRows: number;
    /** Passes over the batch per step (1). */
    readonly epochs: number;
  };
  readonly warmStart: {
    /** Where the starting policy (also π_ref) comes from: shipped BC checkpoint, BC from scratch, or none. */
    readonly source: 'shipped' | 'scratch' | 'none';
    /** BC updates when source = scratch. */
    readonly bcUpdates: number;
    /** Expert rows per BC update. */
    readonly bcBatchRows: number;
    /** BC learning rate. */
    readonly bcLr: number;
  };
  readonly training: {
    /** RL steps (laptop 40; paper 200/250). */
    readonly steps: number;
    /** Validate every n steps (0 = only at the end; paper 5/10). */
    readonly validateEvery: number;
    /** With validateEvery > 0, validate the starting policy before the first update (logged at step 0). */
    readonly validateBeforeTraining: boolean;
    /** Held-out episodes per validation (laptop 64; paper 128). */
    readonly valEpisodes: number;
    /** Validation sampling temperature (paper 0.6). */
    readonly valTemperature: number;
    /** Checkpoint every n steps (0 = only at the end). */
    readonly checkpointEvery: number;
    /** Training trajectories stored per step for the viewer. */
    readonly sampleTrajectories: number;
    /** Pressure-ladder level 0–4 (pressure.ts); absent in configs stored before the field (0). */
    readonly pressure?: number;
  };
}

/** A dotted-path override value, as the API's ConfigOverrides (strings are parsed by the field's type). */
export type OverrideValue = string | number | boolean | null;

export interface ConfigIssue {
  readonly field: string;
  readonly value: unknown;
  readonly message: string;
}
