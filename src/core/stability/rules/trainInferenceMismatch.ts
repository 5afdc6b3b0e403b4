/**
 * train_inference_mismatch: the rollout engine's log-probs disagree with the trainer's.
 *
 * Not judged with rollout.policyLag > 0 (hints.policyLag): the trainer then logs the behaviour/π_old gap as
 * offpolicy/lag_* (the policy's own move), and runs stored before it did logged it as mismatch/* — 8.8 nats at
 * step 2 of the pressure ladder's level 3, read as a collapse.
 */
import { Cadence, Streak, fmt, span } from '../stats';
import { at, lazyText } from '../quote';
import { finite, type Finding, type RuleDef } from '../types';

const MAX = 'mismatch/logprob_abs_max';
const MEAN = 'mismatch/logprob_abs_mean';

export const trainInferenceMismatchRule: RuleDef = {
  id: 'train_inference_mismatch',
  title: 'Train/inference mismatch',
  description:
    'Log-probabilities from the rollout engine (onnxruntime) and the trainer (tfjs) disagree, so importance ratios are wrong before any update.',
  metrics: [MAX, MEAN],
  needs: { anyOf: [MAX, MEAN] },
  enabled: (c) => c.mismatch.enabled,
  create(cfg, hints) {
    if (hints.policyLag > 0) return { feed: () => [] };
    const c = cfg.mismatch;
    const maxStreak = new Streak();
    const meanStreak = new Streak();
    const cad = new Cadence();
    const hint = hints.mismatch;
    let maxOnset = 0;
    let meanOnset = 0;
    return {
      feed(rec) {
        const out: Finding[] = [];
        const mx = finite(rec, MAX);
        const mn = finite(rec, MEAN);
        if (mx !== undefined || mn !== undefined) cad.push(rec.step);
        const patience = cad.points(c.patience);
        if (mx !== undefined) {
          const n = maxStreak.update(mx > c.maxWarn);
          if (n === 1) maxOnset = rec.step;
          if (n >= patience) {
            const p = { step: rec.step, value: mx };
            const onset = maxOnset;
            out.push({
              metric: MAX,
              severity: mx > c.maxCritical ? 'critical' : 'warning',
              message: lazyText(
                () =>
                  `Rollout and trainer log-probs differ by up to ${at(MAX, p)}, above the limit ${fmt(c.maxWarn)} for ${n} logged steps (${span(onset, p.step)}).`,
              ),
              hint,
              peak: p,
              threshold: c.maxWarn,
              onset: maxOnset,
              quotes: [p],
            });
          }
        }
        if (mn !== undefined) {
          const n = meanStreak.update(mn > c.meanWarn);
          if (n === 1) meanOnset = rec.step;
          if (n >= patience) {
            const p = { step: rec.step, value: mn };
            const onset = meanOnset;
            out.push({
              metric: MEAN,
              severity: 'warning',
              message: lazyText(
                () =>
                  `Rollout and trainer log-probs differ on average per token by ${at(MEAN, p)}, above the limit ${fmt(c.meanWarn)} for ${n} logged steps (${span(onset, p.step)}).`,
              ),
              hint,
              peak: p,
              threshold: c.meanWarn,
              onset: meanOnset,
              quotes: [p],
            });
          }
        }
        return out;
      },
    };
  },
};
