/**
 * Two fixes that make tfjs-backend-wasm usable for training (measured in ../shared/notes/stack.md):
 *
 * 1. BatchMatMul with transposeA/transposeB is ~10× slower on wasm than an explicit Transpose followed by a plain
 *    matMul, and every matMul gradient uses the transposed forms. We re-register the kernel so it transposes
 *    first (324 → 183 ms per step on the reference model).
 * 2. wasm has no UnsortedSegmentSum kernel, which is the gradient of `gather` (e.g. an embedding lookup). The
 *    policy avoids gather in its differentiable path, but other callers may not: a small JS kernel fills the gap.
 */
import * as tf from '@tensorflow/tfjs';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';

let applied = false;

export function applyWasmFixes(): void {
  if (applied) return;
  applied = true;
  const original = tf.getKernel('BatchMatMul', 'wasm');
  const transpose = tf.getKernel('Transpose', 'wasm');
  if (!original || !transpose) throw new Error('applyWasmFixes: the wasm backend is not registered (import @tensorflow/tfjs-backend-wasm first)');
  tf.unregisterKernel('BatchMatMul', 'wasm');
  tf.registerKernel({
    kernelName: 'BatchMatMul',
    backendName: 'wasm',
    setupFunc: original.setupFunc,
    disposeFunc: original.disposeFunc,
    kernelFunc: ({ inputs, backend, attrs }) => {
      const { a, b } = inputs as { a: tf.TensorInfo; b: tf.TensorInfo };
      const { transposeA, transposeB } = attrs as unknown as { transposeA: boolean; transposeB: boolean };
      if (!transposeA && !transposeB) return original.kernelFunc({ inputs, backend, attrs });
      const wasm = backend as BackendWasm;
      const swapLast = (x: tf.TensorInfo): tf.TensorInfo => {
        const r = x.shape.length;
        const perm = [...Array(r).keys()];
        perm[r - 2] = r - 1;
        perm[r - 1] = r - 2;
        return transpose.kernelFunc({ inputs: { x }, backend, attrs: { perm } }) as tf.TensorInfo;
      };
      const ta = transposeA ? swapLast(a) : a;
      const tb = transposeB ? swapLast(b) : b;
      const out = original.kernelFunc({
        inputs: { a: ta, b: tb },
        backend,
        attrs: { ...attrs, transposeA: false, transposeB: false } as unknown as tf.NamedAttrMap,
      });
      if (ta !== a) wasm.disposeData(ta.dataId);
      if (tb !== b) wasm.disposeData(tb.dataId);
      return out;
    },
  });

  if (!tf.getKernel('UnsortedSegmentSum', 'wasm')) {
    tf.registerKernel({
      kernelName: 'UnsortedSegmentSum',
      backendName: 'wasm',
      kernelFunc: ({ inputs, backend, attrs }) => {
        const { x, segmentIds } = inputs as { x: tf.TensorInfo; segmentIds: tf.TensorInfo };
        const { numSegments } = attrs as unknown as { numSegments: number };
        const wasm = backend as BackendWasm;
        const xv = wasm.readSync(x.dataId) as Float32Array;
        const ids = wasm.readSync(segmentIds.dataId) as Int32Array;
        const n = segmentIds.shape.reduce((p, q) => p * q, 1);
        const inner = xv.length / Math.max(1, n);
        const outShape = [numSegments, ...x.shape.slice(segmentIds.shape.length)];
        const out = new Float32Array(numSegments * inner);
        for (let i = 0; i < n; i++) {
          const s = ids[i];
          if (s < 0 || s >= numSegments) continue;
          const src = i * inner;
          const dst = s * inner;
          for (let j = 0; j < inner; j++) out[dst + j] += xv[src + j];
        }
        return wasm.makeOutput(outShape, 'float32', undefined, out);
      },
    });
  }
}
