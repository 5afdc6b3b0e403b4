/**
 * Keeps the run view's "Rules that ran" list current while a run is live (a lab run training, a followed log).
 * The list comes from `runs.detect { coverageOnly }`, i.e. from the keys the run has stored; a live run that had
 * logged nothing when the view opened would otherwise say "0 of 10 … the run did not log" for its whole life.
 * It is asked again only when the set of logged keys grows (cheap: most steps add no key), one request at a time,
 * and once more when an answer is stale — the store had not yet written the records whose keys the view has seen.
 * Pure (no Svelte, no DOM) so it is unit-tested.
 */

/** The rows of runs.detect's `coverage` this needs. */
export interface CoverageRowLike {
  readonly applicable: boolean;
  readonly missing: readonly string[];
}

/** Keys of `records` not in `have`, in first-seen order; `have` is not changed. */
export function newKeys(have: ReadonlySet<string>, records: readonly { values: Readonly<Record<string, unknown>> }[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const r of records) {
    for (const k of Object.keys(r.values)) {
      if (!have.has(k) && !seen.has(k)) {
        seen.add(k);
        out.push(k);
      }
    }
  }
  return out;
}

/** `known` (sorted) with the keys `records` add, sorted; null when they add none (the common case). */
export function grownKeys(known: readonly string[], records: readonly { values: Readonly<Record<string, unknown>> }[]): string[] | null {
  const added = newKeys(new Set(known), records);
  return added.length === 0 ? null : [...known, ...added].sort();
}

/** Sorted union of two key lists, or null when `more` adds nothing to `known`. */
export function unionKeys(known: readonly string[], more: readonly string[]): string[] | null {
  return grownKeys(known, [{ values: Object.fromEntries(more.map((k) => [k, null])) }]);
}

/**
 * True when a row says a rule is not applicable for want of a key the view knows the run has logged: the answer
 * was computed from fewer keys than the run now has. (`non_finite` needs any metric: coverage.ts names that
 * 'any metric'.)
 */
export function coverageIsStale(coverage: readonly CoverageRowLike[], known: ReadonlySet<string>): boolean {
  return coverage.some((c) => !c.applicable && c.missing.some((k) => known.has(k) || (k === 'any metric' && known.size > 0)));
}

/** How often a stale answer is asked again before the view waits for the next new key. */
export const STALE_RETRIES = 3;

/**
 * Asks `fetch` for the coverage of the keys logged so far whenever `keysChanged(n)` reports more keys than the
 * last answer was asked for. Requests never overlap: growth during one is folded into one follow-up request.
 */
export class CoverageRefresher<R extends CoverageRowLike> {
  private asked = -1;
  private latest = 0;
  private inFlight: Promise<void> | null = null;
  private retries = 0;

  constructor(
    private readonly fetch: () => Promise<R[] | null>,
    private readonly known: () => ReadonlySet<string>,
    private readonly onCoverage: (rows: R[]) => void,
    /** Waits before asking a stale answer again (tests pass an immediate one). */
    private readonly pause: () => Promise<void> = () => new Promise((r) => setTimeout(r, 500)),
  ) {}

  /** The answer the view already has was asked with `count` keys (the check on opening). */
  seed(count: number): void {
    this.asked = Math.max(this.asked, count);
    this.latest = Math.max(this.latest, count);
  }

  /** The view now knows `count` logged keys; returns the request it started or joined, if any. */
  keysChanged(count: number): Promise<void> | null {
    this.latest = Math.max(this.latest, count);
    if (this.latest <= this.asked) return this.inFlight;
    this.retries = 0;
    this.inFlight ??= this.loop();
    return this.inFlight;
  }

  /**
   * An answer obtained elsewhere (the check on opening) turned out stale with `count` keys known: ask again, within
   * the same bound as a stale answer of its own.
   */
  recheck(count: number): Promise<void> | null {
    this.latest = Math.max(this.latest, count);
    if (this.inFlight) return this.inFlight;
    if (this.retries >= STALE_RETRIES) return null;
    this.retries++;
    this.asked = Math.min(this.asked, this.latest - 1);
    this.inFlight = this.loop();
    return this.inFlight;
  }

  private async loop(): Promise<void> {
    try {
      while (this.latest > this.asked) {
        this.asked = this.latest;
        const rows = await this.fetch();
        if (!rows) return;
        this.onCoverage(rows);
        if (this.latest === this.asked && coverageIsStale(rows, this.known()) && this.retries < STALE_RETRIES) {
          this.retries++;
          await this.pause();
          this.asked--;
        }
      }
    } finally {
      this.inFlight = null;
    }
  }
}
