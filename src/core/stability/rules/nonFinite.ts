/** non_finite: a metric that was finite turns NaN, any ±Infinity, or updates skipped for a non-finite gradient or result. */
import { metricDef } from '../../../shared/metrics';
import { reportableNonFinite } from '../nonFinite';
import { finite, type Finding, type RuleDef } from '../types';

const CRITICAL_PREFIXES = ['actor/', 'critic/'];

export const nonFiniteRule: RuleDef = {
  id: 'non_finite',
  title: 'Non-finite values',
  description: 'A loss, gradient or statistic became NaN or infinite: the update is numerically broken from here on.',
  metrics: ['*'],
  needs: { anyOf: ['*'] },
  enabled: (c) => c.nonFinite.enabled,
  create(cfg, hints) {
    const seen = new Set<string>();
    const ignore = new Set(cfg.nonFinite.ignoreGroups);
    return {
      feed(rec) {
        const out: Finding[] = [];
        for (const key in rec.values) {
          const v = rec.values[key];
          // Fast path: an imported verl step carries ~140 keys, nearly all finite.
          if (Number.isFinite(v)) {
            seen.add(key);
            continue;
          }
          const group = metricDef(key)?.group;
          if (group && ignore.has(group)) continue;
          const kind = reportableNonFinite(key, v, seen.has(key));
          if (kind === null) continue;
          out.push({
            metric: key,
            severity: CRITICAL_PREFIXES.some((p) => key.startsWith(p)) ? 'critical' : 'warning',
            message: `${metricDef(key)?.label ?? key} became ${kind} at step ${rec.step}.`,
            hint: hints.nonFinite,
          });
        }
        const skipped = finite(rec, 'actor/skipped_updates');
        if (skipped !== undefined && skipped > 0) {
          out.push({
            metric: 'actor/skipped_updates',
            severity: 'warning',
            message: `${skipped} mini-batch update(s) were skipped at step ${rec.step} because the gradient or the update's result was non-finite.`,
            hint: hints.skipped,
          });
        }
        return out;
      },
    };
  },
};
