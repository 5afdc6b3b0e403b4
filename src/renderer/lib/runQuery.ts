/**
 * The runs table's search as a query, as W&B's runs filter reads one: `preset = sampo and val/success_rate > 0.4`.
 * Clauses joined by `and`; a clause is FIELD OP VALUE with OP one of = != > >= < <= ~ (contains), or a bare word
 * searched for in the name, id, env, preset, status and tags as before. FIELD is a run field (name, id, env,
 * preset, status, seed, step, tag, kind) or any headline number the runs carry (RunSummary.summary: the last
 * `val/score_mean`, `best/val/success_rate`, …; a run without that number never matches a comparison on it).
 * Pure, unit-tested.
 */
import type { RunSummary } from '../../shared/api';

export type QueryOp = '=' | '!=' | '>' | '>=' | '<' | '<=' | '~';

export interface Clause {
  readonly field: string | null;
  readonly op: QueryOp | null;
  readonly value: string;
}

export type ParsedQuery = { readonly clauses: readonly Clause[] } | { readonly error: string };

const RUN_FIELDS = ['name', 'id', 'env', 'preset', 'status', 'seed', 'step', 'tag', 'kind'] as const;
const CLAUSE = /^([A-Za-z0-9_./@()-]+)\s*(!=|>=|<=|=|>|<|~)\s*(.*)$/;

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

function fieldValue(r: RunSummary, field: string): string | number | readonly string[] | null {
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
    default: {
      const v = r.summary[field];
      return typeof v === 'number' && Number.isFinite(v) ? v : null;
    }
  }
}

function test(v: string | number, op: QueryOp, want: string): boolean {
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

export function matchesQuery(r: RunSummary, clauses: readonly Clause[]): boolean {
  return clauses.every((c) => {
    if (c.field === null || c.op === null) {
      const hay = [r.name, r.id, r.env, r.preset, r.status, ...r.tags].join(' ').toLowerCase();
      return hay.includes(c.value.toLowerCase());
    }
    const v = fieldValue(r, c.field);
    if (v === null) return c.op === '!=';
    if (Array.isArray(v)) return c.op === '!=' ? !v.some((t) => test(t, '=', c.value)) : v.some((t) => test(t, c.op!, c.value));
    return test(v as string | number, c.op, c.value);
  });
}

/** Fields a query can name in these runs: the run fields, then every headline number any of them carries. */
export function queryFields(runs: readonly RunSummary[]): string[] {
  const keys = new Set<string>();
  for (const r of runs) for (const k of Object.keys(r.summary)) keys.add(k);
  return [...RUN_FIELDS, ...[...keys].sort()];
}
