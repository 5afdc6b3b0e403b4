/**
 * The one metric mapping table: source keys of verl / verl-agent / ARLArena, OpenRLHF, TRL, Tinker and
 * DeepSpeed-Chat onto this lab's metric catalog (src/shared/metrics.ts). Its human documentation — source key
 * → catalog key → why — is src/core/formats/README.md; keep the two in step.
 *
 * A rule lists its sources in priority order: the first source present in a step feeds the catalog key, and
 * `keyMap` records which one did. Source keys no rule took are kept under their own names so they can still
 * be charted. Pure: no files, no clock.
 */
import type { MetricKey } from '../../shared/metrics';
import type { Framework } from './types';
import { recordShape } from './recordShape';

/** One source spelling: an exact key or a pattern; `scale` multiplies the value (old verl's `lr(1e-4)`). */
interface Source {
  readonly key?: string;
  readonly pattern?: RegExp;
  /** Frameworks the source applies to; absent = any (namespaced keys no other tool writes). */
  readonly only?: readonly Framework[];
  /** Value multiplier derived from the matched key, e.g. `actor/lr(1e-4)` is the lr divided by 1e-4. */
  readonly scale?: (key: string) => number;
}

export interface MappingRule {
  readonly catalog: MetricKey;
  readonly sources: readonly Source[];
}

/** Bare key names several tools share (`loss`, `reward`, `kl`): only trusted for these frameworks. */
const PLAIN: readonly Framework[] = ['trl', 'ms-swift', 'openrlhf', 'tinker', 'deepspeed-chat', 'unknown'];
/**
 * TRL's key names; ms-swift's GRPO trainer is built on TRL's and logs the same names (completions/*, rewards/<fn>/mean,
 * clip_ratio/*, kl, reward_std), with its reward functions named by class (rewards/Format/mean,
 * rewards/MathAccuracy/mean) where TRL's are named by function (rewards/format_reward/mean): checked against what
 * ms-swift 4.6.0's `swift rlhf --rlhf_type grpo` writes (src/main/imports/swift.integration.test.ts).
 */
const TRL: readonly Framework[] = ['trl', 'ms-swift', 'unknown'];

/** `…(1e-4)` at the end of an old verl key: the logged value is the quantity divided by that number. */
const parenScale = (key: string): number => {
  const m = /\(([0-9.]+e[-+]?\d+)\)$/.exec(key);
  return m ? Number(m[1]) : 1;
};

const k = (key: string, only?: readonly Framework[]): Source => (only ? { key, only } : { key });
const re = (pattern: RegExp, only?: readonly Framework[]): Source => (only ? { pattern, only } : { pattern });

