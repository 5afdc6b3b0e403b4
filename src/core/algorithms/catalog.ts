/**
 * Closed, typed catalogs of algorithm variants (DEVELOPERS.md "How code looks"): one file per variant, one
 * signature per family, looked up by the name used in the literature / in verl. An unknown name is a
 * programming or config error and throws with the list of known names, so a typo never silently falls back.
 */
export interface CatalogEntry<F> {
  /** The literature / verl name, e.g. `token-mean`, `gspo`, `low_var_kl`, `gigpo`. */
  readonly name: string;
  /** One line: what the variant does and where it comes from (spec section). */
  readonly summary: string;
  readonly fn: F;
}

export interface Catalog<N extends string, F> {
  readonly family: string;
  readonly names: readonly N[];
  get(name: string): CatalogEntry<F>;
  has(name: string): name is N;
  list(): ReadonlyArray<CatalogEntry<F>>;
}

export class UnknownVariantError extends Error {
  constructor(family: string, name: string, known: readonly string[]) {
    super(`unknown ${family} "${name}"; known ${family} names: ${known.join(', ')}`);
    this.name = 'UnknownVariantError';
  }
}

export function makeCatalog<N extends string, F>(family: string, entries: Record<N, CatalogEntry<F>>): Catalog<N, F> {
  const names = Object.keys(entries) as N[];
  const map = new Map<string, CatalogEntry<F>>(names.map((n) => [n, entries[n]]));
  return {
    family,
    names,
    get(name: string): CatalogEntry<F> {
      const e = map.get(name);
      if (!e) throw new UnknownVariantError(family, name, names);
      return e;
    },
    has(name: string): name is N {
      return map.has(name);
    },
    list() {
      return names.map((n) => entries[n]);
    },
  };
}
