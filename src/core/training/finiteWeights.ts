/**
 * Non-finite policy weights. AdamW refuses any update whose result is non-finite
 * (adamw.ts), so weights only go NaN/Infinity when they were loaded that way (a checkpoint saved by an older
 * build, a damaged warm start). Training on from there produces nothing but NaN, so the trainer checks the
 * weights it starts from and after every step, and stops the run with this error; the session turns it into a
 * critical `non_finite` alert on the metric below and the run's failure reason. No tfjs here: the session side
 * (jobRunner) recognises the error without loading it; the check itself is `assertFiniteWeights` (adamw.ts).
 */
/** The alert's metric name (a pseudo-metric: the weights themselves, not a logged key). */
export const NON_FINITE_WEIGHTS_METRIC = 'actor/weights';

export class NonFiniteWeightsError extends Error {
  constructor(
    readonly step: number,
    readonly variable: string,
    readonly badValues: number,
    readonly totalValues: number,
  ) {
    super(
      `the policy weights became non-finite at step ${step} (${badValues} of ${totalValues} values of ${variable} are NaN or infinite); ` +
        'the run stops here because every later update would only spread them. Resume from an earlier checkpoint, or start a new run; ' +
        'the alert names the setting to check',
    );
    this.name = 'NonFiniteWeightsError';
  }
}