export const MAPPING_TABLE: readonly MappingRule[] = [
  // policy
  {
    catalog: 'actor/entropy',
    sources: [
      k('actor/entropy'),
      k('actor/entropy_loss'),
      k('actor/main_chain/entropy'),
      k('entropy', PLAIN),
      k('policy/entropy_avg', TRL),
      k('optim/entropy', PLAIN),
    ],
  },
  {
    catalog: 'actor/pg_loss',
    sources: [k('actor/pg_loss'), k('policy_loss', PLAIN), k('act_loss', PLAIN), k('loss/policy_avg', TRL), k('loss', TRL)],
  },
  {
    catalog: 'actor/pg_clipfrac',
    sources: [k('actor/pg_clipfrac'), k('clip_ratio/region_mean', TRL), k('clip_ratio', TRL), k('policy/clipfrac_avg', TRL)],
  },
  { catalog: 'actor/pg_clipfrac_lower', sources: [k('actor/pg_clipfrac_lower')] },
  { catalog: 'actor/ppo_kl', sources: [k('actor/ppo_kl'), k('policy/approxkl_avg', TRL)] },
  // KL to the reference
  { catalog: 'actor/kl_loss', sources: [k('actor/kl_loss'), k('kl', PLAIN), k('objective/kl', TRL), k('critic/kl')] },
  { catalog: 'actor/kl_coef', sources: [k('actor/kl_coef'), k('critic/kl_coeff')] },
  // gradient / optimiser
  { catalog: 'actor/grad_norm', sources: [k('actor/grad_norm'), k('grad_norm', PLAIN)] },
  {
    catalog: 'actor/lr',
    sources: [
      k('actor/lr'),
      { pattern: /^actor\/lr\([0-9.]+e[-+]?\d+\)$/, scale: parenScale },
      k('learning_rate', PLAIN),
      k('actor_lr', PLAIN),
      k('optim/lr', PLAIN),
      k('train/lr'),
      { pattern: /^train\/lr\([0-9.]+e[-+]?\d+\)$/, scale: parenScale },
    ],
  },
  // task
  { catalog: 'episode/score_mean', sources: [k('episode/score_mean'), k('critic/score/mean'), k('objective/scores', TRL)] },
  {
    catalog: 'episode/reward_mean',
    sources: [
      k('episode/reward_mean'),
      k('critic/rewards/mean'),
      k('reward', PLAIN),
      k('objective/rlhf_reward', TRL),
      k('average reward score', PLAIN),
      k('env/all/reward/total', PLAIN),
    ],
  },
  { catalog: 'episode/reward_max', sources: [k('episode/reward_max'), k('critic/rewards/max')] },
  { catalog: 'episode/reward_min', sources: [k('episode/reward_min'), k('critic/rewards/min')] },
  {
    catalog: 'episode/success_rate',
    sources: [
      k('episode/success_rate'),
      k('rewards/accuracy_reward/mean', TRL),
      k('rewards/accuracy_reward', TRL),
      k('rewards/MathAccuracy/mean', TRL),
      k('env/all/correct', PLAIN),
    ],
  },
  {
    catalog: 'episode/valid_format_ratio',
    sources: [
      k('episode/valid_format_ratio'),
      re(/^rewards\/[^/]*format[^/]*\/mean$/i, TRL),
      re(/^rewards\/[^/]*format[^/]*$/i, TRL),
      k('env/all/format', PLAIN),
    ],
  },
  { catalog: 'episode/valid_action_ratio', sources: [k('episode/valid_action_ratio')] },
  { catalog: 'episode/length_mean', sources: [k('episode/length_mean')] },
  // advantages
  { catalog: 'critic/advantages_mean', sources: [k('critic/advantages_mean'), k('critic/advantages/mean')] },
  { catalog: 'critic/advantages_std', sources: [k('critic/advantages_std')] },
  // lengths
  {
    catalog: 'response_length/mean',
    sources: [
      k('response_length/mean'),
      k('response_length/main_chain/mean'),
      k('completions/mean_length', TRL),
      k('completion_length', TRL),
      k('response_length', PLAIN),
      k('env/all/ac_tokens_per_turn', PLAIN),
    ],
  },
  { catalog: 'response_length/clip_ratio', sources: [k('response_length/clip_ratio'), k('completions/clipped_ratio', TRL)] },
  { catalog: 'prompt_length/mean', sources: [k('prompt_length/mean')] },
  // filtering
  { catalog: 'filter/zero_variance_share', sources: [k('filter/zero_variance_share'), k('frac_reward_zero_std', TRL)] },
  // train/inference mismatch
  { catalog: 'mismatch/logprob_abs_mean', sources: [k('mismatch/logprob_abs_mean'), k('sampling/sampling_logp_difference/mean', TRL)] },
  { catalog: 'mismatch/logprob_abs_max', sources: [k('mismatch/logprob_abs_max'), k('sampling/sampling_logp_difference/max', TRL)] },
  // throughput
  { catalog: 'perf/tokens_per_s', sources: [k('perf/tokens_per_s'), k('perf/throughput')] },
  { catalog: 'perf/step_s', sources: [k('perf/step_s'), k('timing_s/step'), k('timing/step'), k('E2E latency', PLAIN)] },
  { catalog: 'perf/rollout_s', sources: [k('perf/rollout_s'), k('timing_s/gen'), k('timing/gen'), k('Generate time', PLAIN)] },
  { catalog: 'perf/logprob_s', sources: [k('perf/logprob_s'), k('timing_s/old_log_prob')] },
  {
    catalog: 'perf/update_s',
    sources: [k('perf/update_s'), k('timing_s/update_actor'), k('timing/update_actor'), k('Training time', PLAIN)],
  },
  { catalog: 'perf/total_tokens', sources: [k('perf/total_tokens'), k('num_tokens', TRL)] },
  // validation
  {
    catalog: 'val/score_mean',
    sources: [
      k('val/score_mean'),
      re(/^val-core\/.+\/reward\/mean@1$/),
      re(/^val\/test_score\/.+$/),
      re(/^test_score\/.+$/),
      re(/^val-core\/.+\/reward\/mean@\d+$/),
      k('eval/reward', TRL),
      k('eval_reward', TRL),
      k('test/env/all/reward/total', PLAIN),
    ],
  },
  {
    catalog: 'val/success_rate',
    sources: [
      k('val/success_rate'),
      re(/^val-core\/.+\/acc\/mean@1$/),
      re(/^val-core\/.+\/acc\/mean@\d+$/),
      k('test/env/all/correct', PLAIN),
    ],
  },
];

