/**
 * Kernel replacements that make tfjs-backend-wasm usable for training (each measured below):
 *
 * 1. BatchMatMul with transposeA/transposeB is ~10× slower on wasm than an explicit Transpose followed by a plain
 *    matMul, and every matMul gradient uses the transposed forms. We re-register the kernel so it transposes
 *    first (324 → 183 ms per step on the reference model).
 *    A batched product (both operands with a batch dimension > 1, e.g. attention's Q·Kᵀ and P·V over
 *    [rows·heads, T, T]) takes wasm's generic loop, which ran at ≈0.16 GMAC/s against ≈5–7 GMAC/s for the
 *    XNNPACK path that a product with an unbatched right operand takes; on a BC update at history 0 the attention
 *    products were 58 % of the step. We therefore run such products one batch slice at a time through the fast path
 *    (copying each slice inside the wasm heap), which is exact and deterministic (same single-threaded kernel).
 * 2. wasm has no UnsortedSegmentSum kernel, which is the gradient of `gather` (e.g. an embedding lookup): a small JS
 *    kernel fills the gap, summing inside the wasm heap. With it the policy embeds tokens with gather
 *    (model.ts canGatherGrad) instead of a one-hot matMul.
 * 3. GatherV2 of whole rows (a float32 matrix along axis 0: the policy's token embedding) copies each row with one
 *    copyWithin inside the wasm heap. wasm's kernel walks element by element: 14–21 ms for 5,728 rows of 64
 *    (a 32-row log-prob chunk at history 0), ≈2 % of a forward-backward pass; a copy is exact.
 * 4. Identity, and Cast to the tensor's own dtype, share the input's buffer (reference-counted, as tfjs's cpu and
 *    webgl backends do) instead of copying it: tfjs tensors are immutable, and the gradient code calls them on
 *    every activation (≈200 copies, 65 ms of a 960 ms forward-backward pass over 32 rows).
 * 5. Slice (and so SplitV, which slices each part) copies straight between heap views: wasm's kernel first reads the
 *    whole input out of the heap (readSync copies it), so splitting attention's [rows·T, 3d] projection into Q, K
 *    and V copied that tensor three times over (1.1 s of main-thread readSync in a 5-step bench:rl run at K = 1).
 */
import * as tf from '@tensorflow/tfjs';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';

let applied = false;

/** Where a tensor's data starts in the wasm heap, in 4-byte elements. */
function heapOffset(wasm: BackendWasm, info: tf.TensorInfo): number {
  return wasm.dataIdMap.get(info.dataId)!.memoryOffset / 4;
}

/**
 * The heap's float32 and int32 views. The emscripten module exports them, but tfjs's type for the module does not
 * declare them. Read them after every allocation: growing wasm memory replaces them.
 */
function heaps(wasm: BackendWasm): { f32: Float32Array; i32: Int32Array } {
  const m = wasm.wasm as unknown as { HEAPF32: Float32Array; HEAP32: Int32Array };
  return { f32: m.HEAPF32, i32: m.HEAP32 };
}

/** Puts `make(original)` in place of wasm's kernel `name`, keeping its setup and dispose; no-op where wasm has none. */
function replaceKernel(name: string, make: (original: tf.KernelConfig) => tf.KernelFunc): void {
  const original = tf.getKernel(name, 'wasm');
  if (!original) return;
  tf.unregisterKernel(name, 'wasm');
  tf.registerKernel({
    kernelName: name,
    backendName: 'wasm',
    setupFunc: original.setupFunc,
    disposeFunc: original.disposeFunc,
    kernelFunc: make(original),
  });
}

