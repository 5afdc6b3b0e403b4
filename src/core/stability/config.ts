/**
 * Thresholds of the collapse detector, one block per rule (spec §4: the sources give no thresholds; these
 * defaults were set on synthetic streams shaped like the paper's curves — see the calibration notes in the
 * report), then checked on real verl / TRL / W&B runs (README.md in this folder). Override any field with
 * `resolveDetectorConfig({ gradNormSpike: { factor: 8 } })`.
 *
 * Units: `smooth`, `patience`, `baselineSteps`, `minSteps` and `crashSteps` are training steps; each rule turns
 * them into logged points from its metric's own step numbers (stats.ts Cadence), so a TRL run logging every 10
 * steps is not asked for 30 steps of patience. Validation windows (`valSmooth`) count validations; the
 * grad-norm `window` / `minHistory`, `noiseWindow`, `jumpWindow` and `mergeGap` count logged points.
 */
export interface DetectorConfig {
  /**
   * Observations of its metric an alert may go quiet for and still be the same alert (a new finding within this
   * gap extends it). Counted in the metric's own points, so sparse validation metrics merge too.
   */
  readonly mergeGap: number;
  /** Steps of the metric shown before an alert's first step in its evidence window. */
  readonly evidenceBefore: number;
  /** Most points in an evidence window. */
  readonly evidenceMax: number;

