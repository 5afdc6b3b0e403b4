import { keepTest, tokenDivergence, type Estimator } from './rs-estimators';
import { mapM } from './math';
import { rsMetrics } from './rs-metrics';
import type { RolloutRsFn } from './types';

/** `token_k1|k2|k3`: reject each token whose own divergence fails the test (verl token-level RS). */
export function tokenRs(k: Estimator): RolloutRsFn {
  return (logRatio, mask, b) => {
    const stat = tokenDivergence(logRatio, k);
    const t = keepTest(k, b.lower, b.upper);
    const keep = mapM(stat, (s) => (t.keep(s) ? 1 : 0));
    const metrics = rsMetrics(mask, {
      option: `token_${k}`,
      perToken: stat,
      perSequence: null,
      keep,
      upper: t.metricUpper,
      lower: t.metricLower,
      applyLower: k === 'k1',
    });
    return { value: keep, metrics };
  };
}
