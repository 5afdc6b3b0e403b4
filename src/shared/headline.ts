/**
 * A run's headline numbers, wherever they are shown (`arlarena show` and `runs`, the runs table, Compare's
 * summary): the lab logs success rates; imported verl / TRL runs log scores instead (verl's
 * `val-core/<source>/reward/mean@1` is stored as `val/score_mean`, `critic/score/mean` as `episode/score_mean`).
 * Each headline takes the first of its keys the run logged, so an imported run is not shown as "—".
 */

/** Held-out validation: success rate where logged, else the validation score. */
export const VALIDATION_KEYS = ['val/success_rate', 'val/score_mean'] as const;
/** Training success: success rate where logged, else the task score. */
export const TRAIN_SUCCESS_KEYS = ['episode/success_rate', 'episode/score_mean'] as const;

export interface HeadlineValue {
  /** The key the value is from (the first of the list the run logged). */
  readonly key: string;
  readonly value: number;
}

/** The first key of `keys` with a finite value in `summary` (a RunSummary's `summary`), or null. */
export function headlineOf(summary: Readonly<Record<string, number | null | undefined>>, keys: readonly string[]): HeadlineValue | null {
  for (const key of keys) {
    const v = summary[key];
    if (typeof v === 'number' && Number.isFinite(v)) return { key, value: v };
  }
  return null;
}

/** The key to read a headline from when per-key data is at hand: the first of `keys` that `has` (logged it). */
export function headlineKey(keys: readonly string[], has: (key: string) => boolean): string {
  return keys.find(has) ?? keys[0];
}
