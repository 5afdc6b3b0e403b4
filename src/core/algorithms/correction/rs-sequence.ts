import { keepTest, tokenDivergence, type Estimator } from './rs-estimators';
import { rowMax, rowMean, rowSum } from './math';
import { rsMetrics } from './rs-metrics';
import type { Matrix, RolloutRsFn } from './types';

export type SeqReduce = 'sum' | 'mean' | 'max';

const REDUCE: Record<SeqReduce, (x: Matrix, m: Matrix) => number[]> = { sum: rowSum, mean: rowMean, max: rowMax };

/**
 * `seq_sum_k*` / `seq_mean_k*` / `seq_max_k2|k3`: one statistic per row — the masked sum, the masked mean
 * (count + 1e-8) or the masked max (0 for a row without tokens) of the token divergence — and the whole row is
 * kept or rejected by it (verl sequence-level RS).
 */
export function sequenceRs(reduce: SeqReduce, k: Estimator): RolloutRsFn {
  return (logRatio, mask, b) => {
    const seq = REDUCE[reduce](tokenDivergence(logRatio, k), mask);
    const t = keepTest(k, b.lower, b.upper);
    const keep = logRatio.map((row, i) => row.map(() => (t.keep(seq[i]) ? 1 : 0)));
    const perToken = logRatio.map((row, i) => row.map(() => seq[i]));
    const metrics = rsMetrics(mask, {
      option: `seq_${reduce}_${k}`,
      perToken,
      perSequence: seq,
      keep,
      upper: t.metricUpper,
      lower: t.metricLower,
      applyLower: k === 'k1',
    });
    return { value: keep, metrics };
  };
}
