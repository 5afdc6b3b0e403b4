/**
 * The host-owned, fixed-capacity KV cache that both onnxruntime decoding engines feed their graphs: ortDecoder.ts
 * (the lab's own model) and ortLlmEngine.ts (Hugging Face causal LMs). Their graphs share one cache interface, per
 * layer l (B batch, KV key/value heads, D head dim, cap cache slots, S appended columns):
 *   inputs   cache_key_t_<l> float [B,KV,D,cap] · cache_value_<l> float [B,KV,cap,D] · attn_bias float [B,1,S,cap+S]
 *   outputs  new_key_t_<l> float [B,KV,D,S] · new_value_<l> float [B,KV,S,D]
 *
 * Why on the host: the buffers are allocated once per generation with room for the whole rollout, the binding wraps
 * them without copying (the same ort.Tensor objects every step), and only the appended columns cross back, which the
 * host writes into the next free slots; see the file comment of ortDecoder.ts for the measurements behind it.
 * Keys are kept transposed ([.., D, cap]) so the graph's scores are a plain MatMul against the cache.
 */
import * as ort from 'onnxruntime-node';
import { cacheBias } from '../../core/llm/onnx';

/** The cache's per-layer geometry: layers, key/value heads, head dim. */
export interface KvCacheShape {
  layers: number;
  kvHeads: number;
  headDim: number;
}

/** Cache feeds with zero slots for batch B: a prefill, or a forward pass that caches nothing. */
export function emptyKvFeeds(shape: KvCacheShape, B: number): Record<string, ort.Tensor> {
  const { layers: L, kvHeads: KV, headDim: D } = shape;
  const none = new Float32Array(0);
  const feeds: Record<string, ort.Tensor> = {};
  for (let l = 0; l < L; l++) {
    feeds[`cache_key_t_${l}`] = new ort.Tensor('float32', none, [B, KV, D, 0]);
    feeds[`cache_value_${l}`] = new ort.Tensor('float32', none, [B, KV, 0, D]);
  }
  return feeds;
}

/**
 * One generation's cache: begin(batch) allocates `capacity` columns per layer, feeds() gives the graph's inputs for
 * the next S columns, store() writes the graph's new keys/values after the columns already held and moves past them.
 * Appending past the capacity is an error named after `owner` (the engines size it to prompt + new tokens).
 */
export class HostKvCache {
  private B = 0;
  private P = 0;
  private keyT: Float32Array[] = [];
  private value: Float32Array[] = [];
  private cacheFeeds: Record<string, ort.Tensor> = {};

  constructor(
    readonly shape: KvCacheShape,
    readonly capacity: number,
    private readonly owner: string,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error(`${owner}: cache capacity must be an integer ≥ 1, got ${capacity}`);
  }

  /** Batch rows of the generation begun last. */
  get batch(): number {
    return this.B;
  }

  /** Columns written so far. */
  get length(): number {
    return this.P;
  }

  begin(batch: number): void {
    const { layers: L, kvHeads: KV, headDim: D } = this.shape;
    const cap = this.capacity;
    this.B = batch;
    this.P = 0;
    this.keyT = [];
    this.value = [];
    this.cacheFeeds = {};
    for (let l = 0; l < L; l++) {
      const kt = new Float32Array(batch * KV * D * cap);
      const v = new Float32Array(batch * KV * cap * D);
      this.keyT.push(kt);
      this.value.push(v);
      // The same tensors every step: the binding reads the buffers in place; store() writes new columns into them.
      this.cacheFeeds[`cache_key_t_${l}`] = new ort.Tensor('float32', kt, [batch, KV, D, cap]);
      this.cacheFeeds[`cache_value_${l}`] = new ort.Tensor('float32', v, [batch, KV, cap, D]);
    }
  }

  /**
   * attn_bias and the cache inputs for appending S columns, from the generation loop's bias [B·S, P+S] (keys
   * 0..P+S−1). Prefill: nothing is cached yet, so the cache goes in with zero slots and the bias as it is (the
   * prompt's queries then skip `cap` masked columns each); later steps read the whole cache with its unwritten slots
   * masked (cacheBias).
   */
  feeds(bias: Float32Array, S: number): Record<string, ort.Tensor> {
    const { B, P } = this;
    const cap = this.capacity;
    if (P + S > cap) throw new Error(`${this.owner}: appending ${S} columns to ${P} exceeds the cache capacity ${cap}`);
    if (P === 0) return { attn_bias: new ort.Tensor('float32', bias, [B, 1, S, S]), ...emptyKvFeeds(this.shape, B) };
    return { attn_bias: new ort.Tensor('float32', cacheBias(bias, B * S, P, S, cap), [B, 1, S, cap + S]), ...this.cacheFeeds };
  }

  /** Write the graph's new_key_t_<l> / new_value_<l> for S columns into the slots after those held, and count them. */
  store(out: Readonly<Record<string, ort.Tensor>>, S: number): void {
    const { B, P } = this;
    const { layers: L, kvHeads: KV, headDim: D } = this.shape;
    const cap = this.capacity;
    for (let l = 0; l < L; l++) {
      const nk = out[`new_key_t_${l}`].data as Float32Array;
      const nv = out[`new_value_${l}`].data as Float32Array;
      const kt = this.keyT[l];
      const v = this.value[l];
      // new keys [B·KV·D, S] go to columns P.. of the cache rows [B·KV·D, cap]; new values [B·KV·S, D] to rows P..
      // Element loops, not set(subarray()): a decoding step appends S = 1, so each subarray was a view object made
      // for one float (B·KV·D of them per layer and token) — 1.6 of a 10-step ladder run's 60 CPU s, and its GC.
      for (let r = 0; r < B * KV * D; r++) {
        const from = r * S;
        const to = r * cap + P;
        for (let s = 0; s < S; s++) kt[to + s] = nk[from + s];
      }
      const SD = S * D;
      for (let bh = 0; bh < B * KV; bh++) {
        const from = bh * SD;
        const to = (bh * cap + P) * D;
        for (let j = 0; j < SD; j++) v[to + j] = nv[from + j];
      }
    }
    this.P = P + S;
  }

  end(): void {
    this.keyT = [];
    this.value = [];
    this.cacheFeeds = {};
  }
}
