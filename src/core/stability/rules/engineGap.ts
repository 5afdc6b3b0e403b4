/**
 * engine_gap: the rollout engine and the trainer disagreeing more and more about the same tokens. Since 2025 the field's main named cause of collapse: vLLM/SGLang rollouts against an FSDP/Megatron
 * trainer (open-instruct #1473: a rollout/trainer log-prob gap that keeps rising; verl's rollout_corr metrics).
 *
 * Reads whichever gap metrics the run logs: this lab's `mismatch/*` (onnxruntime rollouts vs tfjs training), verl's
 * `rollout_corr/kl`, `…/k3_kl`, `…/log_ppl_abs_diff` (kept under their own names by an import) and
 * `training/rollout_probs_diff_{mean,max}`. Two findings:
 * - rising: a key's mean over `smooth` steps at or above riseFactor × its own start (the median of its first
 *   baselineSteps points) and above that start by riseMin (nats, or probability for the probs-diff keys), for
 *   `patience` steps; critical at riseCritical ×.
 * - far apart at once (per-token means only): a single point at or above absCriticalNats (a KL or |Δ log-ppl|
 *   per token) or absCriticalProb (mean |Δp|) is critical without a baseline — the engines are not running the
 *   same policy at all (verl-jsonl HanlinDu, step 1: rollout_corr/kl 9.97 nats, trainer perplexity 4.5e6 against
 *   the rollout's 3.65). Keys over it at one step are one alert, the keys listed.
 * The absolute levels of this lab's own `mismatch/*` keys stay with train_inference_mismatch.
 *
 * Not judged on a lab run with rollout.policyLag > 0 (hints.policyLag): its rollouts come from the policy of k
 * updates ago, so every gap key (rollout_corr/* here, still logged, as verl's are about the behaviour policy) holds
 * the policy's own k-update move, not two engines disagreeing. Its start is no engine baseline either: step 1 samples
 * θ_0 with θ_0 (rollout_corr/kl 5e-9 nats in a level-3 sokoban run, 0.07 at step 2 from one update), so a policy
 * that moves faster per step reads as a rising engine gap. That move is kl_step's (actor/ppo_kl) and the lag keys'
 * (offpolicy/lag_*) to show.
 */
import { isMetricKey } from '../../../shared/metrics';
import { Baseline, Cadence, Episode, Streak, Window, fmt } from '../stats';
import { at, firstPoints, level, lazyText } from '../quote';
import { finite, type Finding, type RuleDef } from '../types';

type Unit = 'nats' | 'prob';
interface GapKey {
  readonly key: string;
  readonly unit: Unit;
  /** Judged on its level alone (a per-token mean of a source's gap metric). */
  readonly absolute: boolean;
}

export const ENGINE_GAP_KEYS: readonly GapKey[] = [
  { key: 'mismatch/logprob_abs_mean', unit: 'nats', absolute: false },
  { key: 'mismatch/logprob_abs_max', unit: 'nats', absolute: false },
  { key: 'rollout_corr/kl', unit: 'nats', absolute: true },
  { key: 'rollout_corr/k3_kl', unit: 'nats', absolute: true },
  { key: 'rollout_corr/log_ppl_abs_diff', unit: 'nats', absolute: true },
  { key: 'training/rollout_probs_diff_mean', unit: 'prob', absolute: true },
  { key: 'training/rollout_probs_diff_max', unit: 'prob', absolute: false },
];

/** The gap keys read under a source framework's own names (verl's, kept as logged by an import) that the catalog lacks. */
export const SOURCE_NAMED_KEYS: ReadonlySet<string> = new Set(ENGINE_GAP_KEYS.map((k) => k.key).filter((k) => !isMetricKey(k)));

export const engineGapRule: RuleDef = {
  id: 'engine_gap',
  title: 'Rollout/trainer gap rising',
  description:
    "The rollout engine's and the trainer's probabilities for the same tokens drift apart (or are far apart from the start): importance ratios are wrong before any update.",
  metrics: ENGINE_GAP_KEYS.map((k) => k.key),
  needs: { anyOf: ENGINE_GAP_KEYS.map((k) => k.key) },
  enabled: (c) => c.engineGap.enabled,
  create(cfg, hints) {
    if (hints.policyLag > 0) return { feed: () => [] };
    const c = cfg.engineGap;
    const st = ENGINE_GAP_KEYS.map((g) => ({
      g,
      cad: new Cadence(),
      base: new Baseline(c.baselineSteps),
      win: new Window(c.smooth),
      streak: new Streak(),
      ep: new Episode('up'),
    }));
    return {
      feed(rec) {
        const out: Finding[] = [];
        const far: { key: string; value: number; unit: Unit }[] = [];
        for (const s of st) {
          const v = finite(rec, s.g.key);
          if (v === undefined) continue;
          s.cad.push(rec.step);
          s.base.resize(s.cad.points(c.baselineSteps));
          s.win.resize(s.cad.points(c.smooth));
          s.base.push(v);
          s.win.push(v, rec.step);
          s.ep.push(rec.step, v);
          if (s.g.absolute && v >= (s.g.unit === 'nats' ? c.absCriticalNats : c.absCriticalProb))
            far.push({ key: s.g.key, value: v, unit: s.g.unit });
          const b = s.base.get();
          if (b === null || !s.win.full) continue;
          const sm = s.win.mean();
          const minRise = s.g.unit === 'nats' ? c.riseMinNats : c.riseMinProb;
          const limit = Math.max(c.riseFactor * b, b + minRise);
          const rising = sm >= limit;
          if (rising) s.ep.hold(s.win.size, (x) => x >= limit);
          else s.ep.end();
          if (s.streak.update(rising) < s.cad.points(c.patience)) continue;
          const top = s.ep.extreme!;
          const last = { step: rec.step, value: v };
          const unit = s.g.unit === 'nats' ? ' nats' : '';
          const key = s.g.key;
          const pts = s.win.points();
          const baseN = s.base.n;
          out.push({
            metric: key,
            severity: sm >= c.riseCritical * b && sm >= b + minRise ? 'critical' : 'warning',
            message: lazyText(
              () =>
                `The rollout/trainer gap ${key} is rising: ${level(key, sm, pts)}, ${fmt(sm / b)}× its start ${fmt(b)}${unit} (${firstPoints(baseN)})${top.step !== last.step ? `; highest ${at(key, top)}` : ''}; latest ${at(key, last)}.`,
            ),
            hint: hints.engineGap,
            peak: top,
            threshold: limit,
            onset: s.ep.onset,
            quotes: [top, last],
          });
        }
        if (far.length > 0) {
          const first = far[0];
          const step = rec.step;
          const listed = lazyText(() => far.map((f) => `${f.key} ${at(f.key, { step, value: f.value })}`).join(', '));
          out.push({
            metric: first.key,
            severity: 'critical',
            message: lazyText(
              () =>
                `The rollout engine and the trainer are far apart: ${listed()}, at or above the limit ${fmt(first.unit === 'nats' ? c.absCriticalNats : c.absCriticalProb)}${first.unit === 'nats' ? ' nats per token' : ' (mean probability difference)'}: the two engines are not running the same policy.`,
            ),
            hint: hints.engineGap,
            peak: { step: rec.step, value: first.value },
            threshold: first.unit === 'nats' ? c.absCriticalNats : c.absCriticalProb,
            quotes: [{ step: rec.step, value: first.value }],
          });
        }
        return out;
      },
    };
  },
};
