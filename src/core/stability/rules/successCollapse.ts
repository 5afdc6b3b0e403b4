/** success_collapse: success or reward giving back most of what was learned (spec §4: CISPO/SAPO peak then fall). */
import { Baseline, Cadence, Episode, NoiseEstimator, Streak, Window, extreme, fmt, pct, type Pt } from '../stats';
import { at, level, lazyText } from '../quote';
import { finite, type Finding, type RuleDef } from '../types';

const SUCCESS_KEYS = ['episode/success_rate', 'val/success_rate'] as const;
/**
 * Task scores in [0, 1] read like success when a run logs no success rate: verl logs its GSM8K accuracy as a
 * score (critic/score/mean, val-core/…/reward/mean@1), the lab logs both and its success rate is the one judged.
 */
const SCORE_FALLBACK: Readonly<Record<string, string>> = {
  'episode/score_mean': 'episode/success_rate',
  'val/score_mean': 'val/success_rate',
};
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
  /** The logged points whose mean is `max` (the message names their span, the alert cites their highest). */
  best: Pt[];
  streak: Streak;
  /** The fall: where it began and its lowest logged point. */
  ep: Episode;
}

/** Raises the best smoothed level to `level`, the mean of the window's points (copied only when it is a new best). */
function best(t: Track, level: number): void {
  if (level > t.max) {
    t.max = level;
    t.best = t.win.points();
  }
}

