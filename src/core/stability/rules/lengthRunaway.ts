/**
 * length_runaway: responses growing until they hit the length cap.
 *
 * Judged against the run's own lengths, never a fixed token count (the lab's cap is 32 tokens, verl's 192–1024):
 * the share at the cap must have risen over the run's start, and the mean must have jumped against its recent
 * median. Sitting at the cap from the first step is how verl runs with a tight cap begin, and they shorten as they
 * learn; a mean growing slowly over thousands of steps is a policy learning to reason longer (W&B Deep-GRPO:
 * 270 → 665 tokens over 2958 steps while its test reward rose), so growth against the run's start is not judged.
 */
import { Baseline, Cadence, Streak, Window, fmt, median, pct } from '../stats';
import { finite, type Finding, type RuleDef } from '../types';

const CLIP = 'response_length/clip_ratio';
const MEAN = 'response_length/mean';

export const lengthRunawayRule: RuleDef = {
  id: 'length_runaway',
  title: 'Response-length runaway',
  description: 'Responses grow far beyond their usual length, or more and more of them hit the max-response-tokens cap.',
  metrics: [CLIP, MEAN],
  needs: { anyOf: [CLIP, MEAN] },
  enabled: (c) => c.lengthRunaway.enabled,
  create(cfg, hints) {
    const c = cfg.lengthRunaway;
    const clipCad = new Cadence();
    // The lowest share of the first steps: a run that breaks within them (the lab's CISPO, 0 → 0.78 by step 4)
    // must not count its broken steps as its start.
    const clipBase = new Baseline(c.baselineSteps, (xs) => Math.min(...xs));
    const clipWin = new Window(c.smooth);
    const clipStreak = new Streak();
    const lenCad = new Cadence();
    const lenStreak = new Streak();
    /** Recent calm lengths (jumps stay out, so a sustained jump keeps being judged against the calm level). */
    const calm: number[] = [];
    const hint = hints.length;
    return {
      feed(rec) {
        const out: Finding[] = [];
        const cr = finite(rec, CLIP);
        if (cr !== undefined) {
          clipCad.push(rec.step);
          clipWin.resize(clipCad.points(c.smooth));
          clipBase.resize(clipCad.points(c.baselineSteps));
          clipWin.push(cr);
          clipBase.push(cr);
          const sm = clipWin.mean();
          const cb = clipBase.get();
          const rose = cb !== null && sm >= cb + c.clipRise;
          if (clipStreak.update(clipWin.full && sm >= c.clipWarn && rose) >= clipCad.points(c.patience)) {
            out.push({
              metric: CLIP, severity: sm >= c.clipCritical ? 'critical' : 'warning', message: `${pct(sm)} of responses hit the max length (step ${rec.step}), up from ${pct(cb!)} at the start.`, hint,
              peak: { step: rec.step, value: sm }, threshold: Math.max(c.clipWarn, cb! + c.clipRise),
            });
          }
        }
        const len = finite(rec, MEAN);
        if (len !== undefined) {
          lenCad.push(rec.step);
          const recentMed = calm.length >= Math.min(c.jumpWindow, 5) ? median(calm) : NaN;
          const jumped = recentMed > 0 && len > c.jumpFactor * recentMed;
          if (!jumped) {
            calm.push(len);
            if (calm.length > c.jumpWindow) calm.shift();
          }
          if (lenStreak.update(jumped) >= lenCad.points(c.patience)) {
            const message = `Mean response length jumped to ${fmt(len)} tokens, ${fmt(len / recentMed)}× its recent median of ${fmt(recentMed)} (step ${rec.step}).`;
            out.push({ metric: MEAN, severity: 'warning', message, hint, peak: { step: rec.step, value: len }, threshold: c.jumpFactor * recentMed });
          }
        }
        return out;
      },
    };
  },
};
