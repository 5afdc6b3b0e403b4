/** train_inference_mismatch: the rollout engine's log-probs disagree with the trainer's. */
import { Cadence, Streak, fmt } from '../stats';
import { finite, type Finding, type RuleDef } from '../types';

const MAX = 'mismatch/logprob_abs_max';
const MEAN = 'mismatch/logprob_abs_mean';

export const trainInferenceMismatchRule: RuleDef = {
  id: 'train_inference_mismatch',
  title: 'Train/inference mismatch',
  description: 'Log-probabilities from the rollout engine (onnxruntime) and the trainer (tfjs) disagree, so importance ratios are wrong before any update.',
  metrics: [MAX, MEAN],
  needs: { anyOf: [MAX, MEAN] },
  enabled: (c) => c.mismatch.enabled,
  create(cfg, hints) {
    const c = cfg.mismatch;
    const maxStreak = new Streak();
    const meanStreak = new Streak();
    const cad = new Cadence();
    const hint = hints.mismatch;
    return {
      feed(rec) {
        const out: Finding[] = [];
        const mx = finite(rec, MAX);
        const mn = finite(rec, MEAN);
        if (mx !== undefined || mn !== undefined) cad.push(rec.step);
        const patience = cad.points(c.patience);
        if (mx !== undefined && maxStreak.update(mx > c.maxWarn) >= patience) {
          out.push({ metric: MAX, severity: mx > c.maxCritical ? 'critical' : 'warning', message: `Rollout and trainer log-probs differ by up to ${fmt(mx)} nats (step ${rec.step}).`, hint, peak: { step: rec.step, value: mx }, threshold: c.maxWarn });
        }
        if (mn !== undefined && meanStreak.update(mn > c.meanWarn) >= patience) {
          out.push({ metric: MEAN, severity: 'warning', message: `Rollout and trainer log-probs differ by ${fmt(mn)} nats per token on average (step ${rec.step}).`, hint, peak: { step: rec.step, value: mn }, threshold: c.meanWarn });
        }
        return out;
      },
    };
  },
};
