/** success_collapse: success or reward giving back most of what was learned (spec §4: CISPO/SAPO peak then fall). */
import { Baseline, Streak, Window, fmt, pct } from '../stats';
import { CLIPPING_HINT, finite, type Finding, type RuleDef } from '../types';

const SUCCESS_KEYS = ['episode/success_rate', 'val/success_rate'] as const;
const REWARD_KEY = 'episode/reward_mean';

export const successCollapseRule: RuleDef = {
  id: 'success_collapse',
  title: 'Success / reward collapse',
  description: 'Training or validation success (or mean return) falls far below its running best after having learned.',
  metrics: [...SUCCESS_KEYS, REWARD_KEY],
  enabled: (c) => c.successCollapse.enabled,
  create(cfg) {
    const c = cfg.successCollapse;
    const succ = SUCCESS_KEYS.map((k) => ({ key: k, win: new Window(k.startsWith('val/') ? c.valSmooth : c.smooth), max: -Infinity, streak: new Streak() }));
    const rw = { win: new Window(c.smooth), base: new Baseline(c.smooth), max: -Infinity, streak: new Streak() };
    return {
      feed(rec) {
        const out: Finding[] = [];
        for (const s of succ) {
          const v = finite(rec, s.key);
          if (v === undefined) continue; // validation keys are NaN between validations
          s.win.push(v);
          if (!s.win.full) continue;
          const sm = s.win.mean();
          s.max = Math.max(s.max, sm);
          const patience = s.key.startsWith('val/') ? 1 : c.patience;
          const fell = s.max >= c.minPeak && sm <= (1 - c.warnFrac) * s.max;
          if (s.streak.update(fell) < patience) continue;
          out.push({
            metric: s.key,
            severity: sm <= (1 - c.criticalFrac) * s.max ? 'critical' : 'warning',
            message: `${s.key.startsWith('val/') ? 'Validation' : 'Training'} success fell to ${pct(sm)} from its best ${pct(s.max)} (step ${rec.step}).`,
            hint: `learned behaviour is being lost; ${CLIPPING_HINT}`,
          });
        }
        const r = finite(rec, REWARD_KEY);
        if (r !== undefined) {
          rw.base.push(r);
          rw.win.push(r);
          const base = rw.base.get();
          if (base !== null && rw.win.full) {
            const sm = rw.win.mean();
            rw.max = Math.max(rw.max, sm);
            const gain = rw.max - base;
            const fell = gain >= c.rewardMinGain && rw.max - sm >= c.rewardGiveBack * gain;
            if (rw.streak.update(fell) >= c.patience) {
              out.push({
                metric: REWARD_KEY,
                severity: sm <= base ? 'critical' : 'warning',
                message: `Mean episode return fell to ${fmt(sm)} from its best ${fmt(rw.max)} (start ${fmt(base)}), giving back ${pct((rw.max - sm) / gain)} of the gain (step ${rec.step}).`,
                hint: `learned behaviour is being lost; ${CLIPPING_HINT}`,
              });
            }
          }
        }
        return out;
      },
    };
  },
};
