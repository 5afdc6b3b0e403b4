/** dead_signal: nearly every group has identical returns, so group-relative advantages are zero. */
import { Cadence, Streak, pct } from '../stats';
import { finite, type RuleDef } from '../types';

const KEY = 'filter/zero_variance_share';

export const deadSignalRule: RuleDef = {
  id: 'dead_signal',
  title: 'Dead learning signal',
  description: 'The share of zero-variance groups is near 1: GRPO-style advantages vanish and nothing is learned.',
  metrics: [KEY],
  needs: { allOf: [KEY] },
  enabled: (c) => c.deadSignal.enabled,
  create(cfg, hints) {
    const c = cfg.deadSignal;
    const streak = new Streak();
    const cad = new Cadence();
    return {
      feed(rec) {
        const v = finite(rec, KEY);
        if (v === undefined) return [];
        cad.push(rec.step);
        const n = streak.update(v >= c.share);
        if (n < cad.points(c.patience)) return [];
        return [{
          metric: KEY,
          severity: 'warning',
          message: `${pct(v)} of groups had identical returns at step ${rec.step} (${n} logged steps in a row at ≥ ${pct(c.share)}): almost no learning signal.`,
          hint: hints.deadSignal,
          peak: { step: rec.step, value: v },
          threshold: c.share,
        }];
      },
    };
  },
};
