/**
 * Checks an alert's message against the logged data: every number in it is either a logged
 * value at the step it names, or a derived number with its label (src/core/stability/quote.ts states the two
 * forms). Returns the problems found, empty when the message is honest.
 *
 * - `<value>[ %][ (k/n)][ nats|tokens] at step N` is a logged value of the metric key named last before it in
 *   the same clause (clauses end at ';' and ':'), else of the alert's own metric. It must match what the run
 *   logged there (to the three significant digits quoted, or the whole percent), be in percent exactly when the
 *   metric is a share, and, for the alert's own metric, be in the alert's evidence at that step.
 * - Derived numbers follow a label (mean, median, baseline, limit, start, share, fall, gain, z =, above, below),
 *   are ratios (`2.4×`), counts (`3 logged steps`, `11 metrics`, `76 percentage points`, `19/64`) or step
 *   numbers (`step 7`, `steps 5–7`).
 */
import type { Alert } from '../../src/shared/api';
import { metricDef, type MetricRecord } from '../../src/shared/metrics';

const NUM = String.raw`-?\d+(?:\.\d+)?(?:e[-+]?\d+)?`;
const KEY = /[A-Za-z_][\w.@()-]*(?:\/[\w.@()-]+)+/g;

function isShareKey(key: string): boolean {
  const d = metricDef(key);
  return d ? d.unit === 'ratio' : /(clip_?ratio|clipfrac|_ratio|_share|success_rate)$/.test(key);
}

/** The key named last before `index` in the same clause, or null. */
function keyBefore(message: string, index: number): string | null {
  const clauseStart = Math.max(message.lastIndexOf(';', index), message.lastIndexOf(':', index)) + 1;
  let found: string | null = null;
  for (const m of message.slice(clauseStart, index).matchAll(KEY)) found = m[0];
  return found;
}

export function checkAlertMessage(alert: Alert, records: readonly MetricRecord[]): string[] {
  const msg = alert.message;
  const problems: string[] = [];
  const byStep = new Map(records.map((r) => [r.step, r]));
  const covered = new Array<boolean>(msg.length).fill(false);
  const cover = (from: number, to: number) => {
    for (let i = from; i < to; i++) covered[i] = true;
  };
  // Metric keys are names, not numbers (rollout_corr/k3_kl, val-core/…/mean@1, actor/lr(1e-4)).
  for (const m of msg.matchAll(KEY)) cover(m.index!, m.index! + m[0].length);

  for (const m of msg.matchAll(new RegExp(`(${NUM})( %)?(?: \\((\\d+)/(\\d+)\\))?(?: (?:nats|tokens))? at step (\\d+)`, 'g'))) {
    cover(m.index!, m.index! + m[0].length);
    const key = keyBefore(msg, m.index!) ?? alert.metric;
    const quoted = Number(m[1]);
    const percent = m[2] !== undefined;
    const step = Number(m[5]);
    const logged = byStep.get(step)?.values[key];
    const where = `"${m[0]}" (${key})`;
    if (logged === undefined || !Number.isFinite(logged)) {
      problems.push(`${where}: no finite ${key} was logged at step ${step}`);
      continue;
    }
    if (percent !== isShareKey(key))
      problems.push(`${where}: ${key} is ${isShareKey(key) ? 'a share, quoted without %' : 'not a share, quoted in %'}`);
    const ok = percent
      ? Math.abs(logged * 100 - quoted) <= Math.max(0.5, 0.006 * Math.abs(quoted)) + 1e-9
      : Math.abs(logged - quoted) <= 0.006 * Math.abs(logged) + 1e-12;
    if (!ok) problems.push(`${where}: the log has ${logged} at step ${step}`);
    if (key === alert.metric) {
      const i = alert.evidence.steps.indexOf(step);
      if (i < 0)
        problems.push(`${where}: step ${step} is not in the alert's evidence (${alert.evidence.steps[0]}…${alert.evidence.steps.at(-1)})`);
      else if (alert.evidence.values[i] === null || Math.abs(alert.evidence.values[i]! - logged) > 1e-9 * Math.max(1, Math.abs(logged)))
        problems.push(`${where}: the evidence has ${alert.evidence.values[i]} at step ${step}`);
    }
  }
  for (const m of msg.matchAll(/\b(?:step|steps|through step) (\d+)(?:–(\d+))?/g)) cover(m.index!, m.index! + m[0].length);
  for (const m of msg.matchAll(new RegExp(`${NUM}×`, 'g'))) cover(m.index!, m.index! + m[0].length);
  for (const m of msg.matchAll(/\b\d+\/\d+\b/g)) cover(m.index!, m.index! + m[0].length);
  for (const m of msg.matchAll(/\b\d+ (?:(?:logged|calm|more) )*(?:steps|points|validations|keys|metrics|episodes|percentage points)\b/g))
    cover(m.index!, m.index! + m[0].length);
  for (const m of msg.matchAll(
    new RegExp(`(?:\\b(?:mean|median|baseline|limit|start|share|fall|gain|above|below)|z =) (${NUM})(?![\\d.×])( %)?`, 'g'),
  )) {
    cover(m.index!, m.index! + m[0].length);
    const key = keyBefore(msg, m.index!) ?? alert.metric;
    if (m[0].startsWith('z =')) continue;
    const percent = m[2] !== undefined;
    if (percent !== isShareKey(key))
      problems.push(`"${m[0]}" (${key}): ${isShareKey(key) ? 'a share, given without %' : 'not a share, given in %'}`);
  }
  for (const m of msg.matchAll(new RegExp(`(?<![\\w.])${NUM}(?![\\w.]*\\d)`, 'g'))) {
    const mid = m.index!;
    if (!covered.slice(mid, mid + m[0].length).every(Boolean))
      problems.push(`"${m[0]}" at ${mid} is neither a logged value at a named step nor a labelled derived number`);
  }
  return problems.map((p) => `${alert.rule} ${alert.metric} @${alert.firstStep}-${alert.lastStep}: ${p} — in: ${msg}`);
}
