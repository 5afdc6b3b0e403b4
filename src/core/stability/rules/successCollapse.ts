/** success_collapse: success or reward giving back most of what was learned (spec §4: CISPO/SAPO peak then fall). */
import { Baseline, Cadence, NoiseEstimator, Streak, Window, fmt, pct } from '../stats';
import { finite, type Finding, type RuleDef } from '../types';

const SUCCESS_KEYS = ['episode/success_rate', 'val/success_rate'] as const;
/**
 * Task scores in [0, 1] read like success when a run logs no success rate: verl logs its GSM8K accuracy as a
 * score (critic/score/mean, val-core/…/reward/mean@1), the lab logs both and its success rate is the one judged.
 */
const SCORE_FALLBACK: Readonly<Record<string, string>> = { 'episode/score_mean': 'episode/success_rate', 'val/score_mean': 'val/success_rate' };
const REWARD_KEY = 'episode/reward_mean';
const VAL_KEY = 'val/success_rate';
const VAL_N_KEY = 'val/episodes';

/**
 * z of a fall from proportion p1 (n1 episodes) to p2 (n2): the two-proportion test with the pooled rate. 0 when
 * both are 0 or 1 (no spread, no evidence).
 */
export function proportionFallZ(p1: number, n1: number, p2: number, n2: number): number {
  const pooled = (p1 * n1 + p2 * n2) / (n1 + n2);
  const se = Math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2));
  return se > 0 ? (p1 - p2) / se : 0;
}

interface Track {
  cad: Cadence;
  win: Window;
  noise: NoiseEstimator;
  max: number;
  /** Where `max` was reached (the alert cites it), and the last logged step (the window's mean before a push). */
  maxStep: number;
  prevStep: number;
  streak: Streak;
}

/** Raises the best smoothed level to `level`, reached at `step`. */
function best(t: Track, level: number, step: number): void {
  if (level > t.max) {
    t.max = level;
    t.maxStep = step;
  }
}

