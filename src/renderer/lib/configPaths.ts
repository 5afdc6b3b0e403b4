/** Dotted-path helpers over plain JSON configs (the resolved RunConfig crosses the API as JSON). */

export type Flat = Record<string, string | number | boolean | null>;

/** Flattens nested objects to dotted paths; arrays and other non-plain leaves become JSON strings. */
export function flatten(obj: unknown, prefix = '', out: Flat = {}): Flat {
  if (obj === null || obj === undefined) {
    if (prefix) out[prefix] = null;
    return out;
  }
  if (typeof obj === 'object' && !Array.isArray(obj)) {
    const entries = Object.entries(obj as Record<string, unknown>);
    if (entries.length === 0 && prefix) out[prefix] = '{}';
    for (const [k, v] of entries) flatten(v, prefix ? `${prefix}.${k}` : k, out);
    return out;
  }
  if (typeof obj === 'string' || typeof obj === 'number' || typeof obj === 'boolean') {
    out[prefix] = obj;
    return out;
  }
  out[prefix] = JSON.stringify(obj);
  return out;
}

export function getPath(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

export function formatValue(v: unknown): string {
  if (v === undefined) return '—';
  if (v === null) return 'null';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(6)));
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
}