export interface MappedStep {
  readonly values: Record<string, number>;
  /** catalog key → the source key that fed it. */
  readonly keyMap: Record<string, string>;
}

interface Plan {
  /** [catalog key, source key, scale] for each mapped key. */
  readonly mapped: readonly (readonly [string, string, number])[];
  /** Source keys kept as they are, with the name they are kept under. */
  readonly kept: readonly (readonly [string, string])[];
  readonly keyMap: Record<string, string>;
  /**
   * The mapped step would be the source step itself: every key kept or mapped onto its own name, unscaled, in
   * the source's order. The mapper then hands the source's values object on instead of copying it (values
   * objects are never changed once a parser emitted them).
   */
  readonly identity: boolean;
  /** The mapped step's keys in order, as a shape to copy (recordShape.ts); made for a plan that is not identity. */
  shape?: Record<string, number>;
}

const CATALOG_KEYS = new Set<string>(MAPPING_TABLE.map((r) => r.catalog));

/**
 * TRL via TensorBoard writes `train/<key>` and `eval/<key>`; the HF Trainer's own logs write `<key>` and
 * `eval_<key>`. One table serves both: for TRL the `train/` prefix is dropped before matching.
 */
function matchName(key: string, framework: Framework): string {
  return framework === 'trl' && key.startsWith('train/') ? key.slice(6) : key;
}

function applies(s: Source, framework: Framework): boolean {
  return s.only === undefined || s.only.includes(framework);
}

function buildPlan(keys: readonly string[], framework: Framework): Plan {
  const names = new Map<string, string>(); // match name → source key (first one wins)
  for (const key of keys) {
    const n = matchName(key, framework);
    if (!names.has(n)) names.set(n, key);
  }
  // Patterns pick the first matching key in sorted order so the choice never depends on the log's key order.
  const sorted = [...names.keys()].sort();
  const used = new Set<string>();
  const mapped: (readonly [string, string, number])[] = [];
  const keyMap: Record<string, string> = {};
  for (const rule of MAPPING_TABLE) {
    for (const s of rule.sources) {
      if (!applies(s, framework)) continue;
      let name: string | undefined;
      if (s.key !== undefined) name = names.has(s.key) ? s.key : undefined;
      else if (s.pattern) name = sorted.find((n) => s.pattern!.test(n));
      if (name === undefined) continue;
      const src = names.get(name)!;
      if (used.has(src)) continue;
      used.add(src);
      mapped.push([rule.catalog, src, s.scale ? s.scale(src) : 1]);
      keyMap[rule.catalog] = src;
      break;
    }
  }
  const kept: (readonly [string, string])[] = [];
  for (const key of keys) {
    if (used.has(key)) continue;
    // A source key spelled like a catalog key that another source fed stays visible, renamed.
    kept.push([key, CATALOG_KEYS.has(key) && key in keyMap ? `source/${key}` : key]);
  }
  const order = [...mapped.map(([cat]) => cat), ...kept.map(([, name]) => name)];
  const identity =
    mapped.every(([cat, src, scale]) => cat === src && scale === 1) &&
    kept.every(([src, name]) => src === name) &&
    order.length === keys.length &&
    order.every((k, i) => k === keys[i]);
  return { mapped, kept, keyMap, identity };
}

