/**
 * Train / held-out task splits.
 *
 * Seeds are the task ids. Training uses seeds in [0, 10⁹) (`trainSeed(i)` folds any integer into that range);
 * held-out tasks use fixed seeds at and above 10⁹, so no training seed can ever coincide with one:
 *   - `in_distribution`:  10⁹ + j — same generators as training, unseen seeds (ALFWorld's eval_in_distribution);
 *   - `out_of_distribution`: 1.5·10⁹ + j — additionally unseen *content*: the household draws its layout from
 *     layouts reserved for this split, the shop draws its goal from goals reserved for held-out tests
 *     (WebShop keeps goals idx < 500 for test). Sokoban and FrozenLake have no content split; there the two
 *     sets are simply two disjoint seed ranges.
 * The shop reserves held-out goals for *both* held-out splits (WebShop's split is by goal), and the
 * household reserves held-out layouts for the out-of-distribution split only.
 */

export const TRAIN_SEED_LIMIT = 1_000_000_000;
export const HELD_OUT_BASE = 1_000_000_000;
export const HELD_OUT_OOD_BASE = 1_500_000_000;
export const MAX_HELD_OUT = 100_000;

export type HeldOutSplit = 'in_distribution' | 'out_of_distribution';
export const HELD_OUT_SPLITS: readonly HeldOutSplit[] = ['in_distribution', 'out_of_distribution'];

/** The i-th training seed (any integer, folded into [0, 10⁹)). */
export function trainSeed(i: number): number {
  const k = Math.floor(Number.isFinite(i) ? i : 0) % TRAIN_SEED_LIMIT;
  return k < 0 ? k + TRAIN_SEED_LIMIT : k;
}

/**
 * The fixed held-out task seeds (the same for every env; what they mean per env is described above).
 * Call as `heldOutSeeds(n, split?)` or `heldOutSeeds(envName, n?, split?)` — the env name is accepted for
 * readability at call sites; the seeds do not depend on it.
 */
export function heldOutSeeds(n?: number, split?: HeldOutSplit): number[];
export function heldOutSeeds(env: string, n?: number, split?: HeldOutSplit): number[];
export function heldOutSeeds(a: number | string = 200, b?: number | HeldOutSplit, c?: HeldOutSplit): number[] {
  const n = typeof a === 'string' ? (typeof b === 'number' ? b : 200) : a;
  const split = (typeof a === 'string' ? c : (b as HeldOutSplit | undefined)) ?? 'in_distribution';
  if (!Number.isInteger(n) || n < 1 || n > MAX_HELD_OUT) {
    throw new RangeError(`heldOutSeeds: n = ${n}: must be an integer between 1 and ${MAX_HELD_OUT}`);
  }
  if (!HELD_OUT_SPLITS.includes(split)) {
    throw new RangeError(`heldOutSeeds: split "${String(split)}" unknown; valid splits: ${HELD_OUT_SPLITS.join(', ')}`);
  }
  const base = split === 'in_distribution' ? HELD_OUT_BASE : HELD_OUT_OOD_BASE;
  return Array.from({ length: n }, (_, j) => base + j);
}

export function isHeldOutSeed(seed: number): boolean {
  return seed >= HELD_OUT_BASE;
}

export function isOutOfDistributionSeed(seed: number): boolean {
  return seed >= HELD_OUT_OOD_BASE;
}
