/**
 * When is a non-finite metric value an event?
 *
 * The trainer logs every catalog key every step and writes NaN where a value does not apply (validation keys
 * between validations, KL when KL is off). So NaN alone is not alarming. It is an event when a metric that had
 * been finite becomes NaN (outside the validation group, whose NaNs are by design), and ±Infinity is always
 * an event. Used by the collapse detector's `non_finite` rule and by the store's chart series.
 */
import { nanMeansNotApplicable } from '../../shared/metrics';
import { nonFiniteKind, type NonFiniteKind } from '../../shared/nonFinite';

export { nanMeansNotApplicable, nonFiniteKind, type NonFiniteKind };

/**
 * Classify value `v` of `key`, given whether the key has had a finite value before in this run.
 * Returns the kind when it should be reported, null when it is finite or an expected "not applicable" NaN.
 */
export function reportableNonFinite(key: string, v: number, seenFinite: boolean): NonFiniteKind | null {
  const kind = nonFiniteKind(v);
  if (kind === null) return null;
  if (kind !== 'NaN') return kind;
  if (!seenFinite || nanMeansNotApplicable(key)) return null;
  return 'NaN';
}