export function applyWasmFixes(): void {
  if (applied) return;
  applied = true;
  const original = tf.getKernel('BatchMatMul', 'wasm');
  const transpose = tf.getKernel('Transpose', 'wasm');
  if (!original || !transpose)
    throw new Error('applyWasmFixes: the wasm backend is not registered (import @tensorflow/tfjs-backend-wasm first)');
  replaceKernel('BatchMatMul', () => ({ inputs, backend, attrs }) => {
    const { a, b } = inputs as { a: tf.TensorInfo; b: tf.TensorInfo };
    const { transposeA, transposeB } = attrs as unknown as { transposeA: boolean; transposeB: boolean };
    const wasm = backend as BackendWasm;
    if (!transposeA && !transposeB) return sliced(wasm, a, b) ?? original.kernelFunc({ inputs, backend, attrs });
    const swapLast = (x: tf.TensorInfo): tf.TensorInfo => {
      const r = x.shape.length;
      const perm = [...Array(r).keys()];
      perm[r - 2] = r - 1;
      perm[r - 1] = r - 2;
      return transpose.kernelFunc({ inputs: { x }, backend, attrs: { perm } }) as tf.TensorInfo;
    };
    const ta = transposeA ? swapLast(a) : a;
    const tb = transposeB ? swapLast(b) : b;
    const out =
      sliced(wasm, ta, tb) ??
      original.kernelFunc({
        inputs: { a: ta, b: tb },
        backend,
        attrs: { ...attrs, transposeA: false, transposeB: false } as unknown as tf.NamedAttrMap,
      });
    if (ta !== a) wasm.disposeData(ta.dataId);
    if (tb !== b) wasm.disposeData(tb.dataId);
    return out;
  });

  /**
   * a [..., M, K] · b [..., K, N], no transposes, with the same batch size B > 1 on both sides: B fast-path
   * products of [1, M, K] · [K, N]. Returns null when the shapes are not of that kind (the caller falls back).
   */
  const sliced = (wasm: BackendWasm, a: tf.TensorInfo, b: tf.TensorInfo): tf.TensorInfo | null => {
    const ra = a.shape.length;
    const rb = b.shape.length;
    if (ra < 3 || rb < 3 || ra !== rb) return null;
    const batchShape = a.shape.slice(0, -2);
    if (batchShape.some((n, i) => n !== b.shape[i])) return null;
    const B = batchShape.reduce((p, q) => p * q, 1);
    if (B <= 1) return null;
    const [M, K] = a.shape.slice(-2);
    const N = b.shape[rb - 1];
    const out = wasm.makeOutput([...batchShape, M, N], 'float32');
    const ai = wasm.makeOutput([1, M, K], 'float32');
    const off = (info: tf.TensorInfo): number => heapOffset(wasm, info);
    try {
      for (let i = 0; i < B; i++) {
        // A fresh right operand per slice: the fast path caches its packed weights under the operand's id, so
        // reusing one buffer with new contents would multiply by stale weights.
        const bi = wasm.makeOutput([K, N], 'float32');
        // Read the heap view after every allocation: growing wasm memory replaces it.
        let heap = heaps(wasm).f32;
        heap.copyWithin(off(ai), off(a) + i * M * K, off(a) + (i + 1) * M * K);
        heap.copyWithin(off(bi), off(b) + i * K * N, off(b) + (i + 1) * K * N);
        const oi = original.kernelFunc({
          inputs: { a: ai, b: bi },
          backend: wasm,
          attrs: { transposeA: false, transposeB: false } as unknown as tf.NamedAttrMap,
        }) as tf.TensorInfo;
        heap = heaps(wasm).f32;
        heap.copyWithin(off(out) + i * M * N, off(oi), off(oi) + M * N);
        wasm.disposeData(oi.dataId);
        wasm.disposeData(bi.dataId);
      }
    } finally {
      wasm.disposeData(ai.dataId);
    }
    return out;
  };

  replaceKernel('GatherV2', (gather) => (args) => {
    const { x, indices } = args.inputs as { x: tf.TensorInfo; indices: tf.TensorInfo };
    const { axis, batchDims } = args.attrs as unknown as { axis: number; batchDims?: number };
    if (x.dtype !== 'float32' || x.shape.length !== 2 || (axis !== 0 && axis !== -2) || (batchDims ?? 0) !== 0)
      return gather.kernelFunc(args);
    const wasm = args.backend as BackendWasm;
    const ids = wasm.readSync(indices.dataId) as ArrayLike<number>;
    const [rows, inner] = x.shape;
    for (let i = 0; i < ids.length; i++) {
      if (!(ids[i] >= 0 && ids[i] < rows)) throw new Error(`GatherV2: the index value ${ids[i]} is not in [0, ${rows - 1}]`);
    }
    const out = wasm.makeOutput([...indices.shape, inner], 'float32');
    const heap = heaps(wasm).f32;
    const xo = heapOffset(wasm, x);
    const oo = heapOffset(wasm, out);
    for (let i = 0; i < ids.length; i++) heap.copyWithin(oo + i * inner, xo + ids[i] * inner, xo + (ids[i] + 1) * inner);
    return out;
  });

  /** x[begin : begin + size] copied between heap views; null where wasm's own kernel must do it. */
  const sliceInHeap = (wasm: BackendWasm, x: tf.TensorInfo, begin: number[], size: number[]): tf.TensorInfo | null => {
    if (x.dtype !== 'float32' && x.dtype !== 'int32') return null;
    const contiguous = tf.slice_util.isSliceContinous(x.shape, begin, size);
    if (!contiguous && x.shape.length !== 2) return null;
    const out = wasm.makeOutput(size, x.dtype);
    // The heap view read after the allocation, which may grow (and so replace) it; rows copied with copyWithin
    // (one subarray per row cost as much as the copies on a [5728, 192] split).
    const heap = x.dtype === 'float32' ? heaps(wasm).f32 : heaps(wasm).i32;
    const xo = heapOffset(wasm, x);
    const oo = heapOffset(wasm, out);
    const strides = tf.util.computeStrides(x.shape);
    if (contiguous) {
      const from = xo + tf.slice_util.computeFlatOffset(begin, strides);
      heap.copyWithin(oo, from, from + tf.util.sizeFromShape(size));
    } else {
      for (let r = 0; r < size[0]; r++) {
        const from = xo + (begin[0] + r) * strides[0] + begin[1];
        heap.copyWithin(oo + r * size[1], from, from + size[1]);
      }
    }
    return out;
  };
  replaceKernel('Slice', (slice) => (args) => {
    const { x } = args.inputs as { x: tf.TensorInfo };
    const { begin, size } = args.attrs as unknown as { begin: number | number[]; size?: number | number[] };
    const [b, s] = tf.slice_util.parseSliceParams(x as tf.Tensor, begin, size);
    return sliceInHeap(args.backend as BackendWasm, x, b, s) ?? slice.kernelFunc(args);
  });
  // wasm's SplitV calls its own slice function directly, not the registered kernel: split here the same way.
  replaceKernel('SplitV', (splitV) => (args) => {
    const { x } = args.inputs as { x: tf.TensorInfo };
    const { numOrSizeSplits, axis } = args.attrs as unknown as { numOrSizeSplits: number | number[]; axis: number };
    const ax = tf.util.parseAxisParam(axis, x.shape)[0];
    const sizes = tf.backend_util.prepareSplitSize(x as tf.Tensor, numOrSizeSplits, ax);
    const wasm = args.backend as BackendWasm;
    const begin = x.shape.map(() => 0);
    const parts: tf.TensorInfo[] = [];
    for (const n of sizes) {
      const size = [...x.shape];
      size[ax] = n;
      const part = sliceInHeap(wasm, x, [...begin], size);
      if (!part) {
        for (const p of parts) wasm.disposeData(p.dataId);
        return splitV.kernelFunc(args);
      }
      parts.push(part);
      begin[ax] += n;
    }
    return parts;
  });

  const shared = (wasm: BackendWasm, x: tf.TensorInfo): tf.TensorInfo => {
    wasm.incRef(x.dataId);
    return { dataId: x.dataId, shape: x.shape, dtype: x.dtype };
  };
  replaceKernel('Identity', (identity) => (args) => {
    const { x } = args.inputs as { x: tf.TensorInfo };
    return x.dtype === 'string' ? identity.kernelFunc(args) : shared(args.backend as BackendWasm, x);
  });
  replaceKernel('Cast', (cast) => (args) => {
    const { x } = args.inputs as { x: tf.TensorInfo };
    const { dtype } = args.attrs as unknown as { dtype: string };
    return dtype === x.dtype && dtype !== 'string' ? shared(args.backend as BackendWasm, x) : cast.kernelFunc(args);
  });

  if (!tf.getKernel('UnsortedSegmentSum', 'wasm')) {
    tf.registerKernel({
      kernelName: 'UnsortedSegmentSum',
      backendName: 'wasm',
      kernelFunc: ({ inputs, backend, attrs }) => {
        const { x, segmentIds } = inputs as { x: tf.TensorInfo; segmentIds: tf.TensorInfo };
        const { numSegments } = attrs as unknown as { numSegments: number };
        const wasm = backend as BackendWasm;
        if (x.dtype !== 'float32') throw new Error(`UnsortedSegmentSum on wasm: float32 values only (a gradient), got ${x.dtype}`);
        const ids = wasm.readSync(segmentIds.dataId) as Int32Array;
        const n = segmentIds.shape.reduce((p, q) => p * q, 1);
        const inner = x.shape.reduce((p, q) => p * q, 1) / Math.max(1, n);
        const outShape = [numSegments, ...x.shape.slice(segmentIds.shape.length)];
        // Summed in place in the wasm heap (a readSync of x and an output array cost more than the sums).
        const out = wasm.makeOutput(outShape, 'float32');
        const heap = heaps(wasm).f32;
        const xo = heapOffset(wasm, x);
        const oo = heapOffset(wasm, out);
        heap.fill(0, oo, oo + numSegments * inner);
        for (let i = 0; i < n; i++) {
          const s = ids[i];
          if (s < 0 || s >= numSegments) continue;
          const src = xo + i * inner;
          const dst = oo + s * inner;
          for (let j = 0; j < inner; j++) heap[dst + j] += heap[src + j];
        }
        return out;
      },
    });
  }
}