  readonly nonFinite: {
    readonly enabled: boolean;
    /** Metric groups whose non-finite values are not reported (throughput ratios divide by tiny times). */
    readonly ignoreGroups: readonly string[];
  };
  readonly gradNormSpike: {
    readonly enabled: boolean;
    /** Rolling window (steps) of the median the gradient norm is compared with. */
    readonly window: number;
    /** Finite values needed before the rule judges (too little history = no baseline). */
    readonly minHistory: number;
    /** Warn when grad-norm > factor × rolling median. Lower it to catch smaller spikes (more false alarms). */
    readonly factor: number;
    /**
     * Critical when the spike lasts `sustainCritical` logged points, or when it is above criticalFactor × the
     * rolling median on two points in a row. A single spike, however tall, is a warning: healthy real runs have
     * them (verl Qwen2.5-0.5B PPO, ../shared/data/real-runs 1a: 66 at step 16 against a median of 2.1, 31×, and
     * the run trained on to 0.71 score), while the lab's tolerant-clipping collapse keeps growing step after step.
     */
    readonly criticalFactor: number;
    readonly sustainCritical: number;
    /** Ignore spikes below this absolute norm (a tiny median makes any blip look big). */
    readonly minValue: number;
  };
  readonly validityDrop: {
    readonly enabled: boolean;
    /** Steps averaged before comparing (rollout noise). */
    readonly smooth: number;
    /** Steps before the running max counts. */
    readonly minSteps: number;
    /** Warn when the smoothed ratio is this far (absolute) below its running max; critical at `criticalDrop`. */
    readonly warnDrop: number;
    readonly criticalDrop: number;
    /** Consecutive steps the drop must hold. */
    readonly patience: number;
  };
  readonly successCollapse: {
    readonly enabled: boolean;
    /** Steps (validations for val/…) averaged before comparing; longer = fewer false alarms, later alerts. */
    readonly smooth: number;
    /**
     * Validations without val/episodes — external runs (verl, TRL, W&B log no held-out count) and lab runs
     * recorded before it was logged — cannot take the binomial test. Their fallback: the mean of the last
     * valSmooth validations against its best, a fall of warnFrac (critical criticalFrac) of the best, beyond noiseZ
     * standard errors of the validations' own noise (which needs 5 of them), one validation of patience.
     */
    readonly valSmooth: number;
    /**
     * A validation logged with its episode count (val/episodes) is compared with the best earlier one directly: a
     * two-proportion z-test, firing at z ≥ valZ. Sparse validations (every 5–10 steps) never fill a smoothing
     * window early enough; each is already a mean over n held-out episodes, so its binomial noise is known.
     */
    readonly valZ: number;
    /** Success must have reached this peak before a fall counts (learning must have happened). */
    readonly minPeak: number;
    /** Warn when smoothed success ≤ (1 − warnFrac) × peak; critical at (1 − criticalFrac) × peak. */
    readonly warnFrac: number;
    readonly criticalFrac: number;
    /** Reward: warn when it gave back this share of its gain over the first steps' baseline… */
    readonly rewardGiveBack: number;
    /** …and the gain was at least this many reward units. */
    readonly rewardMinGain: number;
    /**
     * And in every case the fall must exceed noiseZ standard errors of the difference of two smoothed means,
     * with the per-step noise measured from the metric itself (see NoiseEstimator): small batches are noisy.
     */
    readonly noiseZ: number;
    /** Recent steps the noise is measured over. */
    readonly noiseWindow: number;
    readonly patience: number;
  };
  readonly entropyShift: {
    readonly enabled: boolean;
    /** First steps whose median is the baseline. */
    readonly baselineSteps: number;
    readonly smooth: number;
    /**
     * Collapse: smoothed entropy < collapseFrac × baseline. 0.25, calibrated on this lab's recorded sokoban runs
     * (tests/fixtures/runs): calm runs of 30–40 steps (SAMPO, GRPO, CISPO) never went below 0.76 × their baseline,
     * while a SAPO run that collapsed onto one malformed answer (grad-norm → 0.001) fell to 0.11 × — which the
     * first setting, 0.1, missed.
     */
    readonly collapseFrac: number;
    /** Blow-up: smoothed entropy > blowupFactor × baseline and > baseline + blowupMinNats. */
    readonly blowupFactor: number;
    readonly blowupMinNats: number;
    /**
     * Warning before the blow-up: smoothed entropy > blowupWarnFactor × baseline and > baseline + blowupWarnNats.
     * The real verl Qwen2-7B "recommended" run drifted 0.24 → 0.68 over 70 steps (a warning sign by its README);
     * the nats floor keeps a converged 7B model's 0.02 → 0.05 wobble quiet.
     */
    readonly blowupWarnFactor: number;
    readonly blowupWarnNats: number;
    readonly patience: number;
    /**
     * Steps over which a fall below collapseFrac × the recent level counts as a crash. Healthy real runs never
     * fell below 0.5 × their level of 10 steps before (worst 0.497, verl Qwen2-7B, step 35); collapses crash
     * 0.57 → 0.033 in 3 steps (lab SAPO) or 1.03 → 0.11 in 10 (TRL-DAPO). A slow fall is only a collapse with a sign
     * (signs.ts) that learning stopped.
     */
    readonly crashSteps: number;
    /** Sign: the smoothed gradient norm at or below this share of its early level (a dead gradient). */
    readonly deadGradFrac: number;
    /** Sign: a score, success or reward smoothed at or below (1 − scoreFallFrac) × its best. */
    readonly scoreFallFrac: number;
  };
  readonly klDrift: {
    readonly enabled: boolean;
    /** |actor/ppo_kl| (nats) above which the update drifts off-policy: warn / critical. */
    readonly ppoKlWarn: number;
    readonly ppoKlCritical: number;
    /** actor/kl_loss: warn when smoothed > max(klLossFloor, klLossFactor × baseline). */
    readonly klLossFactor: number;
    readonly klLossFloor: number;
    readonly baselineSteps: number;
    readonly smooth: number;
    readonly patience: number;
  };
  readonly clipFracDrift: {
    readonly enabled: boolean;
    readonly smooth: number;
    /** Absolute clip fraction: warn / critical. */
    readonly warn: number;
    readonly critical: number;
    /** Or relative: smoothed > factor × baseline and above `relativeFloor`. */
    readonly factor: number;
    readonly relativeFloor: number;
    readonly baselineSteps: number;
    readonly patience: number;
  };
  readonly deadSignal: {
    readonly enabled: boolean;
    /** Share of zero-variance groups at or above which a step carries (almost) no GRPO signal. */
    readonly share: number;
    /** Consecutive steps before warning. */
    readonly patience: number;
  };
  readonly lengthRunaway: {
    readonly enabled: boolean;
    readonly smooth: number;
    /** Share of responses hitting the max length: warn / critical. */
    readonly clipWarn: number;
    readonly clipCritical: number;
    /**
     * The clip-ratio thresholds count only when the ratio also rose by clipRise over its own start (the lowest
     * share of its first baselineSteps steps): verl runs
     * with a tight cap begin with most responses at it and shorten them as they learn (play-verl GRPO: 0.86 at
     * step 1 → 0.13), which is not a runaway.
     */
    readonly clipRise: number;
    /**
     * Mean response length: warn after `patience` logged points in a row above jumpFactor × the median of the last
     * jumpWindow calm points — the run's own recent length, so a 32-token lab run and a 1024-token verl run are
     * judged alike (verl Qwen2-7B: 155 → 370 tokens over steps 97–100, its held-out score falling 0.84 → 0.69).
     * Slow growth against the run's start is not judged (lengthRunaway.ts says why).
     */
    readonly jumpFactor: number;
    readonly jumpWindow: number;
    readonly baselineSteps: number;
    readonly patience: number;
    /**
     * Responses at the cap with no reward: logged points in a row with the share at the cap ≥ clipCritical (risen
     * by clipRise from the run's lowest first share) while the step's score or success is 0. No baseline wait: a
     * run that breaks like this (verl-jsonl HanlinDu, 61 → 512 tokens, clip ratio 1.0, score 0) may log 3 steps.
     */
    readonly capNoRewardPatience: number;
  };
  readonly mismatch: {
    readonly enabled: boolean;
    /** max |log π_rollout − log π_trainer| (nats): warn / critical. */
    readonly maxWarn: number;
    readonly maxCritical: number;
    /** mean |…| (nats): warn. */
    readonly meanWarn: number;
    readonly patience: number;
  };
  /** engine_gap (rules/engineGap.ts): the rollout/trainer gap rising against its own start, or far apart at once. */
  readonly engineGap: {
    readonly enabled: boolean;
    /** First logged points whose median is a gap key's start. */
    readonly baselineSteps: number;
    readonly smooth: number;
    readonly patience: number;
    /** Rising: the smoothed gap at or above riseFactor × its start (critical at riseCritical ×)… */
    readonly riseFactor: number;
    readonly riseCritical: number;
    /** …and above the start by at least this much: nats for log-prob gaps, probability for the probs-diff keys. */
    readonly riseMinNats: number;
    readonly riseMinProb: number;
    /**
     * Far apart at once: one point of a per-token mean gap (verl's rollout_corr/kl, k3_kl, log_ppl_abs_diff) at or
     * above this many nats, or of training/rollout_probs_diff_mean at or above absCriticalProb, is critical. A
     * KL of 1 nat per token between the engines means they sample from different policies.
     */
    readonly absCriticalNats: number;
    readonly absCriticalProb: number;
  };
  /** response_collapse (rules/responseCollapse.ts): responses collapsing onto one answer, token or template. */
  readonly responseCollapse: {
    readonly enabled: boolean;
    readonly baselineSteps: number;
    readonly smooth: number;
    readonly patience: number;
    /** Identical-response share: warn at or above this (critical at identicalCritical) and up identicalRise from its start. */
    readonly identicalWarn: number;
    readonly identicalCritical: number;
    readonly identicalRise: number;
    /** Distinct bigrams at or below distinctFrac × their start: warn; at distinctCriticalFrac ×: critical. */
    readonly distinctFrac: number;
    readonly distinctCriticalFrac: number;
    /** Prompt–response mutual information at or below miFrac × its start (a start of at least miMinStart nats). */
    readonly miFrac: number;
    readonly miMinStart: number;
  };
  /** format_hacking (rules/formatHacking.ts): KL to the reference rising with a format-only reward gain. */
  readonly formatHacking: {
    readonly enabled: boolean;
    readonly baselineSteps: number;
    readonly smooth: number;
    readonly patience: number;
    /** The format share gained at least this much (absolute) over its start… */
    readonly formatGain: number;
    /** …while the task share gained at most this much… */
    readonly taskGainMax: number;
    /** …and KL to the reference is at or above max(klFloor, klFactor × its start). */
    readonly klFactor: number;
    readonly klFloor: number;
  };
}

