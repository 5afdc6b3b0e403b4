import { makeCatalog } from '../catalog';
import { seqMeanTokenMean, seqMeanTokenMeanDenominator } from './seq-mean-token-mean';
import { seqMeanTokenSum, seqMeanTokenSumDenominator } from './seq-mean-token-sum';
import { seqMeanTokenSumNorm, seqMeanTokenSumNormDenominator } from './seq-mean-token-sum-norm';
import { tokenMean, tokenMeanDenominator } from './token-mean';
import type { AggregationFn, AggregationName, DenominatorFn } from './types';

export type { AggregationFn, AggregationName, DenominatorFn } from './types';

/** The loss-aggregation catalog (dimension 1 of the paper, spec §1.1). */
export const AGGREGATIONS = makeCatalog<AggregationName, AggregationFn>('loss aggregation', {
  'token-mean': { name: 'token-mean', summary: 'Mean over all response tokens of the mini-batch (GRPO default).', fn: tokenMean },
  'seq-mean-token-mean': {
    name: 'seq-mean-token-mean',
    summary: "Mean over turn rows of each row's token mean (GRPO_ST, GSPO, SAMPO).",
    fn: seqMeanTokenMean,
  },
  'seq-mean-token-sum': {
    name: 'seq-mean-token-sum',
    summary: "Mean over rows with a token of each row's token sum (Dr.GRPO; verl since #3915).",
    fn: seqMeanTokenSum,
  },
  'seq-mean-token-sum-norm': {
    name: 'seq-mean-token-sum-norm',
    summary: 'Token sum of the batch divided by the padded response width.',
    fn: seqMeanTokenSumNorm,
  },
});

/** Aggregate with a named mode; throws listing the known modes on an unknown name. */
export function aggregate(name: string, lossMat: Parameters<AggregationFn>[0], mask: Parameters<AggregationFn>[1]) {
  return AGGREGATIONS.get(name).fn(lossMat, mask);
}

const DENOMINATORS: Record<AggregationName, DenominatorFn> = {
  'token-mean': tokenMeanDenominator,
  'seq-mean-token-mean': seqMeanTokenMeanDenominator,
  'seq-mean-token-sum': seqMeanTokenSumDenominator,
  'seq-mean-token-sum-norm': seqMeanTokenSumNormDenominator,
};

/**
 * The denominator aggregation `name` divides a whole mini-batch by, from its rows' response-token counts and
 * padded width; passed as `wholeDenominator` to every chunk of a mini-batch split for memory.
 */
export function wholeDenominator(name: string, rowTokens: readonly number[], width: number): number {
  AGGREGATIONS.get(name);
  return DENOMINATORS[name as AggregationName](rowTokens, width);
}