export const successCollapseRule: RuleDef = {
  id: 'success_collapse',
  title: 'Success / reward collapse',
  description:
    'Training or validation success (or mean return) falls far below its running best after having learned, by more than batch noise explains.',
  metrics: [...SUCCESS_KEYS, ...Object.keys(SCORE_FALLBACK), REWARD_KEY, VAL_N_KEY],
  needs: { anyOf: [...SUCCESS_KEYS, ...Object.keys(SCORE_FALLBACK), REWARD_KEY] },
  enabled: (c) => c.successCollapse.enabled,
  create(cfg, hints) {
    const c = cfg.successCollapse;
    const track = (smooth: number): Track => ({
      cad: new Cadence(),
      win: new Window(smooth),
      noise: new NoiseEstimator(c.noiseWindow),
      max: -Infinity,
      best: [],
      streak: new Streak(),
      ep: new Episode('down'),
    });
    const succ = [...SUCCESS_KEYS, ...Object.keys(SCORE_FALLBACK)].map((k) => ({
      key: k,
      t: track(k.startsWith('val/') ? c.valSmooth : c.smooth),
    }));
    /**
     * Training windows are in steps: a TRL point (logged every 10 steps) is already a mean over 10 steps.
     * Validation windows stay in validations (each one is its own held-out mean), so they are not rescaled.
     */
    const advance = (t: Track, step: number, val: boolean): void => {
      t.cad.push(step);
      if (val) return;
      t.win.resize(t.cad.points(c.smooth));
      if (t.win.full) best(t, t.win.mean());
    };
    const rw = { t: track(c.smooth), base: new Baseline(c.smooth) };
    /** Best validation so far with its episode count (validations logged with val/episodes). */
    let bestVal: { p: number; n: number; step: number } | null = null;
    /** The fall (max − smoothed) is beyond noise: z standard errors of a difference of two window means. */
    const beyondNoise = (t: Track, fall: number) =>
      t.noise.samples >= 5 && fall > c.noiseZ * Math.SQRT2 * (t.noise.sigma() / Math.sqrt(t.win.n));
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
              const peak = { step: bestVal.step, value: bestVal.p };
              const last = { step: rec.step, value: valP };
              const was = bestVal;
              out.push({
                metric: VAL_KEY,
                severity: valP <= (1 - c.criticalFrac) * bestVal.p ? 'critical' : 'warning',
                message: lazyText(
                  () =>
                    `Validation success fell to ${pct(valP)} (${Math.round(valP * valN)}/${valN}) at step ${last.step} from its best ${pct(was.p)} (${Math.round(was.p * was.n)}/${was.n}) at step ${was.step}; z = ${fmt(z)}, beyond held-out sampling noise.`,
                ),
                hint: hints.successLoss,
                peak,
                threshold: (1 - c.warnFrac) * bestVal.p,
                quotes: [peak, last],
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
          t.win.push(v, rec.step);
          t.noise.push(v);
          t.ep.push(rec.step, v);
          if (!t.win.full) continue;
          const sm = t.win.mean();
          best(t, sm);
          const patience = isVal ? 1 : t.cad.points(c.patience);
          const fell = t.max >= c.minPeak && sm <= (1 - c.warnFrac) * t.max && beyondNoise(t, t.max - sm);
          if (fell) t.ep.hold(t.win.size, (x) => x <= (1 - c.warnFrac) * t.max);
          else t.ep.end();
          if (t.streak.update(fell) < patience) continue;
          const top = extreme(t.best, 'up')!;
          const low = t.ep.extreme!;
          const last = { step: rec.step, value: v };
          const unit = isVal ? 'validations' : 'logged steps';
          // Snapshots: the window moves on and the best is replaced (not changed) before the text may be built.
          const pts = t.win.points();
          const { max, best: bestPts } = t;
          out.push({
            metric: key,
            severity: sm <= (1 - c.criticalFrac) * t.max ? 'critical' : 'warning',
            message: lazyText(
              () =>
                `${isVal ? 'Validation' : 'Training'} ${primary !== undefined ? 'score' : 'success'} ${level(key, sm, pts)}${pts.length > 1 ? ` (${pts.length} ${unit})` : ''}, down from its best ${level(key, max, bestPts)}${bestPts.length > 1 ? ` (highest ${at(key, top)})` : ''}; ${low.step !== last.step ? `lowest ${at(key, low)}, ` : ''}latest ${at(key, last)}.`,
            ),
            hint: hints.successLoss,
            peak: top,
            threshold: (1 - c.warnFrac) * t.max,
            onset: t.ep.onset,
            quotes: [top, low, last],
          });
        }
        const r = finite(rec, REWARD_KEY);
        if (r !== undefined) {
          const t = rw.t;
          advance(t, rec.step, false);
          rw.base.resize(t.cad.points(c.smooth));
          rw.base.push(r);
          t.win.push(r, rec.step);
          t.noise.push(r);
          t.ep.push(rec.step, r);
          const base = rw.base.get();
          if (base !== null && t.win.full) {
            const sm = t.win.mean();
            best(t, sm);
            const gain = t.max - base;
            const fell = gain >= c.rewardMinGain && t.max - sm >= c.rewardGiveBack * gain && beyondNoise(t, t.max - sm);
            if (fell) t.ep.hold(t.win.size, (x) => x <= t.max - c.rewardGiveBack * gain);
            else t.ep.end();
            if (t.streak.update(fell) >= t.cad.points(c.patience)) {
              const top = extreme(t.best, 'up')!;
              const low = t.ep.extreme!;
              const last = { step: rec.step, value: r };
              const pts = t.win.points();
              const { max, best: bestPts } = t;
              out.push({
                metric: REWARD_KEY,
                severity: sm <= base ? 'critical' : 'warning',
                message: lazyText(
                  () =>
                    `Mean episode return ${level(REWARD_KEY, sm, pts)}, down from its best ${level(REWARD_KEY, max, bestPts)}${bestPts.length > 1 ? ` (highest ${at(REWARD_KEY, top)})` : ''} against a start median ${fmt(base)}, a fall ${fmt(max - sm)} against a gain ${fmt(gain)}; ${low.step !== last.step ? `lowest ${at(REWARD_KEY, low)}, ` : ''}latest ${at(REWARD_KEY, last)}.`,
                ),
                hint: hints.successLoss,
                peak: top,
                threshold: t.max - c.rewardGiveBack * gain,
                onset: t.ep.onset,
                quotes: [top, low, last],
              });
            }
          }
        }
        return out;
      },
    };
  },
};
