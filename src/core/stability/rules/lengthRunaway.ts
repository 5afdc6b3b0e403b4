/** length_runaway: responses growing until they hit the length cap. */
import { Baseline, Streak, Window, fmt, pct } from '../stats';
import { finite, type Finding, type RuleDef } from '../types';

const CLIP = 'response_length/clip_ratio';
const MEAN = 'response_length/mean';

export const lengthRunawayRule: RuleDef = {
  id: 'length_runaway',
  title: 'Response-length runaway',
  description: 'Responses grow far beyond their usual length or keep hitting the max-response-tokens cap.',
  metrics: [CLIP, MEAN],
  needs: { anyOf: [CLIP, MEAN] },
  enabled: (c) => c.lengthRunaway.enabled,
  create(cfg, hints) {
    const c = cfg.lengthRunaway;
    const clipWin = new Window(c.smooth);
    const clipStreak = new Streak();
    const base = new Baseline(c.baselineSteps);
    const lenWin = new Window(c.smooth);
    const lenStreak = new Streak();
    const hint = hints.length;
    return {
      feed(rec) {
        const out: Finding[] = [];
        const cr = finite(rec, CLIP);
        if (cr !== undefined) {
          clipWin.push(cr);
          const sm = clipWin.mean();
          if (clipStreak.update(clipWin.full && sm >= c.clipWarn) >= c.patience) {
            out.push({ metric: CLIP, severity: sm >= c.clipCritical ? 'critical' : 'warning', message: `${pct(sm)} of responses hit the max length (step ${rec.step}).`, hint });
          }
        }
        const len = finite(rec, MEAN);
        if (len !== undefined) {
          base.push(len);
          lenWin.push(len);
          const b = base.get();
          if (b !== null && b > 0 && lenWin.full) {
            const sm = lenWin.mean();
            if (lenStreak.update(sm > c.lengthFactor * b) >= c.patience) {
              out.push({ metric: MEAN, severity: 'warning', message: `Mean response length grew to ${fmt(sm)} tokens from a baseline of ${fmt(b)} (step ${rec.step}).`, hint });
            }
          }
        }
        return out;
      },
    };
  },
};
