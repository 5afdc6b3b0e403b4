/**
 * How alert messages quote numbers (issue 33 item 4: an alert's numbers are the logged numbers at the steps it
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
