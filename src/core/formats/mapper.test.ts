/** createStepMapper's two shortcuts: the previous step's plan reused for the same keys, and no copy when nothing changes. */
import { describe, expect, it } from 'vitest';
import { createStepMapper } from './mapping';

describe('createStepMapper shortcuts', () => {
  it('a step whose keys all keep their names, in order, is handed on as it is; one needing a rename is copied', () => {
    const map = createStepMapper('unknown');
    const plain = { 'bench/metric_0': 1, 'bench/metric_1': 2 };
    const m = map(plain);
    expect(m.values).toBe(plain);
    expect(m.keyMap).toEqual({});
    const renamed = { grad_norm: 3, 'bench/metric_0': 1 };
    const r = map(renamed);
    expect(r.values).not.toBe(renamed);
    expect(r.values).toEqual({ 'actor/grad_norm': 3, 'bench/metric_0': 1 });
    // A catalog key already spelled as the catalog spells it, alone: nothing to change either.
    const own = { 'actor/entropy': 0.5 };
    expect(map(own).values).toBe(own);
  });

  it('the previous plan is reused only for the very same keys in the same order', () => {
    const map = createStepMapper('unknown');
    // Catalog keys come in the table's order, kept keys in the source's: a reused plan would show in the order.
    expect(Object.keys(map({ grad_norm: 1, x: 2, y: 3 }).values)).toEqual(['actor/grad_norm', 'x', 'y']);
    expect(Object.keys(map({ grad_norm: 1, y: 3, x: 2 }).values)).toEqual(['actor/grad_norm', 'y', 'x']);
    // A key more, a key fewer, then the first key set again.
    expect(map({ grad_norm: 1, y: 3, x: 2, loss: 4 }).values).toEqual({ 'actor/pg_loss': 4, 'actor/grad_norm': 1, y: 3, x: 2 });
    expect(map({ grad_norm: 1, y: 3 }).values).toEqual({ 'actor/grad_norm': 1, y: 3 });
    expect(map({ grad_norm: 5, x: 6, y: 7 }).values).toEqual({ 'actor/grad_norm': 5, x: 6, y: 7 });
  });
});
