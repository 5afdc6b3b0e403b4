/**
 * Synthetic metric streams with a known story, for detector tests, UI benchmarks and demo data.
 *
 * A calm run learns smoothly (success rises, format stays ~1, grad-norm noisy around a level). The collapse
 * shapes follow spec §4: tolerant clipping (CISPO) gains fast, then around `collapseAt` the gradient norm
 * explodes, the valid-format ratio drops and success falls to near zero; `nanAt` puts a NaN/Inf into the loss.
 */
import { METRIC_CATALOG, type MetricRecord } from '../../shared/metrics';
import { Rng, hashSeed } from '../util/rng';

export type SyntheticShape = 'calm' | 'cispo_collapse' | 'entropy_collapse' | 'dead_signal' | 'length_runaway' | 'mismatch' | 'kl_drift';

export interface SyntheticOptions {
  readonly steps: number;
  readonly seed?: number;
  readonly shape?: SyntheticShape;
  /** First step of the failure (default: 60 % of the run). */
  readonly collapseAt?: number;
  /** Step whose grad-norm and loss become NaN / +Infinity (non-finite events), if any. */
  readonly nanAt?: number;
  /** Validate every this many steps (val/* NaN elsewhere). Default 10. */
  readonly validateEvery?: number;
  /**
   * Episodes per step: when set, success and validity are sampled (binomial) as a small laptop batch would
   * measure them, instead of a smooth curve with small noise — the harder case for false alarms.
   */
  readonly episodes?: number;
  /** Peak of the learning curve (default 0.7). */
  readonly peak?: number;
}

/** Held-out episodes per synthetic validation (the trainer's training.valEpisodes default). */
const VAL_EPISODES = 64;

function binomial(rng: Rng, p: number, n: number): number {
  let k = 0;
  for (let j = 0; j < n; j++) if (rng.float() < p) k++;
  return k / n;
}

