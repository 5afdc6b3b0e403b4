/**
 * The seed of an imported run, read from the config its log revealed (verl's Hydra config, a TRL run's args).
 * Shared by the importer, which stores 0 when there is none (RunRecord.seed is an integer), and the run views,
 * which then say "seed unknown" instead of showing that 0 as if the source had named it.
 */

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The value at a dotted path, also accepting a flat key with dots in it (flattened configs). */
export function configAt(cfg: Record<string, unknown>, path: string): unknown {
  if (path in cfg) return cfg[path];
  let cur: unknown = cfg;
  for (const part of path.split('.')) {
    if (!isObj(cur)) return undefined;
    cur = cur[part];
  }
  return cur;
}

/** Where verl (data.seed), TRL (seed) and other trainers (trainer.seed) put the run's seed, in lookup order. */
const SEED_PATHS = ['seed', 'data.seed', 'trainer.seed'] as const;

/** The first seed-like value (a non-negative 31-bit integer) at SEED_PATHS, or null when the config has none. */
export function importedSeed(config: unknown): number | null {
  if (!isObj(config)) return null;
  for (const p of SEED_PATHS) {
    const v = configAt(config, p);
    if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 && v <= 2 ** 31 - 1) return v;
  }
  return null;
}
