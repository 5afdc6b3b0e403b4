/**
 * format_hacking: KL to the reference rising while the reward's gain is format only (open-r1
 * #587: GRPO reward hacking with a KL spike). The policy pays its distance from the reference model for the
 * format bonus, not the task: the format reward rises, the task reward (accuracy, score, success) does not, and
 * the KL to the reference climbs far above its start.
 *
 * Needs the format share (`episode/valid_format_ratio`: the lab's, or TRL's `rewards/format_reward` mapped onto
 * it), KL to the reference (`actor/kl_loss`: verl's kl_loss, TRL's kl) and a task share (`episode/success_rate`:
 * TRL's accuracy reward, or `episode/score_mean`). Each is smoothed over `smooth` steps against the median of its
 * first baselineSteps points; it fires, a warning, when for `patience` steps the format gained formatGain or more,
 * the task gained taskGainMax or less, and the KL is at or above max(klFloor, klFactor × its start).
 */
import { Baseline, Cadence, Episode, Streak, Window, fmt, pct } from '../stats';
import { at, level, lazyText } from '../quote';
import { finite, type RuleDef } from '../types';

const FORMAT = 'episode/valid_format_ratio';
const KL = 'actor/kl_loss';
const TASKS = ['episode/success_rate', 'episode/score_mean'] as const;

export const formatHackingRule: RuleDef = {
  id: 'format_hacking',
  title: 'Format-only reward gain with KL rising',
  description:
    'The format reward rises while the task reward does not, and KL to the reference model climbs: the policy drifts for the format bonus alone (reward hacking).',
  metrics: [FORMAT, KL, ...TASKS],
  needs: { allOf: [FORMAT, KL], anyOf: [...TASKS] },
  enabled: (c) => c.formatHacking.enabled,
  create(cfg, hints) {
    const c = cfg.formatHacking;
    const track = (key: string) => ({ key, cad: new Cadence(), base: new Baseline(c.baselineSteps), win: new Window(c.smooth) });
    const fmtT = track(FORMAT);
    const klT = track(KL);
    const taskT = TASKS.map(track);
    const streak = new Streak();
    const klEp = new Episode('up');
    const feedTrack = (t: ReturnType<typeof track>, step: number, v: number) => {
      t.cad.push(step);
      t.base.resize(t.cad.points(c.baselineSteps));
      t.win.resize(t.cad.points(c.smooth));
      t.base.push(v);
      t.win.push(v, step);
    };
    return {
      feed(rec) {
        for (const t of [fmtT, klT, ...taskT]) {
          const v = finite(rec, t.key);
          if (v !== undefined) feedTrack(t, rec.step, v);
        }
        const k = finite(rec, KL);
        if (k === undefined) return [];
        klEp.push(rec.step, k);
        // The task share the run logs (success before score, as success_collapse judges them).
        const task = taskT.find((t) => t.base.get() !== null && t.win.full);
        const fb = fmtT.base.get();
        const kb = klT.base.get();
        if (!task || fb === null || kb === null || !fmtT.win.full || !klT.win.full) {
          streak.update(false);
          return [];
        }
        const fm = fmtT.win.mean();
        const km = klT.win.mean();
        const tm = task.win.mean();
        const tb = task.base.get()!;
        const limit = Math.max(c.klFloor, c.klFactor * kb);
        const hacking = fm - fb >= c.formatGain && tm - tb <= c.taskGainMax && km >= limit;
        if (hacking) klEp.hold(klT.win.size, (x) => x >= limit);
        else klEp.end();
        if (streak.update(hacking) < klT.cad.points(c.patience)) return [];
        const top = klEp.extreme!;
        const last = { step: rec.step, value: k };
        const klPts = klT.win.points();
        const fmtPts = fmtT.win.points();
        const taskPts = task.win.points();
        const taskKey = task.key;
        return [
          {
            metric: KL,
            severity: 'warning',
            message: lazyText(
              () =>
                `KL to the reference ${level(KL, km, klPts)}, above the limit ${fmt(limit)} (start median ${fmt(kb)}), while the gain is format only: ${FORMAT} ${level(FORMAT, fm, fmtPts)} against its start ${pct(fb)}, ${taskKey} ${level(taskKey, tm, taskPts)} against its start ${pct(tb)}; ${KL} ${top.step !== last.step ? `highest ${at(KL, top)}, ` : ''}latest ${at(KL, last)}.`,
            ),
            hint: hints.formatHacking,
            peak: top,
            threshold: limit,
            onset: klEp.onset,
            quotes: [top, last],
          },
        ];
      },
    };
  },
};
