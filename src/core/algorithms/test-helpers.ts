/**
 * Test support for the algorithm tests: loads the full tfjs package (cpu backend + gradient registry) in
 * production mode, which also silences tfjs's "install tfjs-node" banner. Not used by engine code.
 */
import * as tf from '@tensorflow/tfjs';

let ready: Promise<void> | null = null;

export function setupTf(): Promise<void> {
  ready ??= (async () => {
    tf.enableProdMode();
    await tf.setBackend('cpu');
  })();
  return ready;
}

export function m2(x: number[][]): tf.Tensor2D {
  const w = x[0]?.length ?? 0;
  return tf.tensor2d(x.flat(), [x.length, w], 'float32');
}

export function arr(t: tf.Tensor): number[][] {
  return t.arraySync() as number[][];
}

export function num(t: tf.Tensor): number {
  return t.dataSync()[0];
}

/** Relative-or-absolute closeness for float32 vs float64 comparisons. */
export function close(a: number, b: number, rel = 1e-5, abs = 1e-6): boolean {
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) && Number.isNaN(b);
  return Math.abs(a - b) <= Math.max(abs, rel * Math.max(Math.abs(a), Math.abs(b)));
}

export function expectMatrixClose(got: number[][], want: number[][], rel = 1e-5, abs = 1e-6): void {
  if (got.length !== want.length) throw new Error(`rows: got ${got.length}, want ${want.length}`);
  got.forEach((row, i) =>
    row.forEach((v, j) => {
      if (!close(v, want[i][j], rel, abs)) throw new Error(`[${i}][${j}]: got ${v}, want ${want[i][j]}`);
    }),
  );
}
