/** Small immutable-style collection helpers (plain .ts, so views never hold mutable Maps/Sets as state). */

export function uniq<T>(items: Iterable<T>): T[] {
  return [...new Set(items)];
}

/** Groups items by key, in first-seen order of the keys. */
export function groupBy<T>(items: Iterable<T>, key: (item: T) => string): [string, T[]][] {
  const m = new Map<string, T[]>();
  for (const it of items) {
    const k = key(it);
    const list = m.get(k);
    if (list) list.push(it);
    else m.set(k, [it]);
  }
  return [...m];
}
