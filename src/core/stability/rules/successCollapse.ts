/** success_collapse: success or reward giving back most of what was learned (spec §4: CISPO/SAPO peak then fall). */
import { Baseline, NoiseEstimator, Streak, Window, fmt, pct } from '../stats';
import { CLIPPING_HINT, finite, type Finding, type RuleDef } from '../types';

const SUCCESS_KEYS = ['episode/success_rate', 'val/success_rate'] as const;
const REWARD_KEY = 'episode/reward_mean';

interface Track {
  win: Window;
  noise: NoiseEstimator;
  max: number;
  streak: Streak;
}

export const successCollapseRule: RuleDef = {
  id: 'success_collapse',
  title: 'Success / reward collapse',
  description: 'Training or validation success (or mean return) falls far below its running best after having learned, by more than batch noise explains.',
  metrics: [...SUCCESS_KEYS, REWARD_KEY],
  enabled: (c) => c.successCollapse.enabled,
  create(cfg) {
    const c = cfg.successCollapse;
    const track = (smooth: number): Track => ({ win: new Window(smooth), noise: new NoiseEstimator(c.noiseWindow), max: -Infinity, streak: new Streak() });
    const succ = SUCCESS_KEYS.map((k) => ({ key: k, t: track(k.startsWith('val/') ? c.valSmooth : c.smooth) }));
    const rw = { t: track(c.smooth), base: new Baseline(c.smooth) };
    /** The fall (max − smoothed) is beyond noise: z standard errors of a difference of two window means. */
    const beyondNoise = (t: Track, fall: number) => t.noise.samples >= 5 && fall > c.noiseZ * Math.SQRT2 * (t.noise.sigma() / Math.sqrt(t.win.n));
    return {
      feed(rec) {
        const out: Finding[] = [];
        for (const { key, t } of succ) {
          const v = finite(rec, key);
          if (v === undefined) continue; // validation keys are NaN between validations
          t.win.push(v);
          t.noise.push(v);
          if (!t.win.full) continue;
          const sm = t.win.mean();
          t.max = Math.max(t.max, sm);
          const patience = key.startsWith('val/') ? 1 : c.patience;
          const fell = t.max >= c.minPeak && sm <= (1 - c.warnFrac) * t.max && beyondNoise(t, t.max - sm);
          if (t.streak.update(fell) < patience) continue;
          out.push({
            metric: key,
            severity: sm <= (1 - c.criticalFrac) * t.max ? 'critical' : 'warning',
            message: `${key.startsWith('val/') ? 'Validation' : 'Training'} success fell to ${pct(sm)} from its best ${pct(t.max)} (means of ${t.win.size} ${key.startsWith('val/') ? 'validations' : 'steps'}; step ${rec.step}).`,
            hint: `learned behaviour is being lost; ${CLIPPING_HINT}`,
          });
        }
        const r = finite(rec, REWARD_KEY);
        if (r !== undefined) {
          const t = rw.t;
          rw.base.push(r);
          t.win.push(r);
          t.noise.push(r);
          const base = rw.base.get();
          if (base !== null && t.win.full) {
            const sm = t.win.mean();
            t.max = Math.max(t.max, sm);
            const gain = t.max - base;
            const fell = gain >= c.rewardMinGain && t.max - sm >= c.rewardGiveBack * gain && beyondNoise(t, t.max - sm);
            if (t.streak.update(fell) >= c.patience) {
              out.push({
                metric: REWARD_KEY,
                severity: sm <= base ? 'critical' : 'warning',
                message: `Mean episode return fell to ${fmt(sm)} from its best ${fmt(t.max)} (start ${fmt(base)}), giving back ${pct((t.max - sm) / gain)} of the gain (step ${rec.step}).`,
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
