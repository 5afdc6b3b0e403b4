/**
 * length_runaway: responses growing until they hit the length cap.
 *
 * Judged against the run's own lengths, never a fixed token count (the lab's cap is 32 tokens, verl's 192–1024):
 * the share at the cap must have risen over the run's start, and the mean must have jumped against its recent
 * median. Sitting at the cap from the first step is how verl runs with a tight cap begin, and they shorten as they
 * learn; a mean growing slowly over thousands of steps is a policy learning to reason longer (W&B Deep-GRPO:
 * 270 → 665 tokens over 2958 steps while its test reward rose), so growth against the run's start is not judged.
 */
import { Cadence, Episode, Streak, Window, fmt, pct, span, type Pt } from '../stats';
import { at, firstPoints, level, lazyText } from '../quote';
import { finite, type Finding, type RuleDef } from '../types';

const CLIP = 'response_length/clip_ratio';
const MEAN = 'response_length/mean';
/** Shares of 1 that say whether any response earned anything (the lab logs both, verl its score, TRL accuracy). */
const SCORE_KEYS = ['episode/score_mean', 'episode/success_rate'] as const;

export const lengthRunawayRule: RuleDef = {
  id: 'length_runaway',
  title: 'Response-length runaway',
  description:
    'Responses grow far beyond their usual length, more and more of them hit the max-response-tokens cap, or nearly all of them run to the cap while none earns any score.',
  metrics: [CLIP, MEAN, ...SCORE_KEYS],
  needs: { anyOf: [CLIP, MEAN] },
  enabled: (c) => c.lengthRunaway.enabled,
  create(cfg, hints) {
    const c = cfg.lengthRunaway;
    const clipCad = new Cadence();
    /**
     * The lowest share among the first baselineSteps steps, with its step: a run that breaks within them (the
     * lab's CISPO, 0 → 0.78 by step 4) must not count its broken steps as its start.
     */
    let clipStart: Pt | null = null;
    let clipSeen = 0;
    const clipWin = new Window(c.smooth);
    const clipStreak = new Streak();
    const clipEp = new Episode('up');
    const capStreak = new Streak();
    const capEp = new Episode('up');
    /** Every score logged so far was 0 (null until one is logged). */
    let scoreAlwaysZero: boolean | null = null;
    let scoreFirst: Pt | null = null;
    /** Mean lengths by step (the last few), so the cap finding can quote the length where it started and peaked. */
    const lenAt = new Map<number, number>();
    let lenFirst: Pt | null = null;
    const lenCad = new Cadence();
    const lenStreak = new Streak();
    const lenEp = new Episode('up');
    /** Recent calm lengths (jumps stay out, so a sustained jump keeps being judged against the calm level). */
    const calm = new Window(c.jumpWindow);
    const hint = hints.length;
    return {
      feed(rec) {
        const out: Finding[] = [];
        const lenNow = finite(rec, MEAN);
        if (lenNow !== undefined) {
          lenFirst ??= { step: rec.step, value: lenNow };
          lenAt.set(rec.step, lenNow);
          if (lenAt.size > 64) lenAt.delete(lenAt.keys().next().value!);
        }
        const scoreKey = SCORE_KEYS.find((k) => finite(rec, k) !== undefined);
        const score = scoreKey !== undefined ? finite(rec, scoreKey)! : undefined;
        if (score !== undefined) {
          scoreAlwaysZero = (scoreAlwaysZero ?? true) && score <= 0;
          scoreFirst ??= { step: rec.step, value: score };
        }
        const cr = finite(rec, CLIP);
        if (cr !== undefined) {
          clipCad.push(rec.step);
          clipWin.resize(clipCad.points(c.smooth));
          clipWin.push(cr, rec.step);
          clipEp.push(rec.step, cr);
          capEp.push(rec.step, cr);
          if (clipSeen < clipCad.points(c.baselineSteps) && (clipStart === null || cr < clipStart.value))
            clipStart = { step: rec.step, value: cr };
          clipSeen++;
          const sm = clipWin.mean();
          // The start counts once its first steps are in: until then a rise is not judged against it.
          const cb = clipSeen >= clipCad.points(c.baselineSteps) ? clipStart : null;
          const rose = cb !== null && sm >= cb.value + c.clipRise;
          const over = clipWin.full && sm >= c.clipWarn && rose;
          if (over) clipEp.hold(clipWin.size, (x) => x >= c.clipWarn);
          else clipEp.end();
          if (clipStreak.update(over) >= clipCad.points(c.patience)) {
            const top = clipEp.extreme!;
            const last = { step: rec.step, value: cr };
            const pts = clipWin.points();
            const baseN = clipCad.points(c.baselineSteps);
            out.push({
              metric: CLIP,
              severity: sm >= c.clipCritical ? 'critical' : 'warning',
              message: lazyText(
                () =>
                  `Responses at the max length: ${level(CLIP, sm, pts)}, above the limit ${pct(c.clipWarn)}, up from ${at(CLIP, cb!)} (${firstPoints(baseN, 'lowest')})${top.step !== last.step ? `; highest ${at(CLIP, top)}` : ''}; latest ${at(CLIP, last)}.`,
              ),
              hint,
              peak: top,
              threshold: Math.max(c.clipWarn, cb!.value + c.clipRise),
              onset: clipEp.onset,
              quotes: [cb!, top, last],
            });
          }
          // Nearly every response at the cap while nothing scores: no learning signal at all, and no wait for a
          // baseline (verl-jsonl HanlinDu: 61 → 512 tokens from step 1 to 2, all at the cap, score 0 at every step).
          const start = clipStart!;
          const capped = cr >= c.clipCritical && cr >= start.value + c.clipRise && score !== undefined && score <= 0;
          if (capped) capEp.hold(1);
          else capEp.end();
          if (capStreak.update(capped) >= clipCad.points(c.capNoRewardPatience)) {
            const last = { step: rec.step, value: cr };
            const top = capEp.extreme!;
            const lenTop = lenAt.get(top.step);
            const lenFrom = lenFirst;
            const zeroFrom = scoreAlwaysZero ? scoreFirst : null;
            const lenText = lazyText(() =>
              lenFrom && lenTop !== undefined && lenFrom.step < top.step
                ? `; ${MEAN} from ${at(MEAN, lenFrom)} to ${at(MEAN, { step: top.step, value: lenTop })}`
                : '',
            );
            const scoreText = lazyText(() =>
              zeroFrom && zeroFrom.step < last.step
                ? `${scoreKey} ${at(scoreKey!, zeroFrom)} and at every logged step through step ${last.step}`
                : `${scoreKey} ${at(scoreKey!, { step: last.step, value: score! })}`,
            );
            out.push({
              metric: CLIP,
              severity: 'critical',
              message: lazyText(
                () =>
                  `Responses ran to the length cap with no reward: the share at the cap went from ${at(CLIP, start)} to ${at(CLIP, top)}${top.step !== last.step ? ` (${at(CLIP, last)})` : ''}${lenText()}, and ${scoreText()}.`,
              ),
              hint,
              peak: top,
              threshold: c.clipCritical,
              onset: capEp.onset,
              quotes: [start, top, last],
            });
          }
        }
        const len = finite(rec, MEAN);
        if (len !== undefined) {
          lenCad.push(rec.step);
          lenEp.push(rec.step, len);
          const recentMed = calm.size >= Math.min(c.jumpWindow, 5) ? calm.median() : NaN;
          const jumped = recentMed > 0 && len > c.jumpFactor * recentMed;
          if (!jumped) {
            calm.push(len);
            lenEp.end();
          } else lenEp.hold(1);
          const n = lenStreak.update(jumped);
          if (n >= lenCad.points(c.patience)) {
            const top = lenEp.extreme!;
            const last = { step: rec.step, value: len };
            // The rise starts at the last calm point before the jump: the window opens there.
            const from = lenEp.before;
            const calmN = calm.size;
            const onset = lenEp.onset;
            const message = lazyText(
              () =>
                `Mean response length ${from ? `rose from ${at(MEAN, from)} to ${at(MEAN, top)}` : `reached ${at(MEAN, top)}`}, ${fmt(top.value / recentMed)}× its recent median ${fmt(recentMed)} tokens (median of the last ${calmN} calm logged steps); above ${fmt(c.jumpFactor)}× that median for ${n} logged steps (${span(onset, last.step)})${top.step !== last.step ? `, latest ${at(MEAN, last)}` : ''}.`,
            );
            out.push({
              metric: MEAN,
              severity: 'warning',
              message,
              hint,
              peak: top,
              threshold: c.jumpFactor * recentMed,
              onset: from ? from.step : onset,
              quotes: from ? [from, top, last] : [top, last],
            });
          }
        }
        return out;
      },
    };
  },
};
