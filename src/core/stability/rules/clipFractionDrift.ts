/** clip_fraction_drift: the share of clipped tokens rising — the update keeps hitting the trust-region bounds. */
import { Baseline, Cadence, Streak, Window, fmt, pct } from '../stats';
import { finite, type RuleDef } from '../types';

const KEY = 'actor/pg_clipfrac';

export const clipFractionDriftRule: RuleDef = {
  id: 'clip_fraction_drift',
  title: 'Clip-fraction drift',
  description: 'The clip fraction rises far above its usual level: many tokens are far off-policy (spec §4 reads this per loss).',
  metrics: [KEY],
  needs: { allOf: [KEY] },
  enabled: (c) => c.clipFracDrift.enabled,
  create(cfg, hints) {
    const c = cfg.clipFracDrift;
    const base = new Baseline(c.baselineSteps);
    const win = new Window(c.smooth);
    const streak = new Streak();
    const cad = new Cadence();
    return {
      feed(rec) {
        const v = finite(rec, KEY);
        if (v === undefined) return [];
        cad.push(rec.step);
        base.resize(cad.points(c.baselineSteps));
        win.resize(cad.points(c.smooth));
        base.push(v);
        win.push(v);
        const b = base.get();
        if (!win.full) return [];
        const sm = win.mean();
        const absolute = sm > c.warn;
        const relative = b !== null && sm > c.factor * b && sm > c.relativeFloor;
        if (streak.update(absolute || relative) < cad.points(c.patience)) return [];
        return [{
          metric: KEY,
          severity: sm > c.critical ? 'critical' : 'warning',
          message: `Clip fraction is ${pct(sm)} (step ${rec.step})${b !== null ? `, baseline ${fmt(b)}` : ''}: many tokens sit outside the trust region.`,
          hint: hints.clipping,
          peak: { step: rec.step, value: sm },
          // The lower of the levels crossed (absolute, or relative to the baseline).
          threshold: Math.min(absolute ? c.warn : Infinity, relative ? Math.max(c.factor * b!, c.relativeFloor) : Infinity),
        }];
      },
    };
  },
};
