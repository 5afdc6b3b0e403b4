/**
 * HostKvCache (hostKvCache.ts) by hand on a cache small enough to write out: 1 layer, batch 1, 2 key/value heads,
 * head dim 2, 3 slots. Keys are cached transposed, so cache_key_t_0 is 4 rows (head, dim) × 3 slots and
 * cache_value_0 is 2 heads × 3 slots × 2 dims.
 */
import * as ort from 'onnxruntime-node';
import { describe, expect, it } from 'vitest';
import { emptyKvFeeds, HostKvCache } from './hostKvCache';

const shape = { layers: 1, kvHeads: 2, headDim: 2 };

/** The graph's outputs for S appended columns: new_key_t_0 [1,2,2,S] and new_value_0 [1,2,S,2]. */
function graphOut(keyT: number[], value: number[], S: number): Record<string, ort.Tensor> {
  return {
    new_key_t_0: new ort.Tensor('float32', Float32Array.from(keyT), [1, 2, 2, S]),
    new_value_0: new ort.Tensor('float32', Float32Array.from(value), [1, 2, S, 2]),
  };
}

describe('HostKvCache', () => {
  it('prefill feeds zero cache slots and the bias as it is; stored columns land in slots 0.. of each row', () => {
    const cache = new HostKvCache(shape, 3, 'test engine');
    cache.begin(1);
    const bias = Float32Array.from([0, -1e9, 0, 0]);
    const prefill = cache.feeds(bias, 2);
    expect(prefill.attn_bias.dims).toEqual([1, 1, 2, 2]);
    expect(prefill.attn_bias.data).toBe(bias);
    expect(prefill.cache_key_t_0.dims).toEqual([1, 2, 2, 0]);
    expect(prefill.cache_value_0.dims).toEqual([1, 2, 0, 2]);

    // new keys: row (head h, dim j) holds its S=2 columns; new values: head h, column s, dims j.
    cache.store(graphOut([1, 2, 3, 4, 5, 6, 7, 8], [11, 12, 13, 14, 15, 16, 17, 18], 2), 2);
    expect(cache.length).toBe(2);

    const step = cache.feeds(Float32Array.from([0, 0, 0]), 1);
    const kt = step.cache_key_t_0;
    const v = step.cache_value_0;
    expect(kt.dims).toEqual([1, 2, 2, 3]);
    expect(v.dims).toEqual([1, 2, 3, 2]);
    // Each key row's 3 slots: the 2 stored columns, then the unwritten slot.
    expect(Array.from(kt.data as Float32Array)).toEqual([1, 2, 0, 3, 4, 0, 5, 6, 0, 7, 8, 0]);
    // Each head's 3 slots of 2 dims: the 2 stored columns, then the unwritten slot.
    expect(Array.from(v.data as Float32Array)).toEqual([11, 12, 13, 14, 0, 0, 15, 16, 17, 18, 0, 0]);
    // attn_bias [1,1,1,cap+S]: the 2 written slots as given, the unwritten one masked, then the new column.
    expect(step.attn_bias.dims).toEqual([1, 1, 1, 4]);
    expect(Array.from(step.attn_bias.data as Float32Array)).toEqual([0, 0, -1e9, 0]);

    // The next column goes into slot 2, in the same buffers the feeds wrap (the binding reads them in place).
    cache.store(graphOut([21, 22, 23, 24], [31, 32, 33, 34], 1), 1);
    expect(cache.length).toBe(3);
    expect(Array.from(kt.data as Float32Array)).toEqual([1, 2, 21, 3, 4, 22, 5, 6, 23, 7, 8, 24]);
    expect(Array.from(v.data as Float32Array)).toEqual([11, 12, 13, 14, 31, 32, 15, 16, 17, 18, 33, 34]);
  });

  it('a batch of 2 keeps each row in its own block', () => {
    const cache = new HostKvCache({ layers: 2, kvHeads: 1, headDim: 1 }, 2, 'test engine');
    cache.begin(2);
    cache.feeds(new Float32Array(2), 1);
    const out = {
      new_key_t_0: new ort.Tensor('float32', Float32Array.from([1, 2]), [2, 1, 1, 1]),
      new_value_0: new ort.Tensor('float32', Float32Array.from([3, 4]), [2, 1, 1, 1]),
      new_key_t_1: new ort.Tensor('float32', Float32Array.from([5, 6]), [2, 1, 1, 1]),
      new_value_1: new ort.Tensor('float32', Float32Array.from([7, 8]), [2, 1, 1, 1]),
    };
    cache.store(out, 1);
    const feeds = cache.feeds(new Float32Array(2 * 2), 1);
    expect(feeds.cache_key_t_0.dims).toEqual([2, 1, 1, 2]);
    expect(Array.from(feeds.cache_key_t_0.data as Float32Array)).toEqual([1, 0, 2, 0]);
    expect(Array.from(feeds.cache_value_0.data as Float32Array)).toEqual([3, 0, 4, 0]);
    expect(Array.from(feeds.cache_key_t_1.data as Float32Array)).toEqual([5, 0, 6, 0]);
    expect(Array.from(feeds.cache_value_1.data as Float32Array)).toEqual([7, 0, 8, 0]);
  });

  it('appending past the capacity and a capacity that is not a whole number ≥ 1 are errors naming the engine', () => {
    const cache = new HostKvCache(shape, 3, 'test engine');
    cache.begin(1);
    expect(() => cache.feeds(new Float32Array(4 * 4), 4)).toThrow('test engine: appending 4 columns to 0 exceeds the cache capacity 3');
    expect(() => new HostKvCache(shape, 0, 'test engine')).toThrow('test engine: cache capacity must be an integer ≥ 1, got 0');
    expect(() => new HostKvCache(shape, 2.5, 'test engine')).toThrow(/got 2.5/);
  });

  it('begin() starts a new generation with cleared slots', () => {
    const cache = new HostKvCache(shape, 3, 'test engine');
    cache.begin(1);
    cache.feeds(new Float32Array(1), 1);
    cache.store(graphOut([1, 2, 3, 4], [5, 6, 7, 8], 1), 1);
    cache.begin(1);
    expect(cache.length).toBe(0);
    cache.store(graphOut([0, 0, 0, 0], [0, 0, 0, 0], 1), 1);
    const feeds = cache.feeds(new Float32Array(2), 1);
    expect(Array.from(feeds.cache_key_t_0.data as Float32Array).every((x) => x === 0)).toBe(true);
  });

  it('emptyKvFeeds: zero slots per layer with the batch, heads and head dim', () => {
    const feeds = emptyKvFeeds({ layers: 2, kvHeads: 3, headDim: 4 }, 5);
    expect(Object.keys(feeds).sort()).toEqual(['cache_key_t_0', 'cache_key_t_1', 'cache_value_0', 'cache_value_1']);
    expect(feeds.cache_key_t_1.dims).toEqual([5, 3, 4, 0]);
    expect(feeds.cache_value_1.dims).toEqual([5, 3, 0, 4]);
  });
});
