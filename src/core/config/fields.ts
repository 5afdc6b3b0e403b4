/**
 * The field table: the ONE place each RunConfig field is documented (what it does, when to change it, and
 * the paper's value where our laptop default differs), typed, bounded and given its base default. The
 * defaults, the `--set` parser, the per-field validation and `CONFIG_FIELDS` (the UI editor) are all
 * generated from it.
 *
 * Base defaults are the reference's yaml defaults (plain GRPO) scaled to a laptop; a preset (presets/) then
 * overrides the dimensions it is about. Paper values: spec §1, §2 and §6.
 */
import type { ConfigFieldDoc } from '../../shared/api';

export type FieldType = 'number' | 'integer' | 'boolean' | 'enum' | 'string';
export type FieldValue = number | boolean | string;

export interface FieldDef {
  readonly path: string;
  readonly type: FieldType;
  readonly default: FieldValue;
  readonly doc: string;
  readonly section: string;
  readonly choices?: readonly string[];
  readonly min?: number;
  readonly max?: number;
  /** The bound is strict (value must be > min / < max). */
  readonly minExclusive?: boolean;
  readonly maxExclusive?: boolean;
  /**
   * A field added after configs were first stored: what its absence means to the code that reads it. A stored
   * config without it (an older run, bundle or recipe) is still a valid config and keeps that behaviour.
   */
  readonly absentMeans?: string;
}

const ENVS = ['sokoban', 'frozenlake', 'household', 'shop'] as const;