export const successCollapseRule: RuleDef = {
  id: 'success_collapse',
  title: 'Success / reward collapse',
  description: 'Training or validation success (or mean return) falls far below its running best after having learned, by more than batch noise explains.',
  metrics: [...SUCCESS_KEYS, ...Object.keys(SCORE_FALLBACK), REWARD_KEY, VAL_N_KEY],
  needs: { anyOf: [...SUCCESS_KEYS, ...Object.keys(SCORE_FALLBACK), REWARD_KEY] },
  enabled: (c) => c.successCollapse.enabled,
  create(cfg, hints) {
    const c = cfg.successCollapse;
    const track = (smooth: number): Track => ({ cad: new Cadence(), win: new Window(smooth), noise: new NoiseEstimator(c.noiseWindow), max: -Infinity, maxStep: 0, prevStep: 0, streak: new Streak() });
    const succ = [...SUCCESS_KEYS, ...Object.keys(SCORE_FALLBACK)].map((k) => ({ key: k, t: track(k.startsWith('val/') ? c.valSmooth : c.smooth) }));
    /**
     * Training windows are in steps: a TRL point (logged every 10 steps) is already a mean over 10 steps.
     * Validation windows stay in validations (each one is its own held-out mean), so they are not rescaled.
     */
    const advance = (t: Track, step: number, val: boolean): void => {
      t.cad.push(step);
      if (val) return;
      t.win.resize(t.cad.points(c.smooth));
      if (t.win.full) best(t, t.win.mean(), t.prevStep);
    };
    const rw = { t: track(c.smooth), base: new Baseline(c.smooth) };
    /** Best validation so far with its episode count (validations logged with val/episodes). */
    let bestVal: { p: number; n: number; step: number } | null = null;
    /** The fall (max − smoothed) is beyond noise: z standard errors of a difference of two window means. */
    const beyondNoise = (t: Track, fall: number) => t.noise.samples >= 5 && fall > c.noiseZ * Math.SQRT2 * (t.noise.sigma() / Math.sqrt(t.win.n));
    return {
      feed(rec) {
        const out: Finding[] = [];
        const valN = finite(rec, VAL_N_KEY);
        const valP = finite(rec, VAL_KEY);
        if (valP !== undefined && valN !== undefined && valN > 0) {
          // Each validation is a mean over valN held-out episodes: test it against the best one directly.
          if (bestVal && bestVal.p >= c.minPeak && valP <= (1 - c.warnFrac) * bestVal.p) {
            const z = proportionFallZ(bestVal.p, bestVal.n, valP, valN);
            if (z >= c.valZ) {
              out.push({
                metric: VAL_KEY,
                severity: valP <= (1 - c.criticalFrac) * bestVal.p ? 'critical' : 'warning',
                message: `Validation success fell to ${pct(valP)} (${Math.round(valP * valN)}/${valN}) from its best ${pct(bestVal.p)} (${Math.round(bestVal.p * bestVal.n)}/${bestVal.n}, step ${bestVal.step}); z = ${fmt(z)}, beyond held-out sampling noise (step ${rec.step}).`,
                hint: hints.successLoss,
                peak: { step: bestVal.step, value: bestVal.p },
                threshold: (1 - c.warnFrac) * bestVal.p,
              });
            }
          }
          if (!bestVal || valP > bestVal.p) bestVal = { p: valP, n: valN, step: rec.step };
        }
        for (const { key, t } of succ) {
          if (key === VAL_KEY && valN !== undefined) continue; // tested above
          const primary = SCORE_FALLBACK[key];
          if (primary !== undefined && primary in rec.values) continue; // the run logs a success rate: that one is judged
          const v = finite(rec, key);
          if (v === undefined) continue; // validation keys are NaN between validations
          const isVal = key.startsWith('val/');
          advance(t, rec.step, isVal);
          t.win.push(v);
          t.noise.push(v);
          t.prevStep = rec.step;
          if (!t.win.full) continue;
          const sm = t.win.mean();
          best(t, sm, rec.step);
          const patience = isVal ? 1 : t.cad.points(c.patience);
          const fell = t.max >= c.minPeak && sm <= (1 - c.warnFrac) * t.max && beyondNoise(t, t.max - sm);
          if (t.streak.update(fell) < patience) continue;
          out.push({
            metric: key,
            severity: sm <= (1 - c.criticalFrac) * t.max ? 'critical' : 'warning',
            message: `${isVal ? 'Validation' : 'Training'} ${primary !== undefined ? 'score' : 'success'} fell to ${pct(sm)} from its best ${pct(t.max)} (means of ${t.win.size} ${key.startsWith('val/') ? 'validations' : 'steps'}; step ${rec.step}).`,
            hint: hints.successLoss,
            peak: { step: t.maxStep, value: t.max },
            threshold: (1 - c.warnFrac) * t.max,
          });
        }
        const r = finite(rec, REWARD_KEY);
        if (r !== undefined) {
          const t = rw.t;
          advance(t, rec.step, false);
          rw.base.resize(t.cad.points(c.smooth));
          rw.base.push(r);
          t.win.push(r);
          t.noise.push(r);
          t.prevStep = rec.step;
          const base = rw.base.get();
          if (base !== null && t.win.full) {
            const sm = t.win.mean();
            best(t, sm, rec.step);
            const gain = t.max - base;
            const fell = gain >= c.rewardMinGain && t.max - sm >= c.rewardGiveBack * gain && beyondNoise(t, t.max - sm);
            if (t.streak.update(fell) >= t.cad.points(c.patience)) {
              out.push({
                metric: REWARD_KEY,
                severity: sm <= base ? 'critical' : 'warning',
                message: `Mean episode return fell to ${fmt(sm)} from its best ${fmt(t.max)} (start ${fmt(base)}), giving back ${pct((t.max - sm) / gain)} of the gain (step ${rec.step}).`,
                hint: hints.successLoss,
                peak: { step: t.maxStep, value: t.max },
                threshold: t.max - c.rewardGiveBack * gain,
              });
            }
          }
        }
        return out;
      },
    };
  },
};