export const DEFAULT_DETECTOR_CONFIG: DetectorConfig = {
  mergeGap: 5,
  evidenceBefore: 10,
  evidenceMax: 40,
  nonFinite: { enabled: true, ignoreGroups: ['throughput'] },
  gradNormSpike: { enabled: true, window: 20, minHistory: 5, factor: 5, criticalFactor: 20, sustainCritical: 3, minValue: 1e-3 },
  validityDrop: { enabled: true, smooth: 3, minSteps: 3, warnDrop: 0.15, criticalDrop: 0.4, patience: 2 },
  successCollapse: {
    enabled: true,
    smooth: 10,
    valSmooth: 3,
    valZ: 3,
    minPeak: 0.2,
    warnFrac: 0.5,
    criticalFrac: 0.8,
    rewardGiveBack: 0.6,
    rewardMinGain: 0.5,
    noiseZ: 5,
    noiseWindow: 50,
    patience: 5,
  },
  entropyShift: {
    enabled: true,
    baselineSteps: 5,
    smooth: 3,
    collapseFrac: 0.25,
    blowupFactor: 3,
    blowupMinNats: 0.5,
    blowupWarnFactor: 2,
    blowupWarnNats: 0.2,
    patience: 3,
    crashSteps: 10,
    deadGradFrac: 0.1,
    scoreFallFrac: 0.25,
  },
  klDrift: {
    enabled: true,
    ppoKlWarn: 0.05,
    ppoKlCritical: 0.5,
    klLossFactor: 10,
    klLossFloor: 0.5,
    baselineSteps: 5,
    smooth: 3,
    patience: 2,
  },
  clipFracDrift: { enabled: true, smooth: 3, warn: 0.3, critical: 0.6, factor: 5, relativeFloor: 0.15, baselineSteps: 5, patience: 3 },
  deadSignal: { enabled: true, share: 0.95, patience: 5 },
  lengthRunaway: {
    enabled: true,
    smooth: 3,
    clipWarn: 0.3,
    clipCritical: 0.7,
    clipRise: 0.2,
    jumpFactor: 1.5,
    jumpWindow: 20,
    baselineSteps: 5,
    patience: 3,
    capNoRewardPatience: 2,
  },
  mismatch: { enabled: true, maxWarn: 1, maxCritical: 5, meanWarn: 0.05, patience: 2 },
  engineGap: {
    enabled: true,
    baselineSteps: 5,
    smooth: 3,
    patience: 3,
    riseFactor: 3,
    riseCritical: 10,
    riseMinNats: 0.01,
    riseMinProb: 0.005,
    absCriticalNats: 1,
    absCriticalProb: 0.2,
  },
  responseCollapse: {
    enabled: true,
    baselineSteps: 5,
    smooth: 3,
    patience: 3,
    identicalWarn: 0.5,
    identicalCritical: 0.9,
    identicalRise: 0.3,
    distinctFrac: 0.3,
    distinctCriticalFrac: 0.1,
    miFrac: 0.3,
    miMinStart: 0.05,
  },
  formatHacking: {
    enabled: true,
    baselineSteps: 5,
    smooth: 5,
    patience: 3,
    formatGain: 0.3,
    taskGainMax: 0.05,
    klFactor: 5,
    klFloor: 0.05,
  },
};

