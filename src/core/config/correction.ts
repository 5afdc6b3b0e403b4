/**
 * The run's rollout-correction settings (algorithm.rolloutCorrection, verl algorithm.rollout_correction) as the
 * trainer uses them. A config stored before the fields existed has none of them and trains without correction.
 */
import {
  parseRsOptions,
  parseRsThresholds,
  ROLLOUT_RS,
  RolloutCorrectionError,
  type BypassLossType,
  type RolloutCorrectionParams,
} from '../algorithms/correction/index';
import type { ConfigIssue, RunConfig } from './types';

export interface RunCorrection {
  /** verl's parameters (null = that part off). */
  readonly params: RolloutCorrectionParams;
  /** Bypass mode: π_old := rollout log-probs and the loss is `lossType`. */
  readonly bypass: boolean;
  readonly lossType: BypassLossType;
  /** Decoupled mode with IS or RS on: weights / masks are computed once per batch from π_old vs π_rollout. */
  readonly decoupled: boolean;
}

export function rolloutCorrectionOf(config: RunConfig): RunCorrection {
  const rc = config.algorithm.rolloutCorrection;
  const is = rc?.is ?? 'off';
  const rs = (rc?.rs ?? '').trim();
  const params: RolloutCorrectionParams = {
    rolloutIs: is === 'off' ? null : is,
    rolloutIsThreshold: rc?.isThreshold ?? 2.0,
    rolloutIsThresholdLower: rc?.isThresholdLower ?? 0.5,
    rolloutIsBatchNormalize: rc?.isBatchNormalize ?? false,
    rolloutRs: rs === '' ? null : rs,
    rolloutRsThreshold: rs === '' ? null : (rc?.rsThreshold ?? ''),
  };
  const bypass = rc?.bypassMode ?? false;
  return {
    params,
    bypass,
    lossType: rc?.lossType ?? 'ppo_clip',
    decoupled: !bypass && (params.rolloutIs !== null || params.rolloutRs !== null),
  };
}

/** Cross-field rules of algorithm.rolloutCorrection; each message says the fix. */
export function correctionIssues(c: RunConfig): ConfigIssue[] {
  const rc = c.algorithm.rolloutCorrection;
  if (!rc) return [];
  const out: ConfigIssue[] = [];
  const add = (field: string, value: unknown, message: string) =>
    out.push({ field: `algorithm.rolloutCorrection.${field}`, value, message });
  const rs = rc.rs.trim();
  if (rs !== '') {
    try {
      parseRsThresholds(parseRsOptions(rs, ROLLOUT_RS.names), rc.rsThreshold.trim() === '' ? null : rc.rsThreshold);
    } catch (e) {
      if (!(e instanceof RolloutCorrectionError)) throw e;
      // The catalog speaks verl's names; the config's are rs / rsThreshold.
      const message = e.message
        .replace(/rollout_rs_threshold/g, 'algorithm.rolloutCorrection.rsThreshold')
        .replace(/rollout_rs\b/g, 'algorithm.rolloutCorrection.rs');
      const aboutOptions = /unknown rollout_rs option|names no option/.test(e.message);
      add(aboutOptions ? 'rs' : 'rsThreshold', aboutOptions ? rc.rs : rc.rsThreshold, message);
    }
  } else if (rc.rsThreshold.trim() !== '') {
    add(
      'rsThreshold',
      rc.rsThreshold,
      'rsThreshold has no effect without rejection options; set algorithm.rolloutCorrection.rs (e.g. seq_mean_k1) or clear rsThreshold',
    );
  }
  if (rc.isBatchNormalize && (rc.is === 'off' || rc.is === 'icepop')) {
    add(
      'isBatchNormalize',
      true,
      rc.is === 'off'
        ? 'isBatchNormalize normalises IS weights, but algorithm.rolloutCorrection.is is off; set is=token or is=sequence, or isBatchNormalize=false'
        : 'IcePop has no batch normalisation (neither slime nor OpenRLHF defines one); set isBatchNormalize=false or is=token/sequence',
    );
  }
  if (rc.bypassMode) {
    if (c.algorithm.policyLoss.mode !== 'vanilla') {
      add(
        'bypassMode',
        true,
        `bypass mode replaces the policy loss with ${rc.lossType} (verl sets loss_mode=bypass_mode), so algorithm.policyLoss.mode = "${c.algorithm.policyLoss.mode}" would be ignored; set algorithm.policyLoss.mode=vanilla or bypassMode=false`,
      );
    }
    if (c.algorithm.policyLoss.seqMask.enabled) {
      add(
        'bypassMode',
        true,
        'bypass mode has its own rejection (rs) and ignores sequence masking; set algorithm.policyLoss.seqMask.enabled=false (use rs=seq_mean_k1 instead) or bypassMode=false',
      );
    }
    if (c.algorithm.advantage.estimator === 'empg') {
      add(
        'bypassMode',
        true,
        "EMPG needs the trainer's π_old entropies, and bypass mode skips that pass; pick another advantage.estimator or set bypassMode=false",
      );
    }
  } else {
    if (rc.lossType !== 'ppo_clip')
      add(
        'lossType',
        rc.lossType,
        'lossType chooses the bypass-mode loss; set algorithm.rolloutCorrection.bypassMode=true or lossType=ppo_clip',
      );
    if ((rc.is !== 'off' || rs !== '') && c.compute.logProbEngine === 'onnxruntime') {
      add(
        'is',
        rc.is,
        "rollout correction compares the trainer's log-probs with the rollout engine's, but compute.logProbEngine=onnxruntime takes π_old from the rollout engine (the ratio is 1); set compute.logProbEngine=trainer or bypassMode=true",
      );
    }
  }
  return out;
}
