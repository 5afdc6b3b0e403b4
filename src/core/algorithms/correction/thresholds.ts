/**
 * verl's `rollout_rs` / `rollout_rs_threshold` grammar (rollout_corr_helper.py `_parse_rollout_rs_thresholds`):
 * options are comma separated (duplicates dropped, first kept) and ALL must pass; thresholds are one value
 * shared by every option or exactly one per (deduplicated) option. A k1 option takes "lower_upper" ratio bounds,
 * or a single upper U meaning lower = 1/U; other options take a single positive upper bound.
 */
import type { RolloutRsName, RsBounds } from './types';

export class RolloutCorrectionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RolloutCorrectionError';
  }
}

export function parseRsOptions(spec: string, known: readonly string[]): RolloutRsName[] {
  const opts = spec
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (opts.length === 0)
    throw new RolloutCorrectionError(`rollout_rs "${spec}" names no option; use one or more of ${known.join(', ')}, comma separated`);
  const out: RolloutRsName[] = [];
  for (const o of opts) {
    if (!known.includes(o)) throw new RolloutCorrectionError(`unknown rollout_rs option "${o}"; known options: ${known.join(', ')}`);
    if (!out.includes(o as RolloutRsName)) out.push(o as RolloutRsName);
  }
  return out;
}

function positive(text: string, option: string, spec: string): number {
  const v = Number(text.trim());
  if (text.trim() === '' || Number.isNaN(v))
    throw new RolloutCorrectionError(`rollout_rs_threshold: "${spec}" is not a number (option ${option})`);
  if (!(v > 0)) throw new RolloutCorrectionError(`rollout_rs_threshold for option ${option} must be positive, got ${spec}`);
  return v;
}

export function parseRsThresholds(
  options: readonly RolloutRsName[],
  spec: string | number | null | undefined,
): Map<RolloutRsName, RsBounds> {
  if (spec === null || spec === undefined)
    throw new RolloutCorrectionError(
      'rollout_rs_threshold must be given when rollout_rs is on (e.g. "0.5_2.0" for token_k1, 0.01 for seq_mean_k3)',
    );
  const raw =
    typeof spec === 'number'
      ? [String(spec)]
      : spec
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== '');
  if (raw.length === 0)
    throw new RolloutCorrectionError('rollout_rs_threshold names no threshold; give one shared value or one per rollout_rs option');
  if (raw.length !== 1 && raw.length !== options.length) {
    throw new RolloutCorrectionError(
      `rollout_rs_threshold has ${raw.length} values but rollout_rs has ${options.length} options (${options.join(',')}); give one shared value or exactly ${options.length}`,
    );
  }
  const specs = raw.length === 1 ? options.map(() => raw[0]) : raw;
  const out = new Map<RolloutRsName, RsBounds>();
  options.forEach((o, i) => {
    const s = specs[i];
    if (o.endsWith('k1')) {
      const [lo, hi] = s.includes('_') ? [s.slice(0, s.indexOf('_')), s.slice(s.indexOf('_') + 1)] : [null, s];
      const upper = positive(hi, o, s);
      out.set(o, { lower: lo === null ? 1 / upper : positive(lo, o, s), upper });
    } else {
      if (s.includes('_'))
        throw new RolloutCorrectionError(
          `rollout_rs_threshold for option ${o} takes a single upper bound, not "${s}" (only k1 options take "lower_upper")`,
        );
      out.set(o, { lower: null, upper: positive(s, o, s) });
    }
  });
  return out;
}
