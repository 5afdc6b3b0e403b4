/**
 * Reading the lab's outputs against the Transformers references of the Hugging Face test checkpoints
 * (tests/support/hfCheckpoints.ts): batches packed as the peers pack them, logits compared over each row's real
 * columns, and the Qwen3 peer script (tests/peers/qwen3_transformers.py).
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { venvPython } from './peers';

export const QWEN3_PEER = resolve(import.meta.dirname, '..', 'peers', 'qwen3_transformers.py');

/**
 * What the Qwen3 peer (QWEN3_PEER in the llm-qwen3 venv: Transformers' own Qwen3ForCausalLM) prints for the
 * checkpoint folder `dir`, parsed; `T` names the fields the test reads. Its stderr (Transformers' warnings) is dropped.
 */
export function qwen3PeerAnswer<T extends { transformers: string }>(dir: string): T {
  const out = execFileSync(venvPython('llm-qwen3'), [QWEN3_PEER, dir], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  return JSON.parse(out) as T;
}

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
