import type * as tf from '@tensorflow/tfjs-core';
import type { TensorResult } from '../types';

/** Loss-aggregation names, as verl's `loss_agg_mode` (spec §1.1). */
export type AggregationName = 'token-mean' | 'seq-mean-token-mean' | 'seq-mean-token-sum' | 'seq-mean-token-sum-norm';

/**
 * One signature for the family: a per-token loss matrix [N,T] and a 0/1 mask [N,T] → a scalar.
 * `metrics.denominator` is what the masked sum was divided by (tokens, rows, valid rows or T).
 * `wholeDenominator`, when given, replaces that denominator: the matrix is one chunk of a mini-batch too big
 * to differentiate at once, and dividing every chunk's masked sum by the whole mini-batch's denominator makes
 * the chunks' values (and gradients) add up to the mini-batch's (see src/core/training/chunking.ts).
 */
export type AggregationFn = (lossMat: tf.Tensor2D, mask: tf.Tensor2D, wholeDenominator?: number) => TensorResult;

/** An aggregation's denominator for a whole mini-batch, from its rows' response-token counts and padded width. */
export type DenominatorFn = (rowTokens: readonly number[], width: number) => number;
