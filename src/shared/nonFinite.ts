/**
 * NaN and ±Infinity where JSON has no numbers for them: the one spelling every persisted and wire format of the
 * lab uses (metric lines in the store, run.metrics events, the Ray line protocol, the detector's evidence):
 * the strings "NaN", "Infinity" and "-Infinity", as Python's json module writes them.
 */
export type NonFiniteKind = 'NaN' | 'Infinity' | '-Infinity';

/** The kind of a non-finite value; null for a finite one. */
export function nonFiniteKind(v: number): NonFiniteKind | null {
  if (Number.isFinite(v)) return null;
  if (Number.isNaN(v)) return 'NaN';
  return v > 0 ? 'Infinity' : '-Infinity';
}

/** The number a kind stands for. */
export function fromNonFiniteKind(kind: NonFiniteKind): number {
  return kind === 'NaN' ? Number.NaN : kind === 'Infinity' ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
}

export function isNonFiniteKind(v: unknown): v is NonFiniteKind {
  return v === 'NaN' || v === 'Infinity' || v === '-Infinity';
}

/** A metric record as events carry it: non-finite values as null, with their kinds beside them. */
export interface WireMetricRecord {
  readonly step: number;
  readonly values: Record<string, number | null>;
  readonly nonFinite?: Record<string, NonFiniteKind>;
}

export function toWireRecord(r: { readonly step: number; readonly values: Readonly<Record<string, number>> }): WireMetricRecord {
  const values: Record<string, number | null> = {};
  let nonFinite: Record<string, NonFiniteKind> | undefined;
  for (const [k, v] of Object.entries(r.values)) {
    const kind = nonFiniteKind(v);
    values[k] = kind === null ? v : null;
    if (kind !== null) (nonFinite ??= {})[k] = kind;
  }
  return nonFinite ? { step: r.step, values, nonFinite } : { step: r.step, values };
}
