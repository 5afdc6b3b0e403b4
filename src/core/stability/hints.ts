/**
 * What each alert tells the researcher to try, written once here and fitted to the run's recipe.
 *
 * Why fitted: a hint that says "try SAMPO" under a SAMPO run's alert is advice the user has already taken, and
 * it hides the advice that is left (a lower learning rate, a KL penalty, a larger group). The paper's stability
 * levers (spec §4 and §5: sequence-level clipping or sequence masking, KL to π_ref, dynamic filtering, overlong
 * shaping, the learning rate) are each named only when the run does not use them yet, and with the config field
 * and its current value when it does. Without a recipe (a metrics stream alone) the hints are the generic ones.
 */
import { FIELDS_BY_PATH } from '../config/fields';
import { presetDef } from '../config/presets/index';

/** The parts of a run's config that decide which advice is left. Read from the resolved RunConfig's JSON. */
export interface RunRecipe {
  readonly preset: string;
  /** algorithm.policyLoss.mode: vanilla | cispo | sapo | gspo. */
  readonly policyLoss: string;
  readonly seqMask: boolean;
  /** algorithm.kl.coef when algorithm.kl.enabled, else 0. */
  readonly klCoef: number;
  readonly entropyCoeff: number;
  readonly filtering: boolean;
  readonly overlong: boolean;
  readonly lr: number;
  readonly temperature: number;
  readonly groupSize: number;
  readonly maxResponseTokens: number;
  /** Numeric settings far (over 100×) from the preset's value: the likely cause of a numerical failure. */
  readonly unusual?: readonly UnusualSetting[];
  /** rollout.policyLag (0 when absent): rollouts sampled by the policy of k updates ago. */
  readonly policyLag?: number;
}

export interface UnusualSetting {
  readonly path: string;
  readonly value: number;
  /** The preset's value (its override, else the base default). */
  readonly reference: number;
}

/** Settings a non-finite loss, gradient or update can come from (eps = 1e-300 is 0 in float32). */
const NUMERIC_SUSPECTS = [
  'optim.eps',
  'optim.lr',
  'optim.gradClip',
  'optim.weightDecay',
  'rollout.temperature',
  'algorithm.advantage.epsilon',
  'algorithm.kl.coef',
  'algorithm.entropyCoeff',
];
const UNUSUAL_RATIO = 100;

function unusualSettings(c: Json, preset: string): UnusualSetting[] {
  const over = presetDef(preset)?.overrides ?? {};
  const out: UnusualSetting[] = [];
  for (const path of NUMERIC_SUSPECTS) {
    const [a, b, d] = path.split('.');
    const v = num(d === undefined ? obj(c[a])?.[b] : obj(obj(c[a])?.[b])?.[d]);
    const own = Object.hasOwn(over, path) ? over[path] : FIELDS_BY_PATH.get(path)?.default;
    if (v === undefined || typeof own !== 'number' || own <= 0 || v <= 0) continue;
    if (v / own > UNUSUAL_RATIO || own / v > UNUSUAL_RATIO) out.push({ path, value: v, reference: own });
  }
  return out;
}