export type DetectorConfigOverrides = {
  readonly [K in keyof DetectorConfig]?: DetectorConfig[K] extends object ? Partial<DetectorConfig[K]> : DetectorConfig[K];
};

/** Defaults with `overrides` merged per rule block; unknown blocks or fields are an error naming them. */
export function resolveDetectorConfig(overrides: DetectorConfigOverrides = {}): DetectorConfig {
  const out: Record<string, unknown> = { ...DEFAULT_DETECTOR_CONFIG };
  for (const [k, v] of Object.entries(overrides)) {
    if (!(k in DEFAULT_DETECTOR_CONFIG)) {
      throw new Error(`detector config: unknown field "${k}"; known: ${Object.keys(DEFAULT_DETECTOR_CONFIG).join(', ')}`);
    }
    const def = (DEFAULT_DETECTOR_CONFIG as unknown as Record<string, unknown>)[k];
    if (def !== null && typeof def === 'object' && !Array.isArray(def)) {
      for (const f of Object.keys(v as object)) {
        if (!(f in (def as object)))
          throw new Error(`detector config: unknown field "${k}.${f}"; known: ${Object.keys(def as object).join(', ')}`);
      }
      out[k] = { ...(def as object), ...(v as object) };
    } else {
      out[k] = v;
    }
  }
  return out as unknown as DetectorConfig;
}
