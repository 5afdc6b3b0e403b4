/**
 * Reading the lab's outputs against the Transformers references of the Hugging Face test checkpoints
 * (tests/support/hfCheckpoints.ts): batches packed as the peers pack them, logits compared over each row's real
 * columns, and the Qwen3 peer script (tests/peers/qwen3_transformers.py).
 */
import { resolve } from 'node:path';

export const QWEN3_PEER = resolve(import.meta.dirname, '..', 'peers', 'qwen3_transformers.py');

/** Pack rows into [N, T] ids and a 0/1 mask, right- or left-aligned; `at(i, k)` is row i's k-th token's index. */
export function pack(
  seqs: number[][],
  pad: number,
  left: boolean,
): { ids: Int32Array; mask: Uint8Array; T: number; at: (i: number, k: number) => number } {
  const T = Math.max(...seqs.map((s) => s.length));
  const ids = new Int32Array(seqs.length * T).fill(pad);
  const mask = new Uint8Array(seqs.length * T);
  const at = (i: number, k: number): number => i * T + (left ? T - seqs[i].length : 0) + k;
  seqs.forEach((s, i) =>
    s.forEach((t, k) => {
      ids[at(i, k)] = t;
      mask[at(i, k)] = 1;
    }),
  );
  return { ids, mask, T, at };
}

/** max |got − ref| over each row's real columns; `ref` holds only those columns (Transformers' layout). */
export function maxLogitDiff(got: ArrayLike<number>, V: number, ref: number[][][], at: (i: number, k: number) => number): number {
  let m = 0;
  ref.forEach((row, i) =>
    row.forEach((col, k) =>
      col.forEach((r, v) => {
        m = Math.max(m, Math.abs(got[at(i, k) * V + v] - r));
      }),
    ),
  );
  return m;
}