export const FIELD_TABLE: readonly FieldDef[] = [
  // ---- run
  { path: 'seed', type: 'integer', default: 1, min: 0, max: 2 ** 31 - 1, section: 'run',
    doc: 'Master seed. Task instances, sampling and weight initialisation derive from it, so (config, seed, app version, backend) fixes a run. Change it to measure seed-to-seed spread: compare methods over ≥ 3 seeds.' },
  // ---- environment
  { path: 'env.name', type: 'enum', default: 'sokoban', choices: ENVS, section: 'environment',
    doc: 'Testbed environment (spec §3). Chosen with the environment picker, not with --set: env-specific defaults (horizon, preset variants) follow it.' },
  { path: 'env.historyWindow', type: 'integer', default: 1, min: 0, max: 8, section: 'environment',
    doc: 'History window k: how many past (observation, action) pairs the prompt repeats. Prompt length, hence cost per row, grows with it (calibration: 60 → 164 tokens from 0 to 2 on Sokoban). Defaults to the environment\'s own: 0 for the fully observed grid worlds (sokoban, frozenlake: the grid is the whole state), 1 for the partially observed household and shop. A shipped warm start is made for its env\'s default k. Paper: 2 (ablations 4, 8).' },
  { path: 'env.maxSteps', type: 'integer', default: 15, min: 1, max: 100, section: 'environment',
    doc: 'Horizon: max turns per episode. Defaults to the environment\'s own horizon; failing episodes run to it, so it bounds the rows per step. Paper: 50 ALFWorld, 15 WebShop.' },
  // ---- model
  { path: 'model.size', type: 'enum', default: 'nano', choices: ['nano', 'small', 'base', 'custom'], section: 'model',
    doc: 'Policy size. nano (≈0.15M params) learns in minutes on a laptop CPU; small/base need more time or tfjs-node. A named size sets the dims below; pick custom to set them yourself. Paper: Qwen3-4B.' },
  { path: 'model.dModel', type: 'integer', default: 64, min: 8, max: 4096, section: 'model', doc: 'Model width (custom size only). Must be divisible by model.nHeads.' },
  { path: 'model.nLayers', type: 'integer', default: 2, min: 1, max: 48, section: 'model', doc: 'Transformer blocks (custom size only).' },
  { path: 'model.nHeads', type: 'integer', default: 4, min: 1, max: 64, section: 'model', doc: 'Attention heads (custom size only); must divide model.dModel.' },
  { path: 'model.dFF', type: 'integer', default: 256, min: 8, max: 16384, section: 'model', doc: 'Feed-forward width (custom size only), usually 4 × dModel.' },
  { path: 'model.maxSeqLen', type: 'integer', default: 384, min: 32, max: 8192, section: 'model',
    doc: 'Context length in tokens (prompt + response), settable with any model size. Default: the size\'s own (nano 384, small/base 768), raised to what the environment\'s prompts need (shop 640). Prompts longer than this lose their oldest tokens; raise it with a long history window. Cost per row grows with it; a shipped warm start only loads with its own context. Paper: 2048–4096 prompt + 512 response.' },
  { path: 'model.geluForm', type: 'enum', default: 'sigmoid', choices: ['sigmoid', 'tanh'], section: 'model', absentMeans: 'tanh',
    doc: 'How the MLP\'s GELU (GPT-2\'s tanh approximation) is computed; both are the same function and differ only in float rounding. sigmoid (default): x·σ(2u), ≈ 7× faster than tanh on tfjs-wasm, whose Tanh is a scalar loop (a forward pass ≈ 25 % faster). tanh: 0.5·x·(1 + tanh u), what builds before this field computed; configs stored before it (older runs, bundles, the shipped warm starts\' recipes) keep it, so they reproduce bit for bit.' },
  // ---- compute
  { path: 'compute.backend', type: 'enum', default: 'auto', choices: ['auto', 'tensorflow-gpu', 'tensorflow', 'wasm', 'cpu'], section: 'compute',
    doc: 'tfjs backend for training. auto picks the fastest one present (tfjs-node-gpu, tfjs-node, wasm, cpu) and the run records which ran. Force one to compare speed or to reproduce a run recorded on it.' },
  { path: 'compute.rolloutEngine', type: 'enum', default: 'onnxruntime', choices: ['onnxruntime', 'tfjs'], section: 'compute',
    doc: 'Engine that samples rollouts. onnxruntime is ≈15× faster than tfjs for inference on CPU; tfjs shares the trainer\'s weights directly (no export) and is the fallback. The gap between sampler and trainer log-probs is logged as mismatch/*.' },
  { path: 'compute.rolloutPrecision', type: 'enum', default: 'fp32', choices: ['fp32', 'fp16', 'int8'], section: 'compute', absentMeans: 'fp32',
    doc: 'Numerics of the onnxruntime rollout engine, the trainer staying float32: a real train–inference mismatch, as vLLM/SGLang sampling in bf16 or fp8 against an fp32 trainer. fp32 (default): the engine matches the trainer to ≈1e-6 per token. fp16: the exported weights in float16 and the graph computing on float16 tensors (onnxruntime\'s CPU provider runs the ops it has no float16 kernel for — the matmuls among them — in float32 between casts, so the residual stream, q/k/v, the KV cache and attention probabilities are rounded to float16, a linear + GELU chain is not). int8: onnxruntime\'s dynamic quantisation of the weight matmuls (int8 weights with one scale per output column, activations quantised per tensor at run time: DynamicQuantizeMatMul). The gap shows in mismatch/* and rollout_corr/*; correct it with algorithm.rolloutCorrection.*. π_ref (the KL reference) stays float32. Needs compute.rolloutEngine=onnxruntime and compute.logProbEngine=trainer.' },
  { path: 'compute.logProbEngine', type: 'enum', default: 'trainer', choices: ['trainer', 'onnxruntime'], section: 'compute',
    doc: 'Where old log-probs (π_old, the IS ratio\'s denominator) are computed. trainer = the training engine, as the reference does (spec §0), and the only way to measure the train/inference mismatch; onnxruntime saves ≈20 % of a laptop step but puts the engine gap into the IS ratio and leaves mismatch/* unmeasured.' },
  { path: 'compute.refLogProbEngine', type: 'enum', default: 'onnxruntime', choices: ['trainer', 'onnxruntime'], section: 'compute',
    doc: 'Where reference log-probs (frozen π_ref, for the KL term) are computed. onnxruntime (default): π_ref never changes, so it is exported once and costs a forward pass on the fast engine; the engine gap (≈1e-6 per token) only touches the KL estimate. trainer: a second tfjs model, the reference implementation\'s choice, several times slower.' },
  { path: 'compute.activationBudgetMB', type: 'integer', default: 2048, min: 1, max: 1048576, section: 'compute',
    doc: 'Most estimated activation memory (MB) one differentiated batch may take. A BC batch or RL mini-batch over it is split into chunks whose gradients are summed: the same update up to float rounding, a little slower. tfjs-wasm\'s heap ends at ≈4 GB, so keep it ≤ 2048 there; raise it on tfjs-node(-gpu) for fewer chunks; lower it if a run dies with "Aborted()" or "table index is out of bounds".' },
  { path: 'compute.workers', type: 'integer', default: 0, min: 0, max: 256, section: 'compute', absentMeans: '1 (one thread)',
    doc: 'K: data-parallel training workers. Each RL mini-batch (and each old-log-prob pass) is split by row into K contiguous shards, each differentiated on its own worker thread with its own tfjs backend; the gradients are summed in worker order and applied in one AdamW update. 0 (default) = one per CPU core of the machine the run starts on on tfjs-wasm, and 1 on native TensorFlow (tfjs-node), whose kernels already use every core (measured: K = 2 was slower there); the K used is recorded with the run and reused by reproduce. 1 = the single-thread trainer. Same config, seed and K give bit-identical runs; a different K changes only the float32 summation order (tiny drift, not a different method). Lower it when other work shares the cores.' },
  { path: 'compute.reuseFirstMiniBatch', type: 'boolean', default: true, section: 'compute', absentMeans: 'false (the separate old-log-prob pass)',
    doc: 'Skip recomputing old log-probs for the first mini-batch of a step: its update runs before any AdamW step, at θ = θ_old, so its own forward pass gives π_old (under stop-gradient) and returns those log-probs for later epochs and mismatch/*. Saves that mini-batch\'s share of the old-log-prob pass (all of it with one mini-batch). The reference recomputes every row and uses the stored π_old on the first mini-batch too, where w ≈ 1 differs from 1 only by float rounding (spec §6.1-4); here w = 1 exactly there. Off by itself for EMPG and an in-reward KL, which need every row\'s π_old before the advantages; false restores the reference\'s separate pass.' },
  { path: 'compute.intraOpThreads', type: 'integer', default: 0, min: 0, max: 1024, section: 'compute', absentMeans: '0 (one per core)',
    doc: 'Native TensorFlow (tfjs-node) only: threads one kernel (a matMul, a reduction) is split over. 0 (default) = one per core of the machine. TensorFlow sizes this pool once per process, when it first loads, and every gradient worker shares it; the count in effect is recorded with the run. Different counts can change float rounding (a run is reproduced with its own). Lower it when other work shares the cores.' },
  { path: 'compute.interOpThreads', type: 'integer', default: 0, min: 0, max: 1024, section: 'compute', absentMeans: '0 (one per core)',
    doc: 'Native TensorFlow (tfjs-node) only: threads that run independent kernels side by side. 0 (default) = one per core. tfjs issues kernels one at a time per thread, so this matters little; like compute.intraOpThreads it is fixed when TensorFlow first loads in the process and recorded with the run.' },
  // ---- rollout / batch
  { path: 'rollout.tasksPerStep', type: 'integer', default: 4, min: 1, max: 1024, section: 'batch',
    doc: 'B: task instances per step; each is rolled out G times. More tasks = less noisy updates, longer steps. Paper: 16.' },
  { path: 'rollout.groupSize', type: 'integer', default: 4, min: 1, max: 64, section: 'batch',
    doc: 'G: rollouts per task with the same seed (the group the advantage compares against). Group-based advantages need ≥ 2. Paper: 8.' },
  { path: 'rollout.temperature', type: 'number', default: 1.0, min: 0, minExclusive: true, max: 5, section: 'batch',
    doc: 'Sampling temperature of training rollouts. Paper: 1.0 (keep it: the IS ratio assumes the sampler is the policy).' },
  { path: 'rollout.topP', type: 'number', default: 1.0, min: 0, minExclusive: true, max: 1, section: 'batch', doc: 'Nucleus cut of training rollouts (1 = off). Paper: 1.' },
  { path: 'rollout.topK', type: 'integer', default: 0, min: 0, max: 100000, section: 'batch', doc: 'Top-k cut of training rollouts (0 = off). Paper: off.' },
  { path: 'rollout.policyLag', type: 'integer', default: 0, min: 0, max: 8, section: 'batch', absentMeans: '0 (rollouts by the current policy)',
    doc: 'Policy lag k: training rollouts are sampled by the policy of k updates (RL steps) ago, as asynchronous trainers (one-step-off / k-step-off pipelines) do; π_old and validation use the current policy, so even the first mini-batch is off-policy by k steps. A pressure-ladder knob (training.pressure) and a test bed for rollout correction. Needs compute.logProbEngine=trainer. 0 = on-policy rollouts (the paper).' },
  { path: 'rollout.maxResponseTokens', type: 'integer', default: 32, min: 4, max: 4096, section: 'batch',
    doc: 'Max response tokens per turn. The templated think + action is ≈16 tokens, so 32 leaves room; responses cut here usually fail the format. Paper: 512.' },
  // ---- dimension 1: aggregation
  { path: 'algorithm.aggregation', type: 'enum', default: 'token-mean', choices: ['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum', 'seq-mean-token-sum-norm'], section: 'aggregation',
    doc: 'Loss aggregation (dimension 1, spec §1.1), also used for the entropy and KL terms. token-mean weighs every token equally (long turns dominate); seq-mean-token-mean weighs every turn equally (GRPO_ST, GSPO, SAMPO); seq-mean-token-sum is Dr.GRPO\'s.' },
  // ---- dimension 2: clipping
  { path: 'algorithm.policyLoss.mode', type: 'enum', default: 'vanilla', choices: ['vanilla', 'cispo', 'sapo', 'gspo'], section: 'clipping',
    doc: 'Importance-sampling clipping (dimension 2, spec §1.2). vanilla: PPO token clip + dual clip (GRPO). cispo / sapo: tolerant (gradient never fully cut; fast early, then collapse in the paper). gspo: hard clip of the per-turn sequence ratio (steady; SAMPO).' },
  { path: 'algorithm.policyLoss.clipRatioLow', type: 'number', default: 0.2, min: 0, max: 1, section: 'clipping',
    doc: 'ε_lo: the ratio is clipped below at 1 − ε_lo. 1.0 removes the lower bound (the CISPO scripts). Paper: 0.2 (GRPO), 1.0 (CISPO), 3e-3 (GSPO/SAMPO; 3e-2 WebShop GSPO).' },
  { path: 'algorithm.policyLoss.clipRatioHigh', type: 'number', default: 0.2, min: 0, max: 10, section: 'clipping',
    doc: 'ε_hi: the ratio is clipped above at 1 + ε_hi. Raise it (DAPO "clip-higher", 0.28) to let low-probability tokens grow. Paper: 0.2; 4e-3 for GSPO/SAMPO (sequence ratios move far less than token ratios).' },
  { path: 'algorithm.policyLoss.clipRatioC', type: 'number', default: 3.0, min: 1, minExclusive: true, max: 100, section: 'clipping',
    doc: 'Dual-clip cap c (vanilla only): for A < 0 the loss is capped at −A·c, so a huge ratio on a bad token cannot blow up the update. Paper: 3.' },
  { path: 'algorithm.policyLoss.tauPos', type: 'number', default: 1.0, min: 0, minExclusive: true, max: 100, section: 'clipping',
    doc: 'SAPO temperature for rows with positive mean advantage. Higher = the gate closes faster off-policy. Paper: 1.0 (an older ALFWorld script: 2.0).' },
  { path: 'algorithm.policyLoss.tauNeg', type: 'number', default: 1.05, min: 0, minExclusive: true, max: 100, section: 'clipping',
    doc: 'SAPO temperature for rows with non-positive mean advantage; kept above tauPos so negative updates decay faster. Paper: 1.05 (older script: 2.1).' },
  { path: 'algorithm.policyLoss.sapoPerTokenTau', type: 'boolean', default: false, section: 'clipping',
    doc: 'SAPO: choose τ per token by the sign of that token\'s advantage instead of the row\'s mean advantage (the reference\'s choice, default off). Identical when advantages are per row.' },
  { path: 'algorithm.policyLoss.seqMask.enabled', type: 'boolean', default: false, section: 'clipping',
    doc: 'Sequence masking (GRPO_SM, spec §1.2e) on vanilla, cispo or sapo: drop negative-advantage rows whose mean log-ratio has fallen below −δ — the rows the paper finds drive collapse (Findings 2–3).' },
  { path: 'algorithm.policyLoss.seqMask.delta', type: 'number', default: 0.223, min: 0, max: 10, section: 'clipping',
    doc: 'δ_sm of sequence masking: a row with A < 0 is dropped when mean(log π_old − log π_θ) > δ. Default 0.223 ≈ ln 1.25 (the code default); the release scripts use 3e-3 (much stricter).' },
  // ---- dimension 3: advantage
  { path: 'algorithm.advantage.estimator', type: 'enum', default: 'grpo', choices: ['grpo', 'grpo_traj', 'drgrpo', 'gigpo', 'empg', 'rloo'], section: 'advantage',
    doc: 'Advantage design (dimension 3, spec §1.3). grpo: group-normalised episode outcome over turn rows; gigpo: + a step term over identical anchor states (turn-level credit; SAMPO); empg: entropy-modulated; drgrpo: no std; rloo: leave-one-out; grpo_traj: one sample per trajectory.' },
  { path: 'algorithm.advantage.normByStd', type: 'boolean', default: true, section: 'advantage',
    doc: 'Divide the group-centred outcome by the group std (GRPO). Off = Dr.GRPO-style centring, which does not over-weight near-uniform groups.' },
  { path: 'algorithm.advantage.crossSteps', type: 'boolean', default: true, section: 'advantage',
    doc: 'Group statistics pool every turn row of the group (reference default: longer trajectories weigh more). Off: one sample per trajectory, the mean of its rows\' scores (invalid penalty included), as the reference\'s vanilla_grpo.' },
  { path: 'algorithm.advantage.epsilon', type: 'number', default: 1e-6, min: 0, max: 1, section: 'advantage', doc: 'ε in (x − μ)/(σ + ε). Paper: 1e-6.' },
  { path: 'algorithm.advantage.gamma', type: 'number', default: 0.95, min: 0, max: 1, section: 'advantage',
    doc: 'GiGPO: discount of the step return Σ γ^{j−k} ρ_j that the step term normalises. Lower = more myopic credit. Paper: 0.95.' },
  { path: 'algorithm.advantage.stepAdvantageW', type: 'number', default: 1.0, min: 0, max: 100, section: 'advantage', doc: 'GiGPO: weight ω of the step (anchor-state) term against the episode term. Paper: 1.' },
  { path: 'algorithm.advantage.gigpoMode', type: 'enum', default: 'mean_std_norm', choices: ['mean_std_norm', 'mean_norm'], section: 'advantage',
    doc: 'GiGPO normalisation of both terms: mean_std_norm (x − μ)/(σ + ε) as in the ALFWorld scripts, or mean_norm x − μ as in WebShop SAMPO.' },
  { path: 'algorithm.advantage.empg.k', type: 'number', default: 1, min: 0, max: 100, section: 'advantage', doc: 'EMPG: k of the confidence scaling g = e^{−kĤ}/mean(e^{−kĤ}). Paper: 1.' },
  { path: 'algorithm.advantage.empg.kf', type: 'number', default: 1, min: 0, max: 100, section: 'advantage', doc: 'EMPG: k_f of the future-clarity bonus f = e^{−k_f Ĥ}. Paper: 1.' },
  { path: 'algorithm.advantage.empg.zeta', type: 'number', default: 0.05, min: 0, max: 10, section: 'advantage', doc: 'EMPG: ζ, weight of the next turn\'s clarity bonus. Paper: 0.05.' },
  // ---- stability recipe
  { path: 'algorithm.kl.enabled', type: 'boolean', default: true, section: 'stability',
    doc: 'Auxiliary KL loss to the frozen warm-start policy π_ref (spec §2.2: one of the three ingredients the paper calls crucial). Off lets the policy drift freely from its BC start.' },
  { path: 'algorithm.kl.type', type: 'enum', default: 'low_var_kl', choices: ['kl', 'abs', 'mse', 'low_var_kl'], section: 'stability',
    doc: 'KL estimator: low_var_kl (k3, clamped; paper), kl (k1), abs, mse (k2).' },
  { path: 'algorithm.kl.coef', type: 'number', default: 0.01, min: 0, max: 10, section: 'stability', doc: 'β_KL. Raise it if the policy forgets its format early; lower it if learning stalls. Paper: 0.01.' },
  { path: 'algorithm.kl.inReward', type: 'boolean', default: false, section: 'stability',
    doc: 'Also subtract β_KL·Σ_t KL(π_old‖π_ref) from each row\'s score before the advantage (verl use_kl_in_reward). Paper: off.' },
  { path: 'algorithm.entropyCoeff', type: 'number', default: 0.001, min: 0, max: 1, section: 'stability',
    doc: 'β_H: entropy bonus (loss − β_H·entropy). Raise it if the policy collapses to one answer too early. Paper: 0.001 (yaml default, spec Q6).' },
  { path: 'algorithm.invalidPenalty', type: 'number', default: 0.1, min: 0, max: 10, section: 'stability',
    doc: 'λ: subtracted from an invalid turn\'s score (and GiGPO step return), on that turn only (spec §2.2, §6.1). The strict-format penalty that keeps the output parseable. Paper: 0.1.' },
  // ---- dimension 4: filtering
  { path: 'algorithm.filter.enabled', type: 'boolean', default: false, section: 'filtering',
    doc: 'Dynamic filtering (dimension 4, spec §1.4, DAPO): drop groups whose G episode returns are all equal (no signal) and roll out more to fill the batch. Helps with a rich advantage (GiGPO), hurt on GRPO in the paper (Finding 5). Costs extra rollouts.' },
  { path: 'algorithm.filter.maxRounds', type: 'integer', default: 3, min: 1, max: 20, section: 'filtering',
    doc: 'Rollout rounds per step at most; the last round tops the batch up with uniform groups if needed. Paper: 3.' },
  { path: 'algorithm.filter.coldStartSteps', type: 'integer', default: 3, min: 0, max: 100000, section: 'filtering',
    doc: 'Steps 1..n use plain rollouts before filtering starts (early groups are mostly uniform and filtering would only burn rollouts). Paper: 15 of 200 steps (ALFWorld), 5 of 250 (WebShop); laptop: scaled to our shorter runs.' },
  { path: 'algorithm.overlong.enabled', type: 'boolean', default: false, section: 'filtering',
    doc: 'DAPO overlong shaping: a linear score penalty for responses in the last bufferFrac of maxResponseTokens. Used by the reference\'s DAPO WebShop script only.' },
  { path: 'algorithm.overlong.bufferFrac', type: 'number', default: 0.2, min: 0, minExclusive: true, max: 1, maxExclusive: true, section: 'filtering', doc: 'Overlong buffer as a share of maxResponseTokens (reference: ⌊512/5⌋ = 102 tokens).' },
  { path: 'algorithm.overlong.penaltyFactor', type: 'number', default: 0.1, min: 0, max: 10, section: 'filtering', doc: 'Overlong penalty at the max length. Reference: 0.1.' },
  // ---- dimension 5: rollout correction (verl algorithm.rollout_correction; docs/guides/rollout-correction.md)
  { path: 'algorithm.rolloutCorrection.is', type: 'enum', default: 'off', choices: ['off', 'token', 'sequence', 'icepop'], section: 'correction', absentMeans: 'off',
    doc: 'Importance weights against the rollout engine\'s log-probs (verl rollout_is): the rollout engine (onnxruntime) and the trainer (tfjs) disagree slightly, so even the first mini-batch is off-policy. token = truncated IS (TIS, biased, low variance); sequence = one weight per turn, the product of its token ratios (unbiased, high variance); icepop = a token keeps its ratio as weight inside [isThresholdLower, isThreshold] and gets 0 outside (IcePop, slime/OpenRLHF). Off (default) trains exactly as before. Weights multiply each token\'s policy loss; rollout_corr/* logs their statistics.' },
  { path: 'algorithm.rolloutCorrection.isThreshold', type: 'number', default: 2.0, min: 1, minExclusive: true, max: 1e6, section: 'correction', absentMeans: '2.0',
    doc: 'Truncation of the IS weights (verl rollout_is_threshold): weights above it are cut to it (icepop: tokens above it get weight 0). Lower = less variance, more bias. verl: 2.0 (typical 1.5–5 token level, 2–10 sequence level); OpenRLHF IcePop: 5.0.' },
  { path: 'algorithm.rolloutCorrection.isThresholdLower', type: 'number', default: 0.5, min: 0, max: 1, section: 'correction', absentMeans: '0.5',
    doc: 'IcePop only: tokens whose ratio π_trainer/π_rollout is below it get weight 0 (OpenRLHF default 0.5; slime tis_clip_low, default 0). In [0, 1], so always below isThreshold (> 1).' },
  { path: 'algorithm.rolloutCorrection.isBatchNormalize', type: 'boolean', default: false, section: 'correction', absentMeans: 'false',
    doc: 'Divide the truncated weights by their batch mean so they average 1 (verl rollout_is_batch_normalize): keeps the effective learning rate while reweighting. token and sequence only.' },
  { path: 'algorithm.rolloutCorrection.rs', type: 'string', default: '', section: 'correction', absentMeans: '"" (no rejection)',
    doc: 'Rejection (verl rollout_rs): comma-separated options that ALL must pass, else the token (token_*) or the whole turn (seq_*) leaves the loss: token_k1|k2|k3, seq_sum_k1|k2|k3, seq_mean_k1|k2|k3, seq_max_k2|k3 (k1 = −log ratio, k2 = ½ log ratio², k3 = ratio − 1 − log ratio). E.g. seq_mean_k1 (geometric-mean ratio bounds, "MIS") or token_k1,seq_max_k3. Empty (default) = none.' },
  { path: 'algorithm.rolloutCorrection.rsThreshold', type: 'string', default: '', section: 'correction', absentMeans: '""',
    doc: 'Thresholds of the rejection options (verl rollout_rs_threshold): one value for all or one per option, comma separated. k1 options take ratio bounds "lower_upper" (e.g. 0.5_2.0), or one upper U meaning lower = 1/U; k2/k3 options take one positive upper bound (e.g. 0.01).' },
  { path: 'algorithm.rolloutCorrection.bypassMode', type: 'boolean', default: false, section: 'correction', absentMeans: 'false',
    doc: 'Bypass mode (verl bypass_mode): skip the old-log-prob pass and use the rollout engine\'s log-probs as π_old (two policies instead of three; saves that pass). The policy loss becomes lossType; IS and rejection are computed inside the loss from the current log-probs. Needs algorithm.policyLoss.mode=vanilla (the PPO-clip parameters are used) and no sequence masking.' },
  { path: 'algorithm.rolloutCorrection.lossType', type: 'enum', default: 'ppo_clip', choices: ['ppo_clip', 'reinforce'], section: 'correction', absentMeans: 'ppo_clip',
    doc: 'Bypass mode\'s loss (verl loss_type): ppo_clip = PPO-clip with π_old := π_rollout (the ratio is the IS correction; IS weights only logged); reinforce = −A·log π·w with the IS weights (no clipping). Used only with bypassMode.' },
  // ---- optimiser
  { path: 'optim.lr', type: 'number', default: 1e-4, min: 0, minExclusive: true, max: 1, section: 'optimiser',
    doc: 'AdamW learning rate, constant. Paper: 1e-6 for a 4B model; a 0.1–0.3M-parameter policy needs a far larger step, and 1e-4 is what the calibration RL runs used (calm grad norms, format kept). Lower it first if grad norms spike.' },
  { path: 'optim.weightDecay', type: 'number', default: 0.01, min: 0, max: 1, section: 'optimiser', doc: 'AdamW decoupled weight decay. Paper: 0.01.' },
  { path: 'optim.beta1', type: 'number', default: 0.9, min: 0, max: 1, maxExclusive: true, section: 'optimiser', doc: 'Adam β1 (first-moment decay); rarely worth changing.' },
  { path: 'optim.beta2', type: 'number', default: 0.999, min: 0, max: 1, maxExclusive: true, section: 'optimiser', doc: 'Adam β2 (second-moment decay); rarely worth changing.' },
  { path: 'optim.eps', type: 'number', default: 1e-8, min: 0, minExclusive: true, max: 1, section: 'optimiser', doc: 'Adam ε (denominator floor); rarely worth changing.' },
  { path: 'optim.gradClip', type: 'number', default: 1.0, min: 0, minExclusive: true, max: 1000, section: 'optimiser',
    doc: 'Global L2 gradient-norm clip; a non-finite gradient skips the update (spec §6.1.6). Paper: 1.0.' },
  { path: 'optim.miniBatchRows', type: 'integer', default: 64, min: 1, max: 100000, section: 'optimiser',
    doc: 'Turn rows per sequential mini-batch, one optimiser step each. Fewer rows than the batch holds = several updates per step, so later mini-batches are off-policy: this is what the clipping dimension is about. Paper: 256 (ALFWorld), 128 (WebShop).' },
  { path: 'optim.epochs', type: 'integer', default: 1, min: 1, max: 16, section: 'optimiser', doc: 'Passes over the batch per step. Paper: 1.' },
  // ---- warm start
  { path: 'warmStart.source', type: 'enum', default: 'shipped', choices: ['shipped', 'scratch', 'none'], section: 'warm start',
    doc: 'Starting policy, also π_ref: shipped = the app\'s behaviour-cloned checkpoint for this env and size (the paper starts RL from an SFT model); scratch = run the BC recipe first; none = random init (RL from a weak start shows nothing, calibration).' },
  { path: 'warmStart.bcUpdates', type: 'integer', default: 600, min: 0, max: 1000000, section: 'warm start', doc: 'BC updates when source = scratch. More = a stronger start (calibration: 500 → 4 %, 1500 → 13 % greedy success on Sokoban).' },
  { path: 'warmStart.bcBatchRows', type: 'integer', default: 64, min: 1, max: 100000, section: 'warm start', doc: 'Expert turn rows per BC update.' },
  { path: 'warmStart.bcLr', type: 'number', default: 1e-3, min: 0, minExclusive: true, max: 1, section: 'warm start', doc: 'BC learning rate (AdamW).' },
  // ---- training
  { path: 'training.steps', type: 'integer', default: 40, min: 1, max: 1000000, section: 'training', doc: 'RL steps (one batch each). Paper: 200 (ALFWorld), 250 (WebShop).' },
  { path: 'training.validateEvery', type: 'integer', default: 5, min: 0, max: 1000000, section: 'training', doc: 'Validate every n steps (0 = only at the end). Paper: 5 (ALFWorld), 10 (WebShop).' },
  { path: 'training.validateBeforeTraining', type: 'boolean', default: true, section: 'training',
    doc: 'With periodic validation on (validateEvery > 0), also validate the starting policy (the warm start) before the first update, logged at step 0 — verl\'s val_before_train. Later validations are compared with it (the success-collapse alert); turn off to save one validation.' },
  { path: 'training.valEpisodes', type: 'integer', default: 64, min: 1, max: 100000, section: 'training',
    doc: 'Held-out episodes per validation (group size 1). ±6 points of noise at 64 episodes; use ≥ 200 for claims. Paper: 128 val envs.' },
  { path: 'training.valTemperature', type: 'number', default: 0.6, min: 0, max: 5, section: 'training', doc: 'Validation sampling temperature (0 = greedy). Paper: 0.6.' },
  { path: 'training.checkpointEvery', type: 'integer', default: 10, min: 0, max: 1000000, section: 'training', doc: 'Save a resumable checkpoint every n steps (0 = only at the end).' },
  { path: 'training.pressure', type: 'integer', default: 0, min: 0, max: 4, section: 'training', absentMeans: '0',
    doc: 'Pressure-ladder level (0–4): setting it applies that level\'s knobs — optim.miniBatchRows, optim.epochs, optim.lr, rollout.policyLag — after the preset and before your other overrides, the same knobs for every preset (src/core/config/pressure.ts lists them with a why each). 0 = the lab default. The field records the level; the knobs themselves are the fields, so an explicit override of one of them wins.' },
  { path: 'training.sampleTrajectories', type: 'integer', default: 4, min: 0, max: 1000, section: 'training', doc: 'Training trajectories stored per step for the trajectory viewer.' },
];

export const FIELDS_BY_PATH: ReadonlyMap<string, FieldDef> = new Map(FIELD_TABLE.map((f) => [f.path, f]));

/** The documented fields for the UI's "Customise" editor and `catalog.configFields`. */
export const CONFIG_FIELDS: readonly ConfigFieldDoc[] = FIELD_TABLE.map((f) => ({
  path: f.path,
  type: f.type,
  doc: f.doc,
  default: f.default,
  section: f.section,
  ...(f.choices ? { choices: [...f.choices] } : {}),
  ...(f.min !== undefined ? { min: f.min } : {}),
  ...(f.max !== undefined ? { max: f.max } : {}),
}));
