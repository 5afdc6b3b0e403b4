/** dead_signal: nearly every group has identical returns, so group-relative advantages are zero. */
import { Cadence, Episode, Streak, pct, span } from '../stats';
import { at, lazyText } from '../quote';
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
    const ep = new Episode('up');
    return {
      feed(rec) {
        const v = finite(rec, KEY);
        if (v === undefined) return [];
        cad.push(rec.step);
        ep.push(rec.step, v);
        if (v >= c.share) ep.hold(1);
        else ep.end();
        const n = streak.update(v >= c.share);
        if (n < cad.points(c.patience)) return [];
        const last = { step: rec.step, value: v };
        const onset = ep.onset;
        return [
          {
            metric: KEY,
            severity: 'warning',
            message: lazyText(
              () =>
                `Zero-variance groups ${at(KEY, last)}: ${n} logged steps in a row (${span(onset, last.step)}) at or above the limit ${pct(c.share)} of groups with identical returns, so almost no learning signal.`,
            ),
            hint: hints.deadSignal,
            peak: last,
            onset,
            quotes: [last],
            threshold: c.share,
          },
        ];
      },
    };
  },
};
