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
}

export interface UnusualSetting {
  readonly path: string;
  readonly value: number;
  /** The preset's value (its override, else the base default). */
  readonly reference: number;
}

/** Settings a non-finite loss, gradient or update can come from (issue 17: eps = 1e-300 is 0 in float32). */
const NUMERIC_SUSPECTS = ['optim.eps', 'optim.lr', 'optim.gradClip', 'optim.weightDecay', 'rollout.temperature', 'algorithm.advantage.epsilon', 'algorithm.kl.coef', 'algorithm.entropyCoeff'];
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
  if (typeof mode !== 'string' || lr === undefined || temperature === undefined || groupSize === undefined || maxResponseTokens === undefined) return undefined;
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
  };
}

const GENERIC_CLIPPING = 'tolerant clipping is collapsing: try SAMPO or GSPO, or sequence masking (GRPO_SM); a lower learning rate also helps';

/** The hints for a run with this recipe (generic ones without a recipe). */
export function hintsFor(r?: RunRecipe): Hints {
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
    klStep: r?.policyLoss === 'gspo'
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
    mismatch: 'the rollout and training engines disagree: re-export the rollout model, or compute log-probs on the trainer (compute.logProbEngine = trainer)',
  };
}