/**
 * Maps one source step onto the catalog. Plans are cached by key set: a log's steps nearly always share
 * one or two key sets (training lines, validation lines), so the table is searched once per set.
 */
export function createStepMapper(framework: Framework): (values: Readonly<Record<string, number>>) => MappedStep {
  const cache = new Map<string, Plan>();
  // The previous step's keys and plan: consecutive steps nearly always carry the same keys in the same order,
  // and comparing them in place costs less than joining them into the cache's signature.
  let lastKeys: readonly string[] = [];
  let lastPlan: Plan | null = null;
  const sameAsLast = (values: Readonly<Record<string, number>>): boolean => {
    let i = 0;
    for (const key in values) if (key !== lastKeys[i++]) return false;
    return i === lastKeys.length;
  };
  return (values) => {
    let plan: Plan | undefined;
    if (lastPlan !== null && sameAsLast(values)) plan = lastPlan;
    else {
      const keys = Object.keys(values);
      const sig = keys.join('\u0001');
      plan = cache.get(sig);
      if (plan === undefined) {
        plan = buildPlan(keys, framework);
        if (cache.size > 256) cache.clear();
        cache.set(sig, plan);
      }
      lastKeys = keys;
      lastPlan = plan;
    }
    if (plan.identity) return { values: values as Record<string, number>, keyMap: plan.keyMap };
    plan.shape ??= recordShape([...plan.mapped.map(([cat]) => cat), ...plan.kept.map(([, name]) => name)]);
    const out = { ...plan.shape };
    for (const [cat, src, scale] of plan.mapped) out[cat] = scale === 1 ? values[src] : values[src] * scale;
    for (const [src, name] of plan.kept) out[name] = values[src];
    return { values: out, keyMap: plan.keyMap };
  };
}

const mappers = new Map<Framework, (values: Readonly<Record<string, number>>) => MappedStep>();

/** Pure: catalog keys for mapped source keys, every other key kept under its own name, and which fed which. */
export function mapSourceStep(values: Readonly<Record<string, number>>, framework: Framework): MappedStep {
  let m = mappers.get(framework);
  if (m === undefined) {
    m = createStepMapper(framework);
    mappers.set(framework, m);
  }
  return m(values);
}

/**
 * The framework a set of source keys most likely came from (a step's keys, or all keys of a log). Checked
 * from the most specific markers to the most generic; 'unknown' when nothing fits.
 */
export function guessFramework(keys: Iterable<string>): Framework {
  const set = new Set(keys);
  const any = (pred: (key: string) => boolean): boolean => {
    for (const x of set) if (pred(x)) return true;
    return false;
  };
  const has = (key: string): boolean => set.has(key) || set.has(`train/${key}`);
  if (has('act_loss') && has('cri_loss')) return 'deepspeed-chat';
  const verlish = any(
    (x) =>
      x.startsWith('actor/') ||
      x.startsWith('critic/') ||
      x.startsWith('timing_s/') ||
      x.startsWith('val-core/') ||
      x.startsWith('response_length/'),
  );
  // ARLArena's reference implementation (and this lab) log sequence masking and train/inference mismatch.
  if (verlish && (has('actor/num_masked_seqs') || any((x) => x.startsWith('mismatch/')))) return 'arlarena';
  // verl-agent adds environment-level episode statistics to verl's keys.
  if (verlish && any((x) => x.startsWith('episode/') || x.startsWith('traj_'))) return 'verl-agent';
  if (verlish) return 'verl';
  if (any((x) => /^train\/lr\(/.test(x)) || (set.has('train/loss') && set.has('val/loss'))) return 'verl';
  if (has('policy_loss') && (has('actor_lr') || has('return'))) return 'openrlhf';
  if (any((x) => x.startsWith('env/all/') || x.startsWith('optim/kl_sample_train') || x.startsWith('progress/'))) return 'tinker';
  if (
    has('completion_length') ||
    has('completions/mean_length') ||
    has('reward_std') ||
    any((x) => /^(train\/)?rewards\//.test(x)) ||
    (has('grad_norm') && has('learning_rate') && has('epoch'))
  )
    return 'trl';
  return 'unknown';
}
