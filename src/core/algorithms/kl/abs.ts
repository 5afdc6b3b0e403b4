import type * as tf from '@tensorflow/tfjs-core';
import { absTorch } from '../tensor';
import type { KlFn } from './types';

/** `abs`: |log π_θ − log π_ref| (gradient sign(·), 0 at equality as in torch). */
export const absKl: KlFn = (logProb, refLogProb) => ({ value: absTorch(logProb.sub(refLogProb)) as tf.Tensor2D, metrics: {} });
