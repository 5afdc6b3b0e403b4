/**
 * non_finite: a metric that was finite turns NaN, any ±Infinity, or updates skipped for a non-finite gradient or
 * result.
 *
 * Keys that break together for one cause are one alert (a broken verl run turned 11
 * `rollout_corr/*` keys null at one step, and 11 identical warnings buried the two that mattered): the keys of
 * one namespace (`rollout_corr/`, `actor/`) that became the same kind of non-finite at the same step, at the same
 * severity, make one finding on the first of them, its message listing them all. A key that stays non-finite
 * keeps its alert open, and the message keeps naming the step it broke at, with the last finite value before it.
 */
import { metricDef } from '../../../shared/metrics';
import { reportableNonFinite, type NonFiniteKind } from '../nonFinite';
import { at, lazyText } from '../quote';
import { finite, type Finding, type RuleDef, type Severity } from '../types';

const CRITICAL_PREFIXES = ['actor/', 'critic/'];
interface Broken {
  kind: NonFiniteKind;
  /** The kind it broke as, where it changed since without a finite value between (NaN, then ±Infinity). */
  firstKind?: NonFiniteKind;
  /** The step it became non-finite (this stretch). */
  since: number;
  /** Its last finite value before that. */
  lastFinite: { step: number; value: number } | null;
}

const namespace = (key: string): string => {
  const i = key.indexOf('/');
  return i < 0 ? '' : key.slice(0, i + 1);
};

export const nonFiniteRule: RuleDef = {
  id: 'non_finite',
  title: 'Non-finite values',
  description: 'A loss, gradient or statistic became NaN or infinite: the update is numerically broken from here on.',
  metrics: ['*'],
  needs: { anyOf: ['*'] },
  enabled: (c) => c.nonFinite.enabled,
  create(cfg, hints) {
    // Each key's last finite point, updated in place (a point handed out — a Broken's, a quote — is a copy).
    const lastFinite = new Map<string, { step: number; value: number }>();
    const broken = new Map<string, Broken>();
    const ignore = new Set(cfg.nonFinite.ignoreGroups);
    // The last record's keys by position and their points: consecutive records carry the same keys in the same
    // order, so the map is only asked when a position's key changes.
    const posKeys: string[] = [];
    const posPoints: Array<{ step: number; value: number } | undefined> = [];
    return {
      feed(rec) {
        const out: Finding[] = [];
        // Made when a key first breaks in this record (most records have none).
        let groups: Map<string, { keys: string[]; b: Broken; severity: Severity }> | null = null;
        let i = -1;
        for (const key in rec.values) {
          i++;
          if (posKeys[i] !== key) {
            posKeys[i] = key;
            posPoints[i] = lastFinite.get(key);
          }
          const v = rec.values[key];
          // Fast path: an imported verl step carries ~140 keys, nearly all finite.
          if (Number.isFinite(v)) {
            const p = posPoints[i];
            if (p !== undefined) {
              p.step = rec.step;
              p.value = v;
            } else {
              const q = { step: rec.step, value: v };
              lastFinite.set(key, q);
              posPoints[i] = q;
            }
            if (broken.size > 0) broken.delete(key);
            continue;
          }
          const group = metricDef(key)?.group;
          if (group && ignore.has(group)) continue;
          const kind = reportableNonFinite(key, v, lastFinite.has(key));
          if (kind === null) continue;
          let b = broken.get(key);
          if (!b) {
            const lf = lastFinite.get(key);
            broken.set(key, (b = { kind, since: rec.step, lastFinite: lf ? { step: lf.step, value: lf.value } : null }));
          } else if (b.kind !== kind) {
            // Another kind with no finite value between (NaN, then Infinity): the same stretch, still dated from
            // the step it broke, where the alert's window starts (its text once named only the latest change).
            broken.set(key, (b = { kind, firstKind: b.firstKind ?? b.kind, since: b.since, lastFinite: b.lastFinite }));
          }
          const severity: Severity = CRITICAL_PREFIXES.some((p) => key.startsWith(p)) ? 'critical' : 'warning';
          const id = `${namespace(key)}|${b.firstKind ?? ''}|${kind}|${b.since}|${severity}`;
          groups ??= new Map();
          const g = groups.get(id);
          if (g) g.keys.push(key);
          else groups.set(id, { keys: [key], b, severity });
        }
        for (const { keys, b, severity } of groups?.values() ?? []) {
          const first = keys[0];
          const step = rec.step;
          // `b` is replaced, never changed, when a key breaks anew: the text can be built from it later.
          const message = lazyText((): string => {
            const broke = b.firstKind ?? b.kind;
            const still =
              b.since < step ? `, and ${keys.length === 1 ? 'is' : 'are'} ${b.firstKind ? '' : 'still '}${b.kind} at step ${step}` : '';
            if (keys.length === 1) {
              const was = b.lastFinite ? `; it was ${at(first, b.lastFinite)}` : '';
              return `${metricDef(first)?.label ?? first} became ${broke} at step ${b.since}${was}${still}.`;
            }
            return `${keys.length} metrics under ${namespace(first) || 'no namespace'} became ${broke} at step ${b.since}${still}: ${keys.join(', ')}.`;
          });
          out.push({
            metric: first,
            severity,
            message,
            hint: hints.nonFinite,
            onset: b.since,
            quotes: keys.length === 1 && b.lastFinite ? [b.lastFinite] : [],
          });
        }
        const skipped = finite(rec, 'actor/skipped_updates');
        if (skipped !== undefined && skipped > 0) {
          const step = rec.step;
          out.push({
            metric: 'actor/skipped_updates',
            severity: 'warning',
            message: lazyText(
              () =>
                `Skipped updates ${at('actor/skipped_updates', { step, value: skipped })}: mini-batch updates were skipped because the gradient or the update's result was non-finite.`,
            ),
            hint: hints.skipped,
          });
        }
        return out;
      },
    };
  },
};
