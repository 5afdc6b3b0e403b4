/** clip_fraction_drift: the share of clipped tokens rising — the update keeps hitting the trust-region bounds. */
import { Baseline, Cadence, Episode, Streak, Window, pct } from '../stats';
import { at, firstPoints, level, lazyText } from '../quote';
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
    const ep = new Episode('up');
    const cad = new Cadence();
    return {
      feed(rec) {
        const v = finite(rec, KEY);
        if (v === undefined) return [];
        cad.push(rec.step);
        base.resize(cad.points(c.baselineSteps));
        win.resize(cad.points(c.smooth));
        base.push(v);
        win.push(v, rec.step);
        ep.push(rec.step, v);
        const b = base.get();
        if (!win.full) return [];
        const sm = win.mean();
        const absolute = sm > c.warn;
        const relative = b !== null && sm > c.factor * b && sm > c.relativeFloor;
        // The lower of the levels crossed (absolute, or relative to the baseline).
        const limit = Math.min(absolute ? c.warn : Infinity, relative ? Math.max(c.factor * b!, c.relativeFloor) : Infinity);
        if (absolute || relative) ep.hold(win.size, (x) => x > limit);
        else ep.end();
        if (streak.update(absolute || relative) < cad.points(c.patience)) return [];
        const top = ep.extreme!;
        const last = { step: rec.step, value: v };
        const pts = win.points();
        const baseN = base.n;
        const peakText = lazyText(() =>
          top.step !== last.step ? `; highest ${at(KEY, top)}, latest ${at(KEY, last)}` : `; ${at(KEY, last)}`,
        );
        return [
          {
            metric: KEY,
            severity: sm > c.critical ? 'critical' : 'warning',
            message: lazyText(
              () =>
                `Clip fraction ${level(KEY, sm, pts)}, above the limit ${pct(limit)}${b !== null ? ` (baseline ${pct(b)}, ${firstPoints(baseN)})` : ''}${peakText()}: many tokens sit outside the trust region.`,
            ),
            hint: hints.clipping,
            peak: top,
            threshold: limit,
            onset: ep.onset,
            quotes: [top, last],
          },
        ];
      },
    };
  },
};
