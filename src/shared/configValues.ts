/**
 * A run config's values by dotted path (`training.lr`, `algorithm.loss`, `rollout.groupSize`), as the runs table
 * reads them for config columns and queries (RunSummary.configValues) — W&B's runs table offers every config key
 * beside the summary metrics. Built by the store from the record it already holds, so the table never loads a
 * whole run for it.
 */

export type ConfigValue = string | number | boolean | null;

/** Most paths kept per run (a lab RunConfig has ≈ 90; an imported verl config can have hundreds). */
export const MAX_CONFIG_VALUES = 400;
/** Longest string value kept (a prompt template or a path is cut here: a column shows a value, not a document). */
export const MAX_CONFIG_STRING = 200;

/**
 * Nested objects become dotted paths; arrays become their JSON text (cut at MAX_CONFIG_STRING); null stays null.
 * Paths are visited in the config's own order and stop at MAX_CONFIG_VALUES. `whole`: every path and every string
 * whole, for telling configs apart (`arlarena show RUN RUN…`): cut, two verl configs that differ past their 400th
 * path, or two prompt templates past their 200th character, read as equal.
 */
export function configValues(config: unknown, opts: { whole?: boolean } = {}): Record<string, ConfigValue> {
  const out: Record<string, ConfigValue> = {};
  let n = 0;
  const limit = opts.whole ? Infinity : MAX_CONFIG_VALUES;
  const cut = (s: string): string => (s.length > MAX_CONFIG_STRING && !opts.whole ? `${s.slice(0, MAX_CONFIG_STRING - 1)}…` : s);
  const walk = (v: unknown, path: string): void => {
    if (n >= limit) return;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      for (const [k, child] of Object.entries(v as Record<string, unknown>)) walk(child, path ? `${path}.${k}` : k);
      return;
    }
    if (!path) return;
    n++;
    if (v === null || v === undefined) out[path] = null;
    else if (typeof v === 'number') out[path] = Number.isFinite(v) ? v : String(v);
    else if (typeof v === 'boolean') out[path] = v;
    else if (typeof v === 'string') out[path] = cut(v);
    else out[path] = cut(JSON.stringify(v) ?? String(v));
  };
  walk(config, '');
  return out;
}
