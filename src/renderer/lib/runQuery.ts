/**
 * The runs table's fields and search, in one place: what a column shows, what a sort orders by and what a query
 * compares are the same value (`fieldValue`), as in W&B's runs table where a summary metric or a config key is a
 * column, a sort and a filter alike.
 *
 * The search is a query, as W&B's runs filter reads one: `preset = sampo and val/success_rate > 0.4`. Clauses
 * joined by `and`; a clause is FIELD OP VALUE with OP one of = != > >= < <= ~ (contains), or a bare word searched
 * for in the name, id, env, preset, status, tags and notes. FIELD is
 *   - a run field: name, id, env, preset, status, seed, step, tag, kind, notes (the run page's Notes, runs.note);
 *   - a headline number the runs carry (RunSummary.summary: the last `val/score_mean`, `best/val/success_rate`, …);
 *   - a config key by its dotted path (RunSummary.configValues: `optim.lr`, `algorithm.policyLoss.mode`), also written
 *     `config.optim.lr`.
 * A run without the value never matches a comparison on it (only `!=`). Pure, unit-tested.
 */
import type { RunSummary } from '../../shared/api';

export type QueryOp = '=' | '!=' | '>' | '>=' | '<' | '<=' | '~';

export interface Clause {
  readonly field: string | null;
  readonly op: QueryOp | null;
  readonly value: string;
}

export type ParsedQuery = { readonly clauses: readonly Clause[] } | { readonly error: string };

export const RUN_FIELDS = ['name', 'id', 'env', 'preset', 'status', 'seed', 'step', 'tag', 'kind', 'notes'] as const;
const CLAUSE = /^([A-Za-z0-9_./@()-]+)\s*(!=|>=|<=|=|>|<|~)\s*(.*)$/;
/** How a config key is written explicitly in a query or a column key (`config.optim.lr`, `config:optim.lr`). */
const CONFIG_PREFIX = 'config.';

/** Whether the search is a query (has an operator) rather than plain words. */
export function isQuery(text: string): boolean {
  return /(!=|>=|<=|=|>|<|~)/.test(text);
}

