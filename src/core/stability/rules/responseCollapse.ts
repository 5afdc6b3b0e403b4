/**
 * response_collapse: responses collapsing onto one repeated token or one template. Real reports:
 * RAGEN #52 (Sokoban PPO responses turned into "!!!!!!!" after some steps), verl #2626 (GRPO on Llama-3.1-8B /
 * Qwen2.5-7B: late in training grad-norm NaN, reward 0, outputs only "!!!!"), and RAGEN-2's template collapse
 * (responses that stay diverse by entropy but no longer depend on their input).
 *
 * Reads the response-diversity keys (src/core/training/diversity.ts computes them from token ids, the trainer logs them; src/shared/metrics.ts defines
 * them). No public log carries them: the rule judges what a run logs, and is not applicable otherwise.
 * - `response/identical_share` at or above identicalWarn and up identicalRise from its start (the lowest share
 *   of its first baselineSteps points): warning; at identicalCritical, critical.
 * - `response/distinct_2` at or below distinctFrac × its start (median of its first points): warning; at
 *   distinctCriticalFrac ×, critical — one token repeated.
 * - `response/prompt_mi` at or below miFrac × its start, from a start of at least miMinStart nats: warning — the
 *   template no longer depends on the prompt.
 * Each judged on its mean over `smooth` steps, for `patience` steps.
 */
import { Baseline, Cadence, Episode, Streak, Window, fmt, median, pct } from '../stats';
import { at, firstPoints, level, lazyText } from '../quote';
import { finite, type Finding, type RuleDef, type Severity } from '../types';

const IDENTICAL = 'response/identical_share';
const DISTINCT = 'response/distinct_2';
const MI = 'response/prompt_mi';

export const responseCollapseRule: RuleDef = {
  id: 'response_collapse',
  title: 'Responses collapsing onto one answer or template',
  description:
    'Most responses become the same answer, one repeated token, or a template that no longer depends on the prompt: the policy stopped responding to its input.',
  metrics: [IDENTICAL, DISTINCT, MI],
  needs: { anyOf: [IDENTICAL, DISTINCT, MI] },
  enabled: (c) => c.responseCollapse.enabled,
  create(cfg, hints) {
    const c = cfg.responseCollapse;
    const track = (key: string, dir: 'up' | 'down', summary: (xs: readonly number[]) => number) => ({
      key,
      dir,
      cad: new Cadence(),
      base: new Baseline(c.baselineSteps, summary),
      win: new Window(c.smooth),
      streak: new Streak(),
      ep: new Episode(dir),
    });
    const tracks = [track(IDENTICAL, 'up', (xs) => Math.min(...xs)), track(DISTINCT, 'down', median), track(MI, 'down', median)];
    return {
      feed(rec) {
        const out: Finding[] = [];
        for (const t of tracks) {
          const v = finite(rec, t.key);
          if (v === undefined) continue;
          t.cad.push(rec.step);
          t.base.resize(t.cad.points(c.baselineSteps));
          t.win.resize(t.cad.points(c.smooth));
          t.base.push(v);
          t.win.push(v, rec.step);
          t.ep.push(rec.step, v);
          const b = t.base.get();
          if (b === null || !t.win.full) continue;
          const sm = t.win.mean();
          let limit: number;
          let severity: Severity;
          if (t.key === IDENTICAL) {
            limit = Math.max(c.identicalWarn, b + c.identicalRise);
            severity = sm >= c.identicalCritical ? 'critical' : 'warning';
          } else if (t.key === DISTINCT) {
            limit = c.distinctFrac * b;
            severity = sm <= c.distinctCriticalFrac * b ? 'critical' : 'warning';
          } else {
            limit = b >= c.miMinStart ? c.miFrac * b : -Infinity;
            severity = 'warning';
          }
          const bad = t.dir === 'up' ? sm >= limit : sm <= limit;
          if (bad) t.ep.hold(t.win.size, (x) => (t.dir === 'up' ? x >= limit : x <= limit));
          else t.ep.end();
          if (t.streak.update(bad) < t.cad.points(c.patience)) continue;
          const worst = t.ep.extreme!;
          const last = { step: rec.step, value: v };
          const { key, dir } = t;
          const pts = t.win.points();
          const baseN = t.base.n;
          const lim = limit;
          const message = lazyText((): string => {
            const mean = level(key, sm, pts);
            const tail = `${worst.step !== last.step ? `; ${dir === 'up' ? 'highest' : 'lowest'} ${at(key, worst)}` : ''}; latest ${at(key, last)}`;
            return key === IDENTICAL
              ? `Responses are collapsing onto one answer: identical responses ${mean}, at or above the limit ${pct(lim)}, up from its start ${pct(b)} (${firstPoints(baseN, 'lowest')})${tail}.`
              : key === DISTINCT
                ? `Responses are collapsing onto repeated tokens: distinct bigrams ${mean}, at or below ${fmt(c.distinctFrac)}× its start ${pct(b)} (${firstPoints(baseN)})${tail}.`
                : `Responses no longer depend on their prompt (template collapse): prompt–response mutual information ${mean}, at or below ${fmt(c.miFrac)}× its start ${fmt(b)} nats (${firstPoints(baseN)})${tail}.`;
          });
          out.push({
            metric: t.key,
            severity,
            message,
            hint: hints.responseCollapse,
            peak: worst,
            threshold: limit,
            onset: t.ep.onset,
            quotes: [worst, last],
          });
        }
        return out;
      },
    };
  },
};
