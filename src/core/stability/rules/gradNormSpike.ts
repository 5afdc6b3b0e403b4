/** grad_norm_spike: gradient norm far above its rolling median (spec §4: "gradient norms explode" before collapse). */
import { Episode, Streak, Window, fmt, span } from '../stats';
import { at, lazyText } from '../quote';
import { finite, type RuleDef } from '../types';

const KEY = 'actor/grad_norm';

export const gradNormSpikeRule: RuleDef = {
  id: 'grad_norm_spike',
  title: 'Gradient-norm spike',
  description:
    "The pre-clipping gradient norm jumps far above its own rolling median (the run's scale, whatever the model size) — the first sign of the tolerant-clipping collapse when it persists.",
  metrics: [KEY],
  needs: { allOf: [KEY] },
  enabled: (c) => c.gradNormSpike.enabled,
  create(cfg, hints) {
    const c = cfg.gradNormSpike;
    const win = new Window(c.window);
    const streak = new Streak();
    const ep = new Episode('up');
    let prevTall = false;
    return {
      feed(rec) {
        const v = finite(rec, KEY);
        if (v === undefined) return [];
        const med = win.median();
        const judged = win.size >= c.minHistory && med > 0;
        const spike = judged && v > c.factor * med && v > c.minValue;
        const n = streak.update(spike);
        ep.push(rec.step, v);
        // Spikes stay out of the baseline window, so a sustained explosion keeps firing.
        if (!spike) win.push(v);
        if (!spike) {
          prevTall = false;
          ep.end();
          return [];
        }
        ep.hold(1);
        const ratio = v / med;
        // Tall on two points in a row, or sustained: one isolated spike is a warning (config.ts says why).
        const tall = ratio > c.criticalFactor && prevTall;
        prevTall = ratio > c.criticalFactor;
        const step = rec.step;
        const calm = win.size;
        const onset = ep.onset;
        const top = ep.extreme!;
        return [
          {
            metric: KEY,
            severity: tall || n >= c.sustainCritical ? 'critical' : 'warning',
            message: lazyText(
              () =>
                `Gradient norm ${at(KEY, { step, value: v })} is ${fmt(ratio)}× its rolling median ${fmt(med)} (median of the last ${calm} calm logged steps)${n > 1 ? `; ${n} logged steps in a row above ${fmt(c.factor)}× (${span(onset, step)}), highest ${at(KEY, top)}` : ''}.`,
            ),
            hint: hints.gradNorm,
            peak: n > 1 ? top : { step, value: v },
            onset,
            quotes: [{ step, value: v }, top],
            threshold: Math.max(c.factor * med, c.minValue),
          },
        ];
      },
    };
  },
};
