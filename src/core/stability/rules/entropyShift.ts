/** entropy_shift: policy entropy collapsing toward zero or blowing up against the run's own baseline. */
import { Baseline, Streak, Window, fmt } from '../stats';
import { finite, type RuleDef } from '../types';

const KEY = 'actor/entropy';

export const entropyShiftRule: RuleDef = {
  id: 'entropy_shift',
  title: 'Entropy collapse or blow-up',
  description: 'Token entropy far below its starting level (the policy stops exploring) or far above it (the output distribution is being destroyed).',
  metrics: [KEY],
  needs: { allOf: [KEY] },
  enabled: (c) => c.entropyShift.enabled,
  create(cfg, hints) {
    const c = cfg.entropyShift;
    const base = new Baseline(c.baselineSteps);
    const win = new Window(c.smooth);
    const low = new Streak();
    const high = new Streak();
    return {
      feed(rec) {
        const v = finite(rec, KEY);
        if (v === undefined) return [];
        base.push(v);
        win.push(v);
        const b = base.get();
        if (b === null || b <= 0 || !win.full) return [];
        const sm = win.mean();
        if (low.update(sm < c.collapseFrac * b) >= c.patience) {
          return [{
            metric: KEY,
            severity: sm < (c.collapseFrac / 5) * b ? 'critical' : 'warning',
            message: `Entropy collapsed to ${fmt(sm)} nats from a baseline of ${fmt(b)} (step ${rec.step}): the policy has stopped exploring.`,
            hint: hints.entropyCollapse,
          }];
        }
        if (high.update(sm > c.blowupFactor * b && sm > b + c.blowupMinNats) >= c.patience) {
          return [{
            metric: KEY,
            severity: 'critical',
            message: `Entropy blew up to ${fmt(sm)} nats from a baseline of ${fmt(b)} (step ${rec.step}): outputs are turning to noise.`,
            hint: hints.entropyBlowup,
          }];
        }
        return [];
      },
    };
  },
};