export interface Hints {
  /** Updates too large for the clipping in use (grad-norm, clip fraction, validity, success). */
  readonly clipping: string;
  readonly gradNorm: string;
  readonly formatLoss: string;
  readonly admissibleLoss: string;
  readonly successLoss: string;
  readonly entropyCollapse: string;
  readonly entropyBlowup: string;
  /** The per-step KL between the rollout policy and the updated one is large. */
  readonly klStep: string;
  /** The policy drifts far from π_ref. */
  readonly klDrift: string;
  readonly deadSignal: string;
  readonly length: string;
  readonly nonFinite: string;
  readonly skipped: string;
  readonly mismatch: string;
  /** The rollout engine and the trainer drift apart (engine_gap). */
  readonly engineGap: string;
  /**
   * Not advice: the run's rollout.policyLag (0 without a lab recipe). With a lag the rollouts' behaviour log-probs
   * against π_old hold the policy's own k-update move, which the engine-gap rules must not read as an engine gap.
   */
  readonly policyLag: number;
  /** Responses collapse onto one answer, token or template (response_collapse). */
  readonly responseCollapse: string;
  /** The reward rises on format alone while KL to the reference climbs (format_hacking). */
  readonly formatHacking: string;
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/**
 * The recipe of a resolved config (RunConfig, or its JSON as stored with a run), or undefined when the config
 * lacks the fields (an older or foreign record): the hints are then the generic ones.
 */
export function recipeOf(config: unknown): RunRecipe | undefined {
  const c = obj(config);
  const alg = obj(c?.algorithm);
  const pl = obj(alg?.policyLoss);
  const kl = obj(alg?.kl);
  const optim = obj(c?.optim);
  const rollout = obj(c?.rollout);
  const mode = pl?.mode;
  const lr = num(optim?.lr);
  const temperature = num(rollout?.temperature);
  const groupSize = num(rollout?.groupSize);
  const maxResponseTokens = num(rollout?.maxResponseTokens);
  if (
    typeof mode !== 'string' ||
    lr === undefined ||
    temperature === undefined ||
    groupSize === undefined ||
    maxResponseTokens === undefined
  )
    return undefined;
  return {
    preset: typeof c?.preset === 'string' ? c.preset : 'custom',
    policyLoss: mode,
    seqMask: obj(pl?.seqMask)?.enabled === true,
    klCoef: kl?.enabled === true ? (num(kl.coef) ?? 0) : 0,
    entropyCoeff: num(alg?.entropyCoeff) ?? 0,
    filtering: obj(alg?.filter)?.enabled === true,
    overlong: obj(alg?.overlong)?.enabled === true,
    lr,
    temperature,
    groupSize,
    maxResponseTokens,
    unusual: unusualSettings(c!, typeof c?.preset === 'string' ? c.preset : ''),
    policyLag: num(rollout?.policyLag) ?? 0,
  };
}

const GENERIC_CLIPPING =
  'tolerant clipping is collapsing: try SAMPO or GSPO, or sequence masking (GRPO_SM); a lower learning rate also helps';

/**
 * The hints for a run with this recipe (generic ones without a recipe); an imported run's (SourceRecipe) are in
 * its framework's terms.
 */
export function hintsFor(recipe?: RunRecipe | SourceRecipe): Hints {
  if (recipe && 'kind' in recipe && recipe.kind === 'source') return sourceHints(recipe);
  const r = recipe as RunRecipe | undefined;
  const lower = r ? `lower the learning rate (optim.lr, now ${r.lr})` : 'lower the learning rate';
  const kl = !r
    ? 'add or raise a KL penalty to π_ref'
    : r.klCoef > 0
      ? `raise the KL coefficient (algorithm.kl.coef, now ${r.klCoef})`
      : 'add a KL penalty to π_ref (algorithm.kl.enabled = true)';
  let clipping = GENERIC_CLIPPING;
  if (r?.policyLoss === 'gspo') {
    clipping = `this run already clips at the sequence level (${r.policyLoss}${r.preset === 'sampo' ? ', SAMPO' : ''}): ${lower}, tighten the clip range (algorithm.policyLoss.clipRatioLow / clipRatioHigh), or ${kl}`;
  } else if (r?.seqMask) {
    clipping = `this run already masks off-policy sequences: ${lower}, try sequence-level clipping (SAMPO or GSPO), or ${kl}`;
  } else if (r?.policyLoss === 'vanilla') {
    clipping = `token-level clipping is not holding the updates back: try SAMPO or GSPO (sequence-level clipping), or sequence masking (GRPO_SM); or ${lower}`;
  } else if (r) {
    clipping = `tolerant clipping (${r.policyLoss}) is collapsing: try SAMPO or GSPO, or sequence masking (GRPO_SM); or ${lower}`;
  }
  const entropyUp = !r
    ? 'raise the entropy coefficient or rollout temperature'
    : r.entropyCoeff > 0
      ? `raise the entropy coefficient (algorithm.entropyCoeff, now ${r.entropyCoeff}) or rollout temperature (now ${r.temperature})`
      : `add an entropy bonus (algorithm.entropyCoeff) or raise the rollout temperature (now ${r.temperature})`;
  // A setting far from its preset's value is named first in the numerical hints (not the default lr).
  const odd = r?.unusual?.length
    ? r.unusual.map((u) => `${u.path} = ${u.value} (the ${r.preset} preset uses ${u.reference})`).join(', ')
    : null;
  const tighten = r?.policyLoss === 'gspo' ? 'tighten the sequence-level clip range' : 'tighten clipping (SAMPO/GSPO)';
  const deadSignal = r?.filtering
    ? `dynamic filtering is on but too many groups still agree: raise the group size (rollout.groupSize, now ${r.groupSize}) or rollout temperature (now ${r.temperature}), or use an easier environment setting`
    : 'enable dynamic filtering, raise the group size or rollout temperature, or use an easier environment setting';
  const length = r?.overlong
    ? `truncated responses rarely parse: overlong shaping is already on; lower the max response tokens (now ${r.maxResponseTokens}) or ${kl}`
    : 'truncated responses rarely parse: enable overlong shaping, lower the max response tokens, or add a KL penalty';
  return {
    clipping,
    gradNorm: `exploding gradients precede collapse; ${clipping}`,
    formatLoss: `the policy is losing the <think>/<action> format; ${clipping}`,
    admissibleLoss: `actions stop being admissible; ${clipping}; a larger invalid-action penalty can help`,
    successLoss: `learned behaviour is being lost; ${clipping}`,
    entropyCollapse: `groups will soon have identical returns and no signal: ${entropyUp}, or ${lower}`,
    entropyBlowup: `the update is destroying the output distribution: ${lower}, ${tighten}, or ${kl}`,
    klStep:
      r?.policyLoss === 'gspo'
        ? `use fewer mini-batches or epochs per step, or ${lower}`
        : 'use fewer mini-batches or epochs per step, a lower learning rate, or sequence-level bounds (GSPO / SAMPO)',
    klDrift: `the policy is drifting far from its starting point: ${kl}, or ${lower}`,
    deadSignal,
    length,
    nonFinite: odd
      ? `a non-finite loss, gradient or weight follows from a setting far outside its usual range: ${odd}; set it back and start again or resume from a checkpoint before the failure`
      : r?.policyLoss === 'gspo'
        ? `a non-finite loss or gradient usually follows an exploding update: ${lower} and keep gradient clipping on (optim.gradClip)`
        : 'a non-finite loss or gradient usually follows an exploding update: lower the learning rate, keep gradient clipping on, and prefer SAMPO/GSPO over tolerant clipping',
    skipped: odd
      ? `updates were skipped because their result was not finite: ${odd} is far outside its usual range; set it back`
      : `skipped updates mean the loss is numerically unstable: ${lower} or ${tighten}`,
    mismatch:
      'the rollout and training engines disagree: re-export the rollout model, or compute log-probs on the trainer (compute.logProbEngine = trainer)',
    engineGap:
      'the rollout engine drifts away from the trainer: correct the rollouts with truncated importance sampling or reject far-off tokens (rollout correction, algorithm.rolloutCorrection), and check the rollout model is re-exported after each update at the precision the trainer uses',
    policyLag: r?.policyLag ?? 0,
    responseCollapse: `responses are collapsing onto one answer or template: ${entropyUp}, ${kl}, or ${lower}; ${r?.filtering ? `dynamic filtering is on: raise the group size (rollout.groupSize, now ${r.groupSize})` : 'enable dynamic filtering (algorithm.filter.enabled) so groups that all agree carry no update'}`,
    formatHacking: `the reward rises on format alone while the policy drifts from π_ref (reward hacking): give the format bonus less weight than the task reward, ${kl}, or ${lower}`,
  };
}

// ---------------------------------------------------------------------------------------------------------
// Imported runs: hints in the source framework's own terms.

/** What a lever is called in an imported run's framework, and its value when the log's config gave it. */
interface SourceSetting {
  readonly name: string;
  readonly value?: number;
}

/**
 * The recipe of an imported run (kind 'imported'): its framework's names for the stability levers, with the
 * values its echoed config holds. Names only where the mapping is clear (from verl's and TRL's docs and
 * configs); a framework without such a mapping gets neutral wording, never this lab's config paths or presets.
 */
export interface SourceRecipe {
  readonly kind: 'source';
  readonly framework: 'verl' | 'trl' | 'other';
  readonly lr?: SourceSetting;
  readonly clip?: SourceSetting;
  /** KL as a loss term (verl's use_kl_loss + kl_loss_coef; TRL's beta). `on`: the config switches it on. */
  readonly klLoss?: SourceSetting & { readonly on: boolean };
  /** KL in the reward (verl's use_kl_in_reward + algorithm.kl_ctrl.kl_coef). */
  readonly klReward?: SourceSetting & { readonly on: boolean };
  readonly entropy?: SourceSetting;
  readonly temperature?: SourceSetting;
  readonly group?: SourceSetting;
  readonly maxResponse?: SourceSetting;
  readonly gradClip?: SourceSetting;
  /** The run already clips at the sequence level (verl policy_loss.loss_mode gspo; TRL importance_sampling_level sequence). */
  readonly sequenceLevel: boolean;
  /** verl's DAPO dynamic sampling (algorithm.filter_groups.enable) is on. */
  readonly filtering: boolean;
}

/** The value at a dotted path of a nested config, or under the dotted key itself (flattened configs). */
function atPath(cfg: Json, path: string): unknown {
  if (Object.hasOwn(cfg, path)) return cfg[path];
  let cur: unknown = cfg;
  for (const part of path.split('.')) {
    const o = obj(cur);
    if (!o) return undefined;
    cur = o[part];
  }
  return cur;
}

function setting(cfg: Json, name: string): SourceSetting {
  const v = num(atPath(cfg, name));
  return v === undefined ? { name } : { name, value: v };
}

/** verl and the forks that keep its config (verl-agent, the ARLArena fork). */
const VERL_LIKE = new Set(['verl', 'verl-agent', 'arlarena']);

/** The recipe of an imported run from the config its log revealed and the framework it came from. */
export function sourceRecipeOf(config: unknown, framework: string): SourceRecipe {
  const c = obj(config) ?? {};
  if (VERL_LIKE.has(framework)) {
    const a = 'actor_rollout_ref.actor';
    // verl moved gradient clipping into the optimizer section (optim.clip_grad); older configs have actor.grad_clip.
    const gradClip = atPath(c, `${a}.optim.clip_grad`) !== undefined ? `${a}.optim.clip_grad` : `${a}.grad_clip`;
    return {
      kind: 'source',
      framework: 'verl',
      lr: setting(c, `${a}.optim.lr`),
      clip: setting(c, `${a}.clip_ratio`),
      klLoss: { ...setting(c, `${a}.kl_loss_coef`), on: atPath(c, `${a}.use_kl_loss`) === true },
      klReward: { ...setting(c, 'algorithm.kl_ctrl.kl_coef'), on: atPath(c, 'algorithm.use_kl_in_reward') === true },
      entropy: setting(c, `${a}.entropy_coeff`),
      temperature: setting(c, 'actor_rollout_ref.rollout.temperature'),
      group: setting(c, 'actor_rollout_ref.rollout.n'),
      maxResponse: setting(c, 'data.max_response_length'),
      gradClip: setting(c, gradClip),
      sequenceLevel: atPath(c, `${a}.policy_loss.loss_mode`) === 'gspo',
      filtering: atPath(c, 'algorithm.filter_groups.enable') === true,
    };
  }
  if (framework === 'trl') {
    const beta = setting(c, 'beta');
    return {
      kind: 'source',
      framework: 'trl',
      lr: setting(c, 'learning_rate'),
      clip: setting(c, 'epsilon'),
      // GRPOConfig's beta is the KL coefficient; 0 (the default in recent TRL) loads no reference model.
      klLoss: { ...beta, on: (beta.value ?? 0) > 0 },
      temperature: setting(c, 'temperature'),
      group: setting(c, 'num_generations'),
      maxResponse: setting(c, 'max_completion_length'),
      gradClip: setting(c, 'max_grad_norm'),
      sequenceLevel: atPath(c, 'importance_sampling_level') === 'sequence',
      filtering: false,
    };
  }
  return { kind: 'source', framework: 'other', sequenceLevel: false, filtering: false };
}

/**
 * The recipe the detector's hints are fitted to, for a stored run: a lab run's (recipeOf its config) or an
 * imported run's (sourceRecipeOf its config and the framework it came from).
 */
export function recipeForRun(run: {
  readonly kind?: string;
  readonly config: unknown;
  readonly source?: { readonly framework: string } | null;
}): RunRecipe | SourceRecipe | undefined {
  if (run.kind === 'imported') return sourceRecipeOf(run.config, run.source?.framework ?? 'unknown');
  return recipeOf(run.config);
}

/** "the learning rate (actor_rollout_ref.actor.optim.lr, now 1e-6)", or the plain words without a mapping. */
function lever(words: string, s: SourceSetting | undefined): string {
  if (!s) return words;
  return `${words} (${s.name}${s.value !== undefined ? `, now ${s.value}` : ''})`;
}

function sourceHints(r: SourceRecipe): Hints {
  const lower = `lower ${lever('the learning rate', r.lr)}`;
  const tightenClip = `tighten ${lever('the clip range', r.clip)}`;
  let kl: string;
  if (r.framework === 'verl') {
    if (r.klLoss?.on) kl = `raise ${lever('the KL loss coefficient', r.klLoss)}`;
    else if (r.klReward?.on) kl = `raise ${lever('the in-reward KL coefficient', r.klReward)}`;
    else
      kl = `add a KL penalty to the reference policy (${r.klLoss!.name.replace('kl_loss_coef', 'use_kl_loss')}=True with ${r.klLoss!.name}, or algorithm.use_kl_in_reward=True with ${r.klReward!.name})`;
  } else if (r.framework === 'trl') {
    kl = r.klLoss?.on
      ? `raise ${lever('the KL coefficient', r.klLoss)}`
      : 'add a KL penalty to the reference model (beta > 0; with beta = 0 no reference model is loaded)';
  } else {
    kl = 'add or raise a KL penalty to the reference policy';
  }
  const seq = r.sequenceLevel
    ? ''
    : r.framework === 'verl'
      ? ', clip at the sequence level (actor_rollout_ref.actor.policy_loss.loss_mode=gspo)'
      : r.framework === 'trl'
        ? ", clip at the sequence level (importance_sampling_level='sequence', GSPO)"
        : ', clip at the sequence level (GSPO)';
  const clipping = `${r.sequenceLevel ? 'the run already clips at the sequence level, yet ' : ''}the updates are larger than the clipping holds back: ${lower}, ${tightenClip}${seq}, or ${kl}`;
  const hotter = lever('the sampling temperature', r.temperature);
  const entropyUp = r.framework === 'verl' ? `add or raise ${lever('the entropy bonus', r.entropy)} or raise ${hotter}` : `raise ${hotter}`;
  const gradClip = lever('gradient clipping', r.gradClip);
  const filter =
    r.framework === 'verl'
      ? r.filtering
        ? ''
        : ', filter out groups whose responses all agree (algorithm.filter_groups.enable=True)'
      : ', drop groups whose responses all agree';
  return {
    clipping,
    gradNorm: `exploding gradients precede collapse; keep ${gradClip} on; ${clipping}`,
    formatLoss: `the policy is losing the output format its reward checks; ${clipping}`,
    admissibleLoss: `the actions stop being valid; ${clipping}`,
    successLoss: `learned behaviour is being lost; ${clipping}`,
    entropyCollapse: `groups will soon have identical rewards and no learning signal: ${entropyUp}, or ${lower}`,
    entropyBlowup: `the update is destroying the output distribution: ${lower}, ${tightenClip}, or ${kl}`,
    klStep:
      r.framework === 'verl'
        ? `the policy moves far in one step: use fewer PPO epochs or more data per mini-batch (actor_rollout_ref.actor.ppo_epochs, ppo_mini_batch_size), or ${lower}`
        : r.framework === 'trl'
          ? `the policy moves far in one step: use fewer passes over each batch (num_iterations), or ${lower}`
          : `the policy moves far in one step: use fewer update epochs per batch, or ${lower}`,
    klDrift: `the policy is drifting far from the reference model: ${kl}, or ${lower}`,
    deadSignal: `most groups score alike (no reward variance), so they carry no signal: sample more responses per prompt (${r.group?.name ?? 'the group size'}${r.group?.value !== undefined ? `, now ${r.group.value}` : ''}) or raise ${hotter}${filter}, or use easier prompts`,
    length: `responses are running into ${lever('the length cap', r.maxResponse)}: raise it if the task needs longer answers, or penalise overlong responses in the reward; or ${kl}`,
    nonFinite: `a non-finite loss or gradient usually follows an exploding update: ${lower} and keep ${gradClip} on`,
    skipped: `skipped updates mean the loss is numerically unstable: ${lower} or ${tightenClip}`,
    mismatch:
      "the rollout engine's and the trainer's log-probs disagree: check that both hold the same weights at the same precision, or correct for the mismatch with truncated importance sampling",
    engineGap:
      r.framework === 'verl'
        ? "the rollout engine (vLLM / SGLang) and the trainer disagree more and more about the same tokens: turn on verl's rollout correction (algorithm.rollout_correction.rollout_is=token with rollout_is_threshold, or rollout_rs to reject far-off tokens), and check that the rollout weights are synced at the trainer's dtype after each update"
        : r.framework === 'trl'
          ? "vLLM's log-probs and the trainer's disagree more and more: correct the rollouts with truncated importance sampling on vLLM's log-probs, and check that both load the same weights at the same dtype"
          : "the rollout engine's and the trainer's probabilities drift apart: correct the rollouts with truncated or masked importance sampling, and check that both engines hold the same weights at the same precision",
    // An imported log's trainer may be asynchronous, but its config names no lag the lab reads.
    policyLag: 0,
    responseCollapse: `responses are collapsing onto one answer or template: ${entropyUp}, ${kl}, or ${lower}${filter}`,
    formatHacking: `the reward rises on format alone while KL to the reference grows (reward hacking): give the format reward less weight than correctness, ${kl}, or ${lower}`,
  };
}