export function syntheticStream(opts: SyntheticOptions): MetricRecord[] {
  const rng = new Rng(opts.seed ?? 1);
  const valRng = new Rng(hashSeed(opts.seed ?? 1, 'validation'));
  const shape = opts.shape ?? 'calm';
  const T = opts.steps;
  const c = opts.collapseAt ?? Math.floor(T * 0.6);
  const validateEvery = opts.validateEvery ?? 10;
  const out: MetricRecord[] = [];
  let wall = 0;
  let tokens = 0;
  const noise = (s: number): number => rng.normal() * s;
  const clamp01 = (v: number): number => Math.min(1, Math.max(0, v));
  for (let step = 1; step <= T; step++) {
    const after = shape !== 'calm' && step >= c;
    const k = after ? step - c : 0;
    const learn = 1 - Math.exp(-step / (T / 4));
    const peak = opts.peak ?? 0.7;
    let success = clamp01(0.1 + (peak - 0.1) * learn + noise(0.03));
    let format = clamp01(0.97 + noise(0.01));
    let grad = Math.abs(0.5 + noise(0.08));
    let entropy = Math.max(0.05, 1.2 - 0.3 * learn + noise(0.03));
    let clipfrac = clamp01(0.05 + noise(0.01));
    let ppoKl = Math.abs(0.002 + noise(0.0005));
    let klLoss = Math.abs(0.01 + 0.02 * learn + noise(0.002));
    let zeroVar = clamp01(0.3 + noise(0.05));
    let respLen = 16 + noise(0.5);
    let respClip = clamp01(0.01 + noise(0.005));
    let mismatchMax = Math.abs(0.02 + noise(0.005));
    if (after) {
      if (shape === 'cispo_collapse') {
        grad = 0.5 * Math.pow(2.2, Math.min(k, 12)) + noise(0.1);
        format = clamp01(0.97 - 0.15 * k);
        success = clamp01(success * Math.exp(-k / 3));
        clipfrac = clamp01(0.05 + 0.05 * k);
        ppoKl = 0.002 * Math.pow(2, Math.min(k, 8));
      } else if (shape === 'entropy_collapse') {
        entropy = Math.max(0.001, entropy * Math.exp(-k / 2));
      } else if (shape === 'dead_signal') {
        zeroVar = clamp01(0.99 + noise(0.003));
      } else if (shape === 'length_runaway') {
        respLen = 16 + 4 * k;
        respClip = clamp01(0.05 * k);
      } else if (shape === 'mismatch') {
        mismatchMax = 2 + noise(0.1);
      } else if (shape === 'kl_drift') {
        ppoKl = 0.002 + 0.01 * k;
        klLoss = 0.03 + 0.2 * k;
      }
    }
    const trueSuccess = success;
    if (opts.episodes !== undefined) {
      // Binomial measurement noise of a small batch (episodes for success, ~5 turn rows each for format).
      const sample = (p: number, n: number): number => {
        let k = 0;
        for (let j = 0; j < n; j++) if (rng.float() < p) k++;
        return k / n;
      };
      success = sample(success, opts.episodes);
      format = sample(format, opts.episodes * 5);
    }
    let loss = -0.01 + noise(0.01);
    if (opts.nanAt !== undefined && step === opts.nanAt) {
      grad = NaN;
      loss = Infinity;
    }
    const stepS = 2 + Math.abs(noise(0.1));
    wall += stepS;
    tokens += 20_000;
    const values: Record<string, number> = {};
    for (const d of METRIC_CATALOG) values[d.key] = NaN;
    Object.assign(values, {
      'episode/success_rate': success,
      'episode/reward_mean': success * 10 - 1,
      'episode/reward_max': 10,
      'episode/reward_min': -1.5,
      'episode/length_mean': 6 - 3 * success,
      'episode/score_mean': success,
      'episode/valid_action_ratio': clamp01(format - 0.01),
      'episode/valid_format_ratio': format,
      'actor/pg_loss': loss,
      'actor/pg_clipfrac': clipfrac,
      'actor/pg_clipfrac_lower': clamp01(clipfrac / 10),
      'actor/ppo_kl': ppoKl,
      'actor/num_masked_seqs': 0,
      'actor/off_policy_step': 1,
      'actor/entropy': entropy,
      'actor/kl_loss': klLoss,
      'actor/kl_coef': 0.01,
      'actor/grad_norm': grad,
      'actor/grad_norm_max': Number.isFinite(grad) ? grad * 1.3 : grad,
      'actor/skipped_updates': Number.isFinite(grad) ? 0 : 1,
      'actor/lr': 1e-4,
      'critic/advantages_mean': noise(0.01),
      'critic/advantages_std': 0.8 + noise(0.05),
      'response_length/mean': respLen,
      'response_length/clip_ratio': respClip,
      'prompt_length/mean': 60,
      'batch/rows': 200,
      'filter/zero_variance_share': zeroVar,
      'filter/rounds': 1,
      'mismatch/logprob_abs_max': mismatchMax,
      'mismatch/logprob_abs_mean': mismatchMax / 10,
      'perf/tokens_per_s': 20_000 / stepS,
      'perf/step_s': stepS,
      'perf/rollout_s': stepS * 0.4,
      'perf/logprob_s': stepS * 0.2,
      'perf/update_s': stepS * 0.4,
      'perf/wall_s': wall,
      'perf/total_tokens': tokens,
    });
    if (step % validateEvery === 0) {
      // A validation measures the policy on VAL_EPISODES held-out episodes: its own binomial noise (from its own
      // RNG, so the training stream is the same with or without it), or small noise for the smooth streams.
      values['val/success_rate'] =
        opts.episodes !== undefined ? binomial(valRng, trueSuccess, VAL_EPISODES) : clamp01(success + noise(0.02));
      values['val/score_mean'] = values['val/success_rate'];
      values['val/episodes'] = VAL_EPISODES;
    }
    out.push({ step, values });
  }
  return out;
}
