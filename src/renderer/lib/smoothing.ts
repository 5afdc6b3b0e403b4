/**
 * Curve smoothing for the charts, as researchers know it from TensorBoard and W&B.
 *
 * Non-finite points (null) are never smoothed over and never dropped: they stay null at their position so
 * the chart can mark them, and they do not poison the running state of the smoother.
 */
export type SmoothingMode = 'none' | 'ema' | 'mean';

export const SMOOTHING_MODES: readonly { mode: SmoothingMode; label: string }[] = [
  { mode: 'none', label: 'None' },
  { mode: 'ema', label: 'Debiased EMA' },
  { mode: 'mean', label: 'Running mean' },
];

/**
 * Exponential moving average with TensorBoard's debiasing: the first values are divided by 1 − w^n so the
 * curve does not start at zero. `weight` in [0, 1): 0 = raw, 0.99 = very smooth.
 */
export function debiasedEma(y: readonly (number | null)[], weight: number): (number | null)[] {
  if (!(weight >= 0 && weight < 1)) throw new RangeError(`debiasedEma: weight must be in [0, 1), got ${weight}`);
  const out: (number | null)[] = new Array(y.length);
  let acc = 0;
  let n = 0;
  for (let i = 0; i < y.length; i++) {
    const v = y[i];
    if (v === null || !Number.isFinite(v)) {
      out[i] = null;
      continue;
    }
    acc = acc * weight + (1 - weight) * v;
    n++;
    const debias = 1 - Math.pow(weight, n);
    out[i] = debias > 0 ? acc / debias : v;
  }
  return out;
}

/** Trailing mean over the last `window` finite points (the point itself included). */
export function runningMean(y: readonly (number | null)[], window: number): (number | null)[] {
  if (!Number.isInteger(window) || window < 1) throw new RangeError(`runningMean: window must be an integer ≥ 1, got ${window}`);
  const out: (number | null)[] = new Array(y.length);
  const buf: number[] = [];
  let sum = 0;
  for (let i = 0; i < y.length; i++) {
    const v = y[i];
    if (v === null || !Number.isFinite(v)) {
      out[i] = null;
      continue;
    }
    buf.push(v);
    sum += v;
    if (buf.length > window) sum -= buf.shift() as number;
    out[i] = sum / buf.length;
  }
  return out;
}

/**
 * One slider value `strength` in [0, 1) drives both smoothers: the EMA weight directly, the running-mean
 * window as 1 + round(strength × 49) points (0 → raw, 0.99 → 50-point window).
 */
export function smooth(y: readonly (number | null)[], mode: SmoothingMode, strength: number): (number | null)[] {
  switch (mode) {
    case 'none':
      return y.slice();
    case 'ema':
      return debiasedEma(y, strength);
    case 'mean':
      return runningMean(y, 1 + Math.round(strength * 49));
    default: {
      const m: never = mode;
      throw new RangeError(`smooth: unknown mode "${String(m)}"; known: none, ema, mean`);
    }
  }
}
