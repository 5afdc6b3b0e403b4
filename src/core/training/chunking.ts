/**
 * Splitting a batch that is too big to differentiate at once (gradient accumulation).
 *
 * Why: tfjs-wasm's heap is a 32-bit WebAssembly memory; allocations fail past ≈4.2 GB (measured with tf.fill on
 * this machine: "Aborted()", and mid-training "RuntimeError: table index is out of bounds"). Backprop keeps every
 * attention matrix [heads, T, T] of every layer on the tape, so memory grows with rows × T². A 32-row BC batch
 * of shop prompts (T ≈ 600) crossed the limit; a 64-row RL mini-batch at T = 640 would need ≈ 7 GB.
 *
 * How: rows are cut, in order, into contiguous chunks whose estimated activation bytes stay within the budget
 * (`compute.activationBudgetMB`). Each chunk's loss divides by the WHOLE batch's denominator (the aggregations'
 * `wholeDenominator`), so the chunks' losses and gradients add up to the batch's — the same update up to float
 * summation order. A batch within the budget is one chunk and runs exactly the unsplit code path.
 */

import * as tf from '@tensorflow/tfjs-core';

/** compute.activationBudgetMB's default; also used for configs saved before the field existed. */
export const DEFAULT_ACTIVATION_BUDGET_MB = 2048;

/** A config's budget; configs saved before compute.activationBudgetMB existed have none and get the default. */
export function activationBudgetOf(config: { readonly compute: { readonly activationBudgetMB?: number } }): number {
  return config.compute.activationBudgetMB ?? DEFAULT_ACTIVATION_BUDGET_MB;
}

/** The model dims the estimate needs. */
export interface ActivationShape {
  readonly nLayers: number;
  readonly nHeads: number;
  readonly dModel: number;
  readonly dFF: number;
  readonly vocabSize: number;
}

/**
 * Estimated bytes one row of length T keeps alive through a forward + backward pass (float32): per layer ≈8
 * attention-sized tensors [H,T,T] (scores, scaled, masked, softmax and their gradients), ≈12 of width dModel and 3
 * of width dFF; plus ≈4 of [T, vocab] for the logits, log-softmax and their gradients. A deliberate over-estimate
 * of tfjs's working set (the tape also holds temporaries), checked against the measured failure: 32 shop rows
 * (T ≈ 600, nano) estimate ≈3.4 GB and crashed; 16 rows ≈1.7–1.9 GB ran.
 */
export function rowActivationBytes(shape: ActivationShape, T: number): number {
  const perLayer = 8 * shape.nHeads * T * T + 12 * T * shape.dModel + 3 * T * shape.dFF;
  return 4 * (shape.nLayers * perLayer + 4 * T * shape.vocabSize);
}

/** A row's model input length as `PolicyModel.tokenLogProbs` sees it (prompt + response − 1). */
export function rowInputLength(row: { readonly promptIds: ArrayLike<number>; readonly responseIds: ArrayLike<number> }): number {
  return Math.max(1, row.promptIds.length + row.responseIds.length - 1);
}

/**
 * Contiguous [lo, hi) chunks of rows with given input lengths: each chunk's rows × bytes(longest row in it) stays
 * within `budgetBytes` (a single row over budget is a chunk of its own) and holds at most `maxRows` rows.
 * Deterministic in its inputs.
 */
export function planChunks(
  lengths: readonly number[],
  shape: ActivationShape,
  budgetBytes: number,
  maxRows = Infinity,
): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let lo = 0;
  let longest = 0;
  for (let i = 0; i < lengths.length; i++) {
    const T = Math.max(longest, lengths[i]);
    if (i > lo && (i - lo + 1 > maxRows || (i - lo + 1) * rowActivationBytes(shape, T) > budgetBytes)) {
      out.push([lo, i]);
      lo = i;
      longest = lengths[i];
    } else {
      longest = T;
    }
  }
  if (lengths.length > lo) out.push([lo, lengths.length]);
  return out;
}

/** Chunks of `rows` for a model of `shape` under a budget in MB (compute.activationBudgetMB). */
export function chunkRows<R extends { readonly promptIds: ArrayLike<number>; readonly responseIds: ArrayLike<number> }>(
  rows: readonly R[],
  shape: ActivationShape,
  budgetMB: number,
  maxRows = Infinity,
): Array<[number, number]> {
  return planChunks(rows.map(rowInputLength), shape, budgetMB * 1024 * 1024, maxRows);
}

/** Add `grads` into `into` (variable name → running sum), disposing what is replaced. */
export function accumulateGrads(into: tf.NamedTensorMap, grads: tf.NamedTensorMap): void {
  for (const [name, g] of Object.entries(grads)) {
    const prev = into[name];
    if (prev === undefined) {
      into[name] = g;
    } else {
      into[name] = tf.add(prev, g);
      prev.dispose();
      g.dispose();
    }
  }
}