export function parseQuery(text: string): ParsedQuery {
  const clauses: Clause[] = [];
  for (const raw of text.split(/\s+and\s+/i)) {
    const part = raw.trim();
    if (part === '') continue;
    const m = CLAUSE.exec(part);
    if (!m) {
      if (isQuery(part))
        return { error: `cannot read “${part}”: write FIELD OP VALUE, e.g. val/success_rate > 0.4 (OP: = != > >= < <= ~)` };
      for (const w of part.split(/\s+/)) clauses.push({ field: null, op: null, value: w });
      continue;
    }
    const value = m[3].trim().replace(/^["']|["']$/g, '');
    if (value === '') return { error: `“${part}” has no value after ${m[2]}` };
    if (['>', '>=', '<', '<='].includes(m[2]) && !Number.isFinite(Number(value)))
      return { error: `“${part}”: ${m[2]} compares numbers, and “${value}” is not one` };
    clauses.push({ field: m[1], op: m[2] as QueryOp, value });
  }
  return { clauses };
}

export type FieldValue = string | number | boolean | readonly string[] | null;

/** A headline number of the run, or null when it has none (finite only: the store folds finite values). */
export function summaryValue(r: RunSummary, key: string): number | null {
  const v = r.summary[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** A config value of the run by dotted path (`optim.lr`), or null when its config has no such key. */
export function configValue(r: RunSummary, path: string): string | number | boolean | null {
  const vals = r.configValues;
  if (!vals) return null;
  if (Object.hasOwn(vals, path)) return vals[path];
  return path.startsWith(CONFIG_PREFIX) && Object.hasOwn(vals, path.slice(CONFIG_PREFIX.length))
    ? vals[path.slice(CONFIG_PREFIX.length)]
    : null;
}

/**
 * The value of `field` for a run: a run field, else a headline number, else a config key. A key that is both a
 * headline number and a config path (none in the lab's own names: metrics have `/`, config paths `.`) reads the
 * headline number; `config.<path>` always reads the config.
 */
export function fieldValue(r: RunSummary, field: string): FieldValue {
  switch (field) {
    case 'name':
      return r.name;
    case 'id':
      return r.id;
    case 'env':
      return r.env;
    case 'preset':
      return r.preset;
    case 'status':
      return r.status;
    case 'seed':
      return r.seedKnown === false ? null : r.seed;
    case 'step':
      return r.step;
    case 'tag':
      return r.tags;
    case 'kind':
      return r.kind ?? 'lab';
    case 'notes':
      return r.notes ?? null;
  }
  if (!field.startsWith(CONFIG_PREFIX)) {
    const v = summaryValue(r, field);
    if (v !== null || Object.hasOwn(r.summary, field)) return v;
  }
  return configValue(r, field);
}

function test(v: string | number | boolean, op: QueryOp, want: string): boolean {
  if (op === '~') return String(v).toLowerCase().includes(want.toLowerCase());
  const n = Number(want);
  if (typeof v === 'number' && Number.isFinite(n)) {
    switch (op) {
      case '=':
        return v === n;
      case '!=':
        return v !== n;
      case '>':
        return v > n;
      case '>=':
        return v >= n;
      case '<':
        return v < n;
      case '<=':
        return v <= n;
    }
  }
  const eq = String(v).toLowerCase() === want.toLowerCase();
  return op === '=' ? eq : op === '!=' ? !eq : false;
}

/** Whether every word is in the run's name, id, env, preset, status, tags or notes (case-insensitive). */
export function matchesWords(r: RunSummary, words: readonly string[]): boolean {
  if (words.length === 0) return true;
  const hay = [r.name, r.id, r.env, r.preset, r.status, ...r.tags, r.notes ?? ''].join(' ').toLowerCase();
  return words.every((w) => hay.includes(w.toLowerCase()));
}

export function matchesQuery(r: RunSummary, clauses: readonly Clause[]): boolean {
  return clauses.every((c) => {
    if (c.field === null || c.op === null) return matchesWords(r, [c.value]);
    const v = fieldValue(r, c.field);
    if (v === null) return c.op === '!=';
    if (Array.isArray(v)) return c.op === '!=' ? !v.some((t) => test(t, '=', c.value)) : v.some((t) => test(t, c.op!, c.value));
    return test(v as string | number | boolean, c.op, c.value);
  });
}

/** Headline-number keys any of the runs carries, sorted. */
export function summaryKeys(runs: readonly RunSummary[]): string[] {
  const keys = new Set<string>();
  for (const r of runs) for (const k of Object.keys(r.summary)) keys.add(k);
  return [...keys].sort();
}

/**
 * Config paths any of the runs has, those whose value differs between the runs first (what tells runs apart,
 * as Compare's group-by lists them), each part sorted.
 */
export function configKeys(runs: readonly RunSummary[]): string[] {
  const first = new Map<string, string>();
  const differs = new Set<string>();
  for (const r of runs) {
    for (const [k, v] of Object.entries(r.configValues ?? {})) {
      const s = JSON.stringify(v);
      const seen = first.get(k);
      if (seen === undefined) first.set(k, s);
      else if (seen !== s) differs.add(k);
    }
  }
  // A key some runs lack differs too (runs without any config, e.g. a log that printed none, are left out).
  const withConfig = runs.filter((r) => r.configValues && Object.keys(r.configValues).length > 0);
  for (const k of first.keys()) if (!differs.has(k) && withConfig.some((r) => !Object.hasOwn(r.configValues!, k))) differs.add(k);
  const all = [...first.keys()].sort();
  return [...all.filter((k) => differs.has(k)), ...all.filter((k) => !differs.has(k))];
}

/** Fields a query can name in these runs: the run fields, every headline number, then every config key. */
export function queryFields(runs: readonly RunSummary[]): string[] {
  return [...RUN_FIELDS, ...summaryKeys(runs), ...configKeys(runs)];
}
