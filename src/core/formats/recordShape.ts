/**
 * Step values objects made with their keys already in place, so V8 keeps them in fast mode.
 *
 * An object that gets more than a few dozen keys one by one under computed names (`values[key] = v`, how a
 * parser or the mapper builds a step) becomes a dictionary (a hash table) in V8: every later `for…in` over it,
 * each `values[key]` read and JSON.stringify are then hash lookups. A copy of an object JSON.parse made (spread:
 * `{ ...shape }`) keeps the source's fast layout, and assigning keys it already has keeps it. Measured on 18,000
 * steps of 100 keys (Node 20): building 0.26 → 0.20 s, JSON.stringify 0.33 → 0.23 s, for…in 21 → 9 ms.
 *
 * The values of a shape are placeholders: whoever copies one assigns every one of its keys. Same key order as
 * the keys given, so the stored record's key order is unchanged.
 */

/** Fast-mode object with `keys` (own data properties, `__proto__` included) in order, each holding a double. */
export function recordShape(keys: readonly string[]): Record<string, number> {
  // 0.5, not 0: the fields start as doubles, so assigning a step's values does not change the layout.
  let json = '{';
  for (let i = 0; i < keys.length; i++) json += `${i === 0 ? '' : ','}${JSON.stringify(keys[i])}:0.5`;
  return JSON.parse(`${json}}`) as Record<string, number>;
}

/** Shapes by key list, for a source whose steps come in a few key sets; bounded like the mapper's plan cache. */
export class RecordShapes {
  private readonly cache = new Map<string, Record<string, number>>();

  get(keys: readonly string[]): Record<string, number> {
    const sig = keys.join('\u0001');
    let shape = this.cache.get(sig);
    if (shape === undefined) {
      if (this.cache.size >= 256) this.cache.clear();
      shape = recordShape(keys);
      this.cache.set(sig, shape);
    }
    return shape;
  }
}
