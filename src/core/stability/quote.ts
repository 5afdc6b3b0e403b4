/**
 * How alert messages quote numbers (an alert's numbers are the logged numbers at the steps it
 * names). Two kinds only, so a reader (and tests/detector.messages.test.ts) can tell them apart:
 *
 * - a logged value: `<value>[ unit] at step <N>`, optionally after the metric key it belongs to (`actor/grad_norm
 *   0.001 at step 30`; without a key it is the alert's own metric) — exactly what the log holds at step N;
 * - a derived number, always after its label: `mean 0.65 over steps 5–7`, `median 2.1`, `baseline 52 %`,
 *   `limit 0.05`, `3.1×`, counts (`3 logged steps`).
 *
 * A share (unit 'ratio' in the catalog, or a key named like one) is quoted in percent everywhere in a message,
 * its limits and baselines too; every other value in the metric's own unit.
 */
import { metricDef } from '../../shared/metrics';
import { fmt, pct, type Pt } from './stats';

const SHARE_NAME = /(clip_?ratio|clipfrac|_ratio|_share|success_rate)$/;

/** True when `key`'s values are shares of 1 (quoted in %). */
export function isShare(key: string): boolean {
  const d = metricDef(key);
  return d ? d.unit === 'ratio' : SHARE_NAME.test(key);
}

const UNIT_WORD: Readonly<Record<string, string>> = { nats: ' nats', tokens: ' tokens' };

/** `v` as the metric's value: "25 %", "0.18 nats", "370 tokens", "66". */
export function val(key: string, v: number): string {
  if (isShare(key)) return pct(v);
  return `${fmt(v)}${UNIT_WORD[metricDef(key)?.unit ?? ''] ?? ''}`;
}

/** A logged point of `key`: "0.18 nats at step 7". */
export function at(key: string, p: Pt): string {
  return `${val(key, p.value)} at step ${p.step}`;
}

/**
 * A smoothed level of `key`: "mean 25 % over steps 8–10", or, when the window holds a single logged point (a run
 * logging every 10 steps), that logged value itself: "25 % at step 30". `unit` replaces the metric's unit word
 * after a mean ("nats per token").
 */
export function level(key: string, mean: number, pts: readonly Pt[], unit?: string): string {
  if (pts.length === 1) return at(key, pts[0]);
  const v = unit === undefined ? val(key, mean) : `${fmt(mean)} ${unit}`;
  return `mean ${v} over ${pts.length ? (pts[0].step === pts[pts.length - 1].step ? `step ${pts[0].step}` : `steps ${pts[0].step}–${pts[pts.length - 1].step}`) : 'no steps'}`;
}

/** Where a start comes from: "its first logged step", or "the median of its first 5 logged steps". */
export function firstPoints(n: number, summary: 'median' | 'lowest' = 'median'): string {
  return n === 1 ? 'its first logged step' : `the ${summary} of its first ${n} logged steps`;
}

/**
 * A logged value is quoted once: a "latest", "highest" or "lowest" clause naming the same value at the same step
 * as an earlier part of the message (a window of one point on a run logged every 10 steps) is left out.
 */
export function quoteOnce(message: string): string {
  // Fast path (an alert's message is rewritten at every step of its episode): a repeat needs two quotes at the
  // same step, so look at the step numbers first.
  const steps: number[] = [];
  let repeat = false;
  for (let k = message.indexOf(' at step '); k >= 0 && !repeat; k = message.indexOf(' at step ', k + 9)) {
    const n = parseInt(message.slice(k + 9, k + 24), 10);
    repeat = steps.includes(n);
    steps.push(n);
  }
  if (!repeat) return message;
  return message.replace(
    /([;,] )(?:latest|highest|lowest) (-?[\d.]+(?:e[-+]?\d+)?(?: %| nats| tokens)? at step \d+)(?=[;,.)]|$)/g,
    (m: string, _sep: string, q: string, at: number) => {
      const first = message.indexOf(q);
      return first >= 0 && first < at ? '' : m;
    },
  );
}

/**
 * A finding's message (or a part of it) to build later, when the alert's text is read (types.ts). Taking the
 * function as an argument keeps it nameless: the CLI runs the sources through tsx, whose keepNames gives every
 * named function a `name` property as it is made (one defineProperty per closure, at every step that fires).
 */
export function lazyText(build: () => string): () => string {
  return build;
}
