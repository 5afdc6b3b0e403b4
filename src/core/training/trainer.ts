/**
 * The trainer, top to bottom (spec §0–§2):
 *
 *   warm start (behaviour cloning on expert turns, or a shipped BC checkpoint) — its weights are π_ref
 *   for each RL step:
 *     1. rollout B tasks × G (dynamic-filtering rounds when the preset enables them, past the cold start)
 *     2. env rewards → row scores / step returns with the invalid penalty (inside the advantage estimators)
 *     3. old log-probs (recomputed by the trainer engine, spec §6.1-4) and reference log-probs
 *     4. advantages (algorithm catalog)
 *     5. one epoch over SEQUENTIAL mini-batches — later mini-batches are off-policy (the paper's drift) —
 *        AdamW, global grad-norm clip, non-finite gradient or result → update skipped and counted
 *     6. metrics (every catalog key, NaN where n/a), validation every N steps, checkpoint every N steps
 *
 * Determinism: every random choice draws from named seeded streams whose states are checkpointed; task seeds are
 * a pure function of (seed, task index); validation uses a stream derived from (seed, step). Wall-clock values
 * (perf/* except perf/total_tokens) are the only non-deterministic outputs.
 */
import * as tf from '@tensorflow/tfjs';
import { Rng, hashSeed } from '../util/rng';
import type { RunConfig } from '../config/types';
import { PolicyModel, resolveModelConfig, weightSpecs, type ModelConfig, type ModelWeights } from '../agent/model';
import { Tokenizer } from '../agent/tokenizer';
import { deserializeModel } from '../agent/checkpoint';
import { TfjsRolloutEngine } from '../agent/tfjsEngine';
import type { RolloutEngine } from '../agent/engine';
import type { PolicyShape, PolicyWeights, PromptCodec, TrainerPolicy } from '../agent/policy';
import { runRollout, type RolloutResult, type TrajectoryInfo, type TurnRow } from '../agent/rollout';
import { mismatchStats } from '../agent/mismatch';
import { ADVANTAGES, type AdvantageParams, type TurnRow as AdvRow } from '../algorithms/advantages/index';
import { actorLoss, inRewardKl, type ActorLossParams } from '../algorithms/losses/actor-loss';
import { pgAggregation, sequenceMask } from '../algorithms/losses/index';
import { wholeDenominator } from '../algorithms/aggregation/index';
import { offPolicyMetrics, rejectionMask, rolloutCorrection } from '../algorithms/correction/index';
import { rolloutCorrectionOf, type RunCorrection } from '../config/correction';
import { stopGradient } from '../algorithms/tensor';
import { finishFiltering, offerRound, startFiltering, overlongPenalty, type RolledGroup } from '../algorithms/filtering/index';
import { heldOutSeeds } from '../envs/index';
import { validationTaskKey } from '../../shared/metrics';
import type { Trajectory } from '../../shared/api';
import { AdamW, assertFiniteWeights } from './adamw';
import { accumulateGrads, activationBudgetOf, chunkRows } from './chunking';
import {
  LOGPROB_CHUNK,
  PG_MASK_MEANS,
  SUMMED_METRICS,
  broadcastRows,
  combineShards,
  padded,
  pgShare,
  responseRows,
  shardRanges,
  shardRow,
  trainerLogProbs,
  type GradientPool,
} from './shards';
import { fingerprint, makeCheckpoint, readCheckpoint, type TrainerState } from './checkpoint';
import { encodePrompt, makeEnvFactory, makePromptBuilder, rlTaskSeed, type EnvSpec } from './data';
import { evaluatePolicy } from './evaluate';
import { StepMetrics, maxOf, mean, minOf, setMetric, std } from './metrics';
import { responseDiversity } from './diversity';
import { decodeTensors, encodeTensors, type NamedTensors } from './tensorio';
import type { EvalSummary, StepPart, TrainerCheckpoint, TrainerDeps, TrainerHooks, TrainingResult } from './types';
import { envSpecOf, modelSpecOf, warmStartRecipe } from './warmstart';
import { HfRun, hfSourceOf } from './hfRun';

export { envSpecOf, modelSpecOf };

/** Thrown inside a step when `hooks.interrupted` answers true; runTraining abandons the step and ends 'stopped'. */
class StepInterrupted extends Error {
  constructor(readonly part: StepPart) {
    super(`stopped during the ${part}`);
  }
}

export async function runTraining(
  config: RunConfig,
  deps: TrainerDeps,
  hooks: TrainerHooks,
  resume?: TrainerCheckpoint,
): Promise<TrainingResult> {
  const { clock } = deps;
  const t0 = clock.now();
  const spec = envSpecOf(config);
  const cfgHash = fingerprint(config);
  const totalSteps = config.training.steps;

  // ── Policy, tokenizer and π_ref ─────────────────────────────────────────────────────────────────────────
  // The lab's own model (`lab`, also `model`) or a Hugging Face checkpoint (`hf`, model.source = hf:PATH): the step
  // below sees only the TrainerPolicy and PromptCodec contracts; what only the lab model has (onnxruntime engines,
  // the gradient worker pool, the policy lag, a shipped or cloned warm start) is refused for hf runs by validation.
  let tok: Tokenizer | PromptCodec;
  let model: TrainerPolicy;
  let lab: PolicyModel | null = null;
  let hf: HfRun | null = null;
  let refWeights: ModelWeights | null = null;
  let refSource: string;
  let state: TrainerState | null = null;
  let optimState: NamedTensors | null = null;
  const needRef = config.algorithm.kl.enabled || config.algorithm.kl.inReward;
  if (hfSourceOf(config) !== null) {
    const ck = resume ? readCheckpoint(resume) : null;
    if (ck && ck.state.configHash !== cfgHash) {
      throw new Error(
        `resume: the checkpoint belongs to a different config (fingerprint ${ck.state.configHash}, this config ${cfgHash}); resume with the run's own config`,
      );
    }
    hf = await HfRun.open(
      config,
      deps.loadHfModel,
      needRef,
      ck ? { policy: ck.policy, identity: ck.state.hfModel } : null,
      deps.createLlmRolloutEngine,
    );
    if (hf.engineFallback) hooks.onStatus({ phase: 'rl', step: 0, totalSteps, message: hf.engineFallback });
    model = hf.policy;
    tok = hf.codec;
    refSource = ck ? ck.state.refSource : hf.refSource;
    if (ck) {
      state = ck.state;
      optimState = hf.optimFromStable(ck.optim);
      hooks.onStatus({ phase: 'rl', step: ck.state.step, totalSteps, message: `resumed at step ${ck.state.step}` });
    }
  } else if (resume) {
    const ck = readCheckpoint(resume);
    if (ck.state.configHash !== cfgHash) {
      throw new Error(
        `resume: the checkpoint belongs to a different config (fingerprint ${ck.state.configHash}, this config ${cfgHash}); resume with the run's own config`,
      );
    }
    const tokFile = resume.files['tokenizer.json'];
    if (!tokFile) throw new Error('resume: checkpoint lacks tokenizer.json');
    const labTok = Tokenizer.fromJSON(JSON.parse(new TextDecoder().decode(tokFile)));
    tok = labTok;
    const mcfg = resolveModelConfig(modelSpecOf(config), labTok.size);
    model = lab = PolicyModel.fromWeights(fromNamed(mcfg, ck.policy));
    refWeights = fromNamed(mcfg, ck.ref);
    refSource = ck.state.refSource;
    state = ck.state;
    optimState = ck.optim;
    hooks.onStatus({ phase: 'rl', step: state.step, totalSteps, message: `resumed at step ${state.step}` });
  } else {
    const ws = await warmStart(config, spec, deps, hooks);
    tok = ws.tok;
    model = lab = ws.model;
    refWeights = lab.getWeights();
    refSource = ws.refSource;
  }
  const mcfg: PolicyShape = model.config;
  const budgetMB = activationBudgetOf(config);
  const maxPrompt = mcfg.maxSeqLen - config.rollout.maxResponseTokens;
  if (maxPrompt < 8) {
    throw new Error(
      `model.maxSeqLen ${mcfg.maxSeqLen} leaves ${maxPrompt} prompt tokens after rollout.maxResponseTokens ${config.rollout.maxResponseTokens}; raise model.maxSeqLen or lower rollout.maxResponseTokens`,
    );
  }

  // ── Engines ─────────────────────────────────────────────────────────────────────────────────────────────
  // onnxruntime engines hold lab-model weights; a hf run samples with its own KV-cache engine.
  const factory = hf ? undefined : deps.compute.createRolloutEngine;
  const useOrtRollout = config.compute.rolloutEngine === 'onnxruntime' && factory !== undefined;
  const useOrtLogProbs = config.compute.logProbEngine === 'onnxruntime' && factory !== undefined;
  const useOrtRef = config.compute.refLogProbEngine === 'onnxruntime' && factory !== undefined;
  const rolloutEngine: RolloutEngine = hf ? hf.engine : useOrtRollout ? await factory(lab!.getWeights()) : new TfjsRolloutEngine(lab!);
  // π_ref is frozen: on onnxruntime it is exported once and costs one fast forward pass per step.
  const refModel = needRef && !useOrtRef && lab ? PolicyModel.fromWeights(refWeights!, 'ref') : null;
  const refEngine = needRef && useOrtRef ? await factory(refWeights!, 'reference') : null;
  const refPolicy: Pick<TrainerPolicy, 'config' | 'tokenLogProbs'> | null = hf ? hf.reference : refModel;
  // compute.logProbEngine = 'onnxruntime': old log-probs too come from a forward-only engine holding θ (the rollout
  // engine itself when it is onnxruntime). Faster; the trainer/inference mismatch is then not measured.
  const oldEngine = useOrtLogProbs ? (useOrtRollout ? rolloutEngine : await factory(lab!.getWeights())) : null;
  // algorithm.rolloutCorrection (verl rollout_correction): decoupled IS / rejection against the rollout engine's
  // log-probs, or bypass mode (π_old := those log-probs, no old-log-prob pass).
  const corr = rolloutCorrectionOf(config);
  // rollout.policyLag = k (the pressure ladder): training rollouts are sampled by the policy of k updates (RL steps)
  // ago, as asynchronous trainers do, by an engine of its own; validation and π_old use the current policy.
  // `lagged` holds θ_{s−k} … θ_{s−1} (the oldest first): the sampler holds lagged[0].
  const lag = config.rollout.policyLag ?? 0;
  let lagged: ModelWeights[] = [];
  if (lag > 0 && lab) {
    const kept = resume ? lagWeightsOf(resume, lab.config) : [];
    lagged = kept.length > 0 ? kept : [lab.getWeights()];
  }
  const lagEngine: RolloutEngine | null =
    lag > 0 && lab
      ? useOrtRollout
        ? await factory(lagged[0])
        : new TfjsRolloutEngine(PolicyModel.fromWeights(lagged[0], 'lag'), undefined, true)
      : null;
  const samplerEngine = lagEngine ?? rolloutEngine;

  const opt = new AdamW(model.trainableVariables(), {
    beta1: config.optim.beta1,
    beta2: config.optim.beta2,
    eps: config.optim.eps,
    weightDecay: config.optim.weightDecay,
    gradClip: config.optim.gradClip,
  });
  if (optimState && state) opt.setState({ t: state.optimStep, tensors: optimState });
  // compute.workers = K > 1: a pool of K gradient workers holding θ (started in the try below, so it is always
  // stopped). K = 1 keeps the single-thread path, the only one a hf model has.
  const K = hf ? 1 : workersOf(config, deps.compute, state?.workers);
  // LoRA dropout in the update's forward passes: a seeded stream of its own, checkpointed with the others.
  const dropoutRng = hf && hf.dropout > 0 ? new Rng(hashSeed(config.seed, 'lora-dropout')) : null;
  if (dropoutRng && state?.rng['lora-dropout']) dropoutRng.setState(state.rng['lora-dropout']);
  let pool: GradientPool | null = null;
  const policyLogProbs = (rs: readonly TurnRow[], temperature: number): Promise<{ logProbs: number[][]; entropyMean: number[] }> =>
    pool
      ? poolLogProbs(pool, rs, temperature, budgetMB, () => interruptAt('logprobs'))
      : trainerLogProbs(model, rs, temperature, budgetMB, () => interruptAt('logprobs'));

  const rolloutRng = new Rng(hashSeed(config.seed, 'rollout'));
  if (state) rolloutRng.setState(state.rng.rollout);
  let taskCursor = state?.taskCursor ?? 0;
  let totalTokens = state?.totals.tokens ?? 0;
  const wallBefore = state?.totals.wallSeconds ?? 0;
  let step = state?.step ?? 0;

  const makeEnv = makeEnvFactory(spec);
  const buildPrompt = makePromptBuilder(makeEnv(), spec.historyWindow);
  let lastMetrics: TrainingResult['lastMetrics'] = null;
  let lastVal: EvalSummary | null = null;
  let status: TrainingResult['status'] = 'completed';

  const snapshot = (): TrainerCheckpoint => {
    const ck = makeCheckpoint({
      state: {
        step,
        optimStep: opt.stepCount,
        rng: { rollout: rolloutRng.getState(), ...(dropoutRng ? { 'lora-dropout': dropoutRng.getState() } : {}) },
        taskCursor,
        refSource,
        configHash: cfgHash,
        totals: { tokens: totalTokens, wallSeconds: wallBefore + (clock.now() - t0) / 1000 },
        workers: K,
        ...(hf ? { hfModel: hf.identity } : {}),
      },
      // A hf run's checkpoint holds what training changed (adapters, or all weights) and no π_ref: the base
      // model is identified by its hashes (state.hfModel) and read from its folder on resume.
      policy: hf ? hf.namedWeights() : toNamed(lab!.getWeights()),
      ref: hf ? {} : toNamed(refWeights!),
      optim: hf ? hf.optimToStable(opt.getState().tensors) : opt.getState().tensors,
    });
    if (hf) return ck;
    // The policy lag's queue travels with the checkpoint, so a resumed run samples from the same stale policies.
    const lagFiles = Object.fromEntries(lagged.map((w, i) => [`lag-${i}.bin`, encodeTensors(toNamed(w))]));
    return {
      ...ck,
      files: { ...ck.files, ...lagFiles, 'tokenizer.json': new TextEncoder().encode(JSON.stringify((tok as Tokenizer).toJSON())) },
    };
  };

  // A stop inside a step (hooks.interrupted) puts back what the step changed: its RNG, task cursor and totals, and
  // once the update has begun the weights and optimizer state (copied only when the hook exists).
  let undo: {
    step: number;
    rng: ReturnType<Rng['getState']>;
    dropoutRng: ReturnType<Rng['getState']> | null;
    taskCursor: number;
    totalTokens: number;
    lagged: ModelWeights[];
    weights?: PolicyWeights;
    optim?: ReturnType<AdamW['getState']>;
  } | null = null;
  const interruptAt = async (part: StepPart): Promise<void> => {
    if (hooks.interrupted && (await hooks.interrupted(part))) throw new StepInterrupted(part);
  };
  const finish = async (): Promise<TrainingResult> => {
    const final = snapshot();
    await hooks.onCheckpoint(final);
    hooks.onStatus({ phase: 'done', step, totalSteps, message: status });
    return { status, step, lastMetrics, validation: lastVal, checkpoint: final, wallSeconds: (clock.now() - t0) / 1000, workers: K };
  };

  /** One validation at `at`: its status, its metrics into `m`, its trajectories; remembered as the latest. */
  const validateInto = async (m: StepMetrics, at: number): Promise<void> => {
    hooks.onStatus({ phase: 'validation', step: at, totalSteps });
    const val = await validate(config, spec, rolloutEngine, tok, mcfg, at, () => interruptAt('validation'));
    lastVal = val.summary;
    setValidation(m, spec.name, val.summary);
    for (const t of val.trajectories) hooks.onTrajectory(t);
  };

  try {
    if (K > 1) pool = await deps.compute.createGradientPool!({ weights: lab!.getWeights(), workers: K });
    // A policy loaded with NaN/Infinity (an old build's checkpoint) cannot train: stop with the reason.
    assertFiniteWeights(model.trainableVariables(), step);
    hooks.onStatus({ phase: 'rl', step, totalSteps, message: `RL with ${config.preset} on ${spec.name} (π_ref: ${refSource})` });
    // The starting policy's own validation, logged at step 0 (verl's val_before_train): the point later validations
    // are compared with (success-collapse alert, charts). Fresh runs only; a resumed run has it already.
    if (!state && step === 0 && config.training.validateEvery > 0 && config.training.validateBeforeTraining) {
      if ((await hooks.checkControl()) !== 'stop') {
        const m0 = new StepMetrics(0);
        await validateInto(m0, 0);
        m0.set('perf/wall_s', wallBefore + (clock.now() - t0) / 1000);
        m0.set('perf/total_tokens', totalTokens);
        lastMetrics = m0.toRecord();
        hooks.onMetrics(lastMetrics);
      }
    }
    while (step < totalSteps) {
      if ((await hooks.checkControl()) === 'stop') {
        status = 'stopped';
        break;
      }
      undo = { step, rng: rolloutRng.getState(), dropoutRng: dropoutRng?.getState() ?? null, taskCursor, totalTokens, lagged };
      step += 1;
      const tStep = clock.now();
      const m = new StepMetrics(step);

      // 1. Rollout (with dynamic-filtering rounds when active) ──────────────────────────────────────────
      // The forward engine already holds θ: created from it, and refreshed after every update (below).
      const B = config.rollout.tasksPerStep;
      const G = config.rollout.groupSize;
      let fs = startFiltering<Group>(step, { ...config.algorithm.filter, targetGroups: B });
      let rolloutTokens = 0;
      for (;;) {
        const tasks = Array.from({ length: B }, (_, i) => ({ seed: rlTaskSeed(config.seed, taskCursor + i) }));
        taskCursor += B;
        const res = await runRollout({
          engine: samplerEngine,
          tokenizer: tok,
          makeEnv,
          buildPrompt,
          tasks,
          groupSize: G,
          sampling: {
            maxNewTokens: config.rollout.maxResponseTokens,
            temperature: config.rollout.temperature,
            topP: config.rollout.topP,
            topK: config.rollout.topK,
          },
          maxSeqLen: mcfg.maxSeqLen,
          rng: rolloutRng,
          uidPrefix: `s${step}r${fs.round}`,
          beforeTurn: () => interruptAt('rollout'),
        });
        rolloutTokens += res.stats.promptTokens + res.stats.generatedTokens;
        const r = offerRound(fs, splitGroups(res));
        fs = r.state;
        if (r.done) break;
      }
      const filtered = finishFiltering(fs);
      m.set('filter/rounds', filtered.metrics['filter/rounds']);
      m.set('filter/zero_variance_share', filtered.metrics['filter/zero_variance_share']);
      // Trajectory-major row order: verl-agent gathers rows env by env, turn by turn; mini-batches split it in order.
      const trajs: TrajectoryInfo[] = [];
      const rows: TurnRow[] = [];
      for (const g of filtered.groups) {
        for (const t of g.data.trajectories) {
          trajs.push(t);
          for (const i of t.rowIndices) rows.push(g.data.rows[i]);
        }
      }
      const tRollout = clock.now();

      // 2. Trajectory and row statistics ────────────────────────────────────────────────────────────────
      const returns = trajs.map((t) => t.episodeReturn);
      m.set('episode/success_rate', mean(trajs.map((t) => (t.won ? 1 : 0))));
      m.set('episode/reward_mean', mean(returns));
      m.set('episode/reward_max', maxOf(returns));
      m.set('episode/reward_min', minOf(returns));
      m.set('episode/length_mean', mean(trajs.map((t) => t.length)));
      m.set('episode/score_mean', mean(trajs.map((t) => t.score)));
      m.set('episode/valid_action_ratio', mean(rows.map((r) => (r.actionValid ? 1 : 0))));
      m.set('episode/valid_format_ratio', mean(rows.map((r) => (r.formatValid ? 1 : 0))));
      m.set('response_length/mean', mean(rows.map((r) => r.responseIds.length)));
      m.set('response_length/clip_ratio', mean(rows.map((r) => (r.overlong ? 1 : 0))));
      m.set('prompt_length/mean', mean(rows.map((r) => r.promptIds.length)));
      // Response diversity, for the detector's response_collapse rule: one pass over the step's token ids.
      const diversity = responseDiversity(rows.map((r) => ({ prompt: r.promptIds, response: r.responseIds })));
      m.set('response/identical_share', diversity['response/identical_share']);
      m.set('response/distinct_2', diversity['response/distinct_2']);
      m.set('response/prompt_mi', diversity['response/prompt_mi']);
      m.set('batch/rows', rows.length);

      // 3. Old and reference log-probs ──────────────────────────────────────────────────────────────────
      const temp = config.rollout.temperature;
      await interruptAt('logprobs');
      let old: { logProbs: number[][]; entropyMean: number[] };
      // The first mini-batch's rows are not recomputed when nothing before the update needs them: the update's
      // first forward pass runs at θ = θ_old and returns them (firstFromUpdate).
      // Not with LoRA dropout either: the update's forward passes then differ from π_old's (no dropout).
      const firstFromUpdate = oldEngine || corr.bypass || dropoutRng ? 0 : firstMiniBatchFromUpdate(config, rows.length);
      if (corr.bypass) {
        // Bypass mode: the rollout engine's log-probs are π_old (verl apply_bypass_mode); EMPG is refused by validation.
        old = { logProbs: rows.map((r) => Array.from(r.behaviourLogProbs)), entropyMean: rows.map(() => NaN) };
      } else if (oldEngine) {
        if (oldEngine !== rolloutEngine) await oldEngine.setWeights(lab!.getWeights());
        const lp = await oldEngine.logProbs(rows, temp);
        // EMPG needs π_old's entropies, which only the trainer engine returns.
        const ent = config.algorithm.advantage.estimator === 'empg' ? (await policyLogProbs(rows, temp)).entropyMean : rows.map(() => NaN);
        old = { logProbs: lp, entropyMean: ent };
      } else {
        const rest =
          firstFromUpdate < rows.length ? await policyLogProbs(rows.slice(firstFromUpdate), temp) : { logProbs: [], entropyMean: [] };
        old = {
          logProbs: [...Array.from({ length: firstFromUpdate }, (): number[] => []), ...rest.logProbs],
          entropyMean: [...Array.from({ length: firstFromUpdate }, () => NaN), ...rest.entropyMean],
        };
      }
      let ref: number[][] | null = null;
      if (needRef) {
        await interruptAt('logprobs');
        ref = refEngine
          ? await refEngine.logProbs(rows, temp)
          : (await trainerLogProbs(refPolicy!, rows, temp, budgetMB, () => interruptAt('logprobs'))).logProbs;
      }
      // Decoupled rollout correction: IS weights and rejection mask from π_old vs π_rollout, once per batch
      // (verl compute_rollout_correction_and_add_to_batch), before the advantages as in verl.
      const corrBatch = corr.decoupled ? correctBatch(rows, old.logProbs, corr, m) : null;
      const tLogProb = clock.now();

      // 4. Advantages ───────────────────────────────────────────────────────────────────────────────────
      const advRows: AdvRow[] = rows.map((r, i) => ({
        uid: r.uid,
        trajUid: r.trajUid,
        envReward: r.envReward,
        actionValid: r.actionValid,
        anchor: r.anchor,
        entropy: old.entropyMean[i],
        responseLength: r.responseIds.length,
      }));
      const shaping = scoreShaping(config, rows, old.logProbs, ref);
      const advParams: AdvantageParams = {
        ...config.algorithm.advantage,
        invalidPenalty: config.algorithm.invalidPenalty,
        ...(shaping ? { scoreShaping: shaping } : {}),
      };
      const adv = ADVANTAGES.get(config.algorithm.advantage.estimator).fn(advRows, advParams).value;
      m.set('critic/advantages_mean', mean(adv));
      m.set('critic/advantages_std', std(adv));

      // 5. One epoch (or `epochs`) over sequential mini-batches ─────────────────────────────────────────
      if (hooks.interrupted) Object.assign(undo, { weights: model.getWeights(), optim: opt.getState() });
      const upd = await (pool
        ? updatePolicyParallel(pool, lab!, opt, rows, old.logProbs, ref, adv, config, firstFromUpdate > 0, corrBatch, () =>
            interruptAt('update'),
          )
        : updatePolicy(
            model,
            opt,
            rows,
            old.logProbs,
            ref,
            adv,
            config,
            firstFromUpdate > 0,
            corrBatch,
            () => interruptAt('update'),
            dropoutRng,
          ));
      for (const [k, v] of Object.entries(upd.metrics)) setMetric(m, k, v);
      if (!oldEngine && !corr.bypass) {
        // After the update: the first mini-batch's π_old log-probs came from its forward pass (firstFromUpdate).
        const mm = mismatchStats(
          rows.map((r) => r.behaviourLogProbs),
          old.logProbs,
        );
        // Under a policy lag the behaviour log-probs come from θ_{s−k} and π_old is θ_s: the gap is the policy's own
        // k-update move (staleness), not two engines disagreeing on the same weights, so it is logged as the lag's
        // and the engine gap (mismatch/*) is not measured (NaN) — the pressure ladder's level 3 read it as a
        // collapse (train_inference_mismatch, 8.8 nats at step 2).
        m.set(lagEngine ? 'offpolicy/lag_logprob_abs_max' : 'mismatch/logprob_abs_max', mm.max);
        m.set(lagEngine ? 'offpolicy/lag_logprob_abs_mean' : 'mismatch/logprob_abs_mean', mm.mean);
        // verl's off-policy diagnostics (rollout_corr/kl, k3_kl, ppl, χ²) of the same two engines (under a lag, of the
        // behaviour policy against π_old, staleness included, as verl's are); with decoupled correction on,
        // correctBatch logged them already.
        if (!corr.decoupled) {
          const b = paddedBatch(rows, old.logProbs);
          if (b.hasTokens) for (const [k, v] of Object.entries(offPolicyMetrics(b.train, b.rollout, b.mask))) setMetric(m, k, v);
        }
      }
      if (useOrtRollout) await rolloutEngine.setWeights(lab!.getWeights());
      // An hf run's onnxruntime engine holds an export of the weights: re-export it from the updated policy.
      if (hf) await hf.syncEngine();
      if (lagEngine) {
        // Step s + 1 samples with θ_{s−k}: the warm start θ_0 until k updates have happened, then trailing by k.
        const before = lagged[0];
        lagged = [...lagged, lab!.getWeights()].slice(-(lag + 1));
        if (lagged[0] !== before) await lagEngine.setWeights(lagged[0]);
      }
      const tUpdate = clock.now();

      // 6. Validation, throughput, trajectories ─────────────────────────────────────────────────────────
      const every = config.training.validateEvery;
      if ((every > 0 && step % every === 0) || step === totalSteps) {
        await validateInto(m, step);
        hooks.onStatus({ phase: 'rl', step, totalSteps });
      }
      const stepTokens = rolloutTokens + rows.reduce((s, r) => s + r.promptIds.length + r.responseIds.length, 0) * (needRef ? 3 : 2);
      totalTokens += stepTokens;
      const tEnd = clock.now();
      m.set('perf/step_s', (tEnd - tStep) / 1000);
      m.set('perf/rollout_s', (tRollout - tStep) / 1000);
      m.set('perf/logprob_s', (tLogProb - tRollout) / 1000);
      m.set('perf/update_s', (tUpdate - tLogProb) / 1000);
      m.set('perf/tokens_per_s', stepTokens / Math.max(1e-9, (tEnd - tStep) / 1000));
      m.set('perf/wall_s', wallBefore + (tEnd - t0) / 1000);
      m.set('perf/total_tokens', totalTokens);
      m.set('perf/max_memory_allocated_gb', deps.compute.memoryGb?.() ?? NaN);
      for (const t of sampleTrajectories(trajs, rows, adv, step, spec.name, config.training.sampleTrajectories, G)) hooks.onTrajectory(t);
      lastMetrics = m.toRecord();
      hooks.onMetrics(lastMetrics);
      // AdamW refuses non-finite updates, so this only fires on weights that were already broken; the step's
      // metrics are logged first, and no checkpoint of broken weights is written.
      assertFiniteWeights(model.trainableVariables(), step);
      hooks.onStatus({ phase: 'rl', step, totalSteps });

      const ckEvery = config.training.checkpointEvery;
      if (ckEvery > 0 && step % ckEvery === 0 && step < totalSteps) await hooks.onCheckpoint(snapshot());
    }
    return await finish();
  } catch (e) {
    if (!(e instanceof StepInterrupted)) throw e;
    // Nothing of the abandoned step was logged (its metrics, trajectories and checkpoint come at its end), so the
    // run ends at the last completed step, with the checkpoint an uninterrupted run would have written there.
    const abandoned = step;
    if (undo) {
      step = undo.step;
      rolloutRng.setState(undo.rng);
      if (dropoutRng && undo.dropoutRng) dropoutRng.setState(undo.dropoutRng);
      taskCursor = undo.taskCursor;
      totalTokens = undo.totalTokens;
      if (undo.weights) model.setWeights(undo.weights);
      if (undo.optim) opt.setState(undo.optim);
      if (lagEngine && undo.lagged !== lagged) {
        lagged = undo.lagged;
        await lagEngine.setWeights(lagged[0]);
      }
    }
    status = 'stopped';
    hooks.onStatus({
      phase: 'rl',
      step,
      totalSteps,
      message: `${e.message} of step ${abandoned}: that step is dropped, the run ends at step ${step}`,
    });
    return await finish();
  } finally {
    if (pool) await pool.dispose();
    opt.dispose();
    await rolloutEngine.dispose();
    if (lagEngine) await lagEngine.dispose();
    if (refEngine) await refEngine.dispose();
    if (oldEngine && oldEngine !== rolloutEngine) await oldEngine.dispose();
    refModel?.dispose();
    if (hf) hf.dispose();
    else model.dispose();
  }
}

// ───────────────────────────────────────────────────────────────────────────────────────────────────────────
// Warm start
// ───────────────────────────────────────────────────────────────────────────────────────────────────────────

async function warmStart(
  config: RunConfig,
  spec: EnvSpec,
  deps: TrainerDeps,
  hooks: TrainerHooks,
): Promise<{ tok: Tokenizer; model: PolicyModel; refSource: string }> {
  const ws = config.warmStart;
  if (ws.source === 'shipped') {
    // Strict: a run that asks for the shipped π_ref gets it or a clear error; behaviour cloning
    // from scratch is warmStart.source = 'scratch', never a silent fallback.
    if (!deps.loadWarmStart)
      throw new Error(
        'warmStart.source=shipped: this trainer was started without a shipped-checkpoint loader; set warmStart.source=scratch to behaviour-clone a warm start',
      );
    const shipped = await deps.loadWarmStart({ env: spec.name, modelSize: config.model.size, historyWindow: spec.historyWindow });
    if (!shipped)
      throw new Error(
        `warmStart.source=shipped: no shipped ${spec.name} checkpoint for model ${config.model.size}, history window ${spec.historyWindow}; set warmStart.source=scratch to behaviour-clone one`,
      );
    const loaded = deserializeModel(shipped.files);
    const want = resolveModelConfig(modelSpecOf(config), loaded.tokenizer.size);
    const got = loaded.weights.config;
    if (
      want.dModel !== got.dModel ||
      want.nLayers !== got.nLayers ||
      want.nHeads !== got.nHeads ||
      want.dFF !== got.dFF ||
      want.maxSeqLen !== got.maxSeqLen
    ) {
      throw new Error(
        `warmStart: the shipped ${spec.name} checkpoint has model ${JSON.stringify(got)} but the run asks for ${JSON.stringify(want)}; use the checkpoint's model size or set warmStart.source=scratch`,
      );
    }
    hooks.onStatus({ phase: 'warmstart', step: 0, totalSteps: 0, message: `loaded shipped warm start ${shipped.ref}` });
    // The checkpoint's weights with the run's arithmetic (model.geluForm): the same function, so π_ref is unchanged.
    return {
      tok: loaded.tokenizer,
      model: PolicyModel.fromWeights({ ...loaded.weights, config: { ...got, geluForm: want.geluForm } }),
      refSource: shipped.ref,
    };
  }
  // compute.workers = K > 1: behaviour cloning shards each batch over a pool of its own (stopped when BC ends).
  const K = workersOf(config, deps.compute);
  const { tok, model, report } = await warmStartRecipe(config, deps.clock, {
    onProgress: (p) =>
      hooks.onStatus({ phase: 'warmstart', step: p.update, totalSteps: p.updates, message: `BC loss ${p.loss.toFixed(4)}` }),
    checkControl: () => hooks.checkControl(),
    ...(K > 1 && deps.compute.createGradientPool ? { gradientPool: { workers: K, create: deps.compute.createGradientPool } } : {}),
  });
  if (ws.source === 'none') return { tok, model, refSource: 'none' };
  return { tok, model, refSource: `bc:${report.updates}` };
}

// ───────────────────────────────────────────────────────────────────────────────────────────────────────────
// Pieces of a step
// ───────────────────────────────────────────────────────────────────────────────────────────────────────────

interface Group {
  readonly rows: TurnRow[];
  readonly trajectories: TrajectoryInfo[];
}

/** One RolledGroup per task: its G raw returns (before the invalid penalty, spec §1.4) and its rows. */
function splitGroups(res: RolloutResult): Array<RolledGroup<Group>> {
  const byUid = new Map<string, TrajectoryInfo[]>();
  for (const t of res.trajectories) {
    const list = byUid.get(t.uid) ?? [];
    list.push(t);
    byUid.set(t.uid, list);
  }
  return [...byUid.entries()].map(([uid, ts]) => ({
    uid,
    returns: ts.map((t) => t.episodeReturn),
    data: { rows: res.rows, trajectories: ts },
  }));
}

/** Optional additions to the row score: DAPO overlong shaping, in-reward KL (both off in the paper's presets). */
function scoreShaping(config: RunConfig, rows: readonly TurnRow[], old: number[][], ref: number[][] | null): number[] | null {
  const a = config.algorithm;
  if (!a.overlong.enabled && !(a.kl.inReward && ref)) return null;
  const out = rows.map((r) =>
    a.overlong.enabled
      ? overlongPenalty(r.responseIds.length, config.rollout.maxResponseTokens, a.overlong.bufferFrac, a.overlong.penaltyFactor)
      : 0,
  );
  if (a.kl.inReward && ref) {
    const R = Math.max(1, ...rows.map((r) => r.responseIds.length));
    const pad = (x: number[][]): tf.Tensor2D => padded(x, R);
    const [o, f, mk] = [pad(old), pad(ref), maskOf(rows, R)];
    const pen = inRewardKl(new Array<number>(rows.length).fill(0), o, f, mk, a.kl.type, a.kl.coef);
    tf.dispose([o, f, mk]);
    pen.forEach((p, i) => (out[i] += p));
  }
  return out;
}

interface UpdateReport {
  readonly metrics: Record<string, number>;
}

/**
 * The whole mini-batch's aggregation denominators, for a mini-batch differentiated in chunks: `aux` (entropy, KL)
 * from the response-token counts; `pg` likewise unless sequence masking drops rows, which depends on the current
 * policy — then a forward pass without gradient finds the rows it keeps (the same test the loss will run).
 * Bypass-mode rejection also depends on the current policy: its forward pass's log-probs are returned as
 * `bypassLogProbs` (per row, its response length) and the chunks' or shards' losses correct with exactly these
 * values, so the rejection is the same computation on the same numbers in both places: bit for bit the tokens the
 * denominator counts. (Each loss running its own forward pass could keep a token at a threshold that this pass
 * rejects — on K workers the shards' batches are not these chunks, and LoRA dropout runs in the loss's pass only.)
 * Sequence masking likewise: the rows this pass keeps are returned as `seqKeep` (1 keep / 0 masked per row) and the
 * chunks' or shards' losses mask exactly these rows instead of testing their own pass's drift against δ.
 */
function wholeDenominators(
  model: TrainerPolicy,
  chunks: ReadonlyArray<[number, number]>,
  rows: readonly TurnRow[],
  old: readonly number[][],
  adv: readonly number[],
  params: ActorLossParams,
  onPolicy: boolean,
  temperature: number,
  keep: readonly (readonly number[])[] | null,
): { pg: number; aux: number; pgTokens: number[]; bypassLogProbs?: number[][]; seqKeep?: number[] } {
  // Decoupled rejection removes tokens from every term (verl replaces response_mask); bypass rejection only from pg.
  const rowTok = keep ? keep.map((k) => Math.round(k.reduce((a, b) => a + b, 0))) : rows.map((r) => r.responseIds.length);
  const width = Math.max(1, ...rows.map((r) => r.responseIds.length));
  let pgTok = rowTok;
  let bypassLogProbs: number[][] | undefined;
  let seqKeep: number[] | undefined;
  const bypassRs = params.bypass?.correction.rolloutRs ?? null;
  if (params.bypass && bypassRs !== null) {
    // Bypass rejection tests the CURRENT log-probs against the rollout's, token by token or row by row (never
    // across rows), so a no-gradient forward pass per chunk finds the tokens the loss will keep.
    pgTok = [];
    bypassLogProbs = [];
    for (const [lo, hi] of chunks) {
      const part = rows.slice(lo, hi);
      const cur = responseRows(
        tf.tidy(() => model.tokenLogProbs(part, { temperature }).logProbs),
        part,
      );
      bypassLogProbs.push(...cur);
      // π_rollout as the loss reads it, from its float32 oldLogProb tensor: the behaviour log-probs are float64
      // (sampling.ts), and a float64 value beside a bound can fall on the other side of it once rounded.
      const b = paddedBatch(
        part,
        old.slice(lo, hi).map((r) => r.map(Math.fround)),
        cur,
      );
      const kept = b.hasTokens ? rejectionMask(b.logRatio, b.mask, bypassRs, params.bypass.correction.rolloutRsThreshold).value : b.mask;
      pgTok.push(...kept.map((k) => Math.round(k.reduce((a, c) => a + c, 0))));
    }
  } else if (params.seqMask.enabled && params.mode !== 'gspo') {
    pgTok = [];
    seqKeep = [];
    for (const [lo, hi] of chunks) {
      const part = rows.slice(lo, hi);
      const R = Math.max(1, ...part.map((r) => r.responseIds.length));
      const kept = tf.tidy(() => {
        const cur = model.tokenLogProbs(part, { temperature });
        const input = {
          logProb: cur.logProbs,
          oldLogProb: onPolicy ? cur.logProbs : padded(old.slice(lo, hi), R),
          advantages: broadcastRows(adv.slice(lo, hi), R),
          mask: keep ? (tf.mul(cur.mask, padded(keep.slice(lo, hi), R)) as tf.Tensor2D) : cur.mask,
        };
        return tf.sum(sequenceMask(input, params.seqMask.delta).mask, 1);
      });
      const counts = Array.from(kept.dataSync(), (x) => Math.round(x));
      kept.dispose();
      pgTok.push(...counts);
      // A row with tokens kept was kept; a row with none left has no token for the loss's mask to drop either way.
      seqKeep.push(...counts.map((n) => (n > 0 ? 1 : 0)));
    }
  }
  return {
    pg: wholeDenominator(pgAggregation(params.mode, params.aggregation), pgTok, width),
    aux: wholeDenominator(params.aggregation, rowTok, width),
    pgTokens: pgTok,
    ...(bypassLogProbs ? { bypassLogProbs } : {}),
    ...(seqKeep ? { seqKeep } : {}),
  };
}

/**
 * π_old := sg(π_θ) in the loss, the IS ratio exactly 1 (spec §6.1-4): a single mini-batch and a single epoch run at
 * θ = θ_old. Not in bypass mode: there π_old is the rollout engine's log-probs (verl apply_bypass_mode), and the
 * loss's IS weights, rejection and ratio compare π_θ with them — with the shortcut they compared π_θ with itself,
 * so a step of one mini-batch (optim.miniBatchRows = the step's rows, one epoch) corrected and rejected nothing.
 */
function onPolicyShortcutOf(nMb: number, epochs: number, params: ActorLossParams): boolean {
  return nMb === 1 && epochs === 1 && !params.bypass;
}

/**
 * One PPO epoch (or `optim.epochs`) over sequential mini-batches of `optim.miniBatchRows` rows, one AdamW step
 * each. With a single mini-batch and a single epoch, π_old := sg(π_θ) so the IS ratio is exactly 1 (spec §6.1-4),
 * except in bypass mode (onPolicyShortcutOf). Exported for the tests that compare it, chunked or not, with updatePolicyParallel on one batch.
 */
export async function updatePolicy(
  model: TrainerPolicy,
  opt: AdamW,
  rows: readonly TurnRow[],
  old: number[][],
  ref: number[][] | null,
  adv: readonly number[],
  config: RunConfig,
  firstFromUpdate: boolean,
  corr: CorrectedBatch | null,
  beforeMiniBatch: () => Promise<void>,
  /** LoRA dropout's stream: the differentiated forward passes run in training mode with it (null: no dropout). */
  dropout: Rng | null = null,
): Promise<UpdateReport> {
  const mb = Math.max(1, config.optim.miniBatchRows);
  const nMb = Math.ceil(rows.length / mb);
  const epochs = config.optim.epochs;
  const params = actorParamsOf(config);
  const onPolicyShortcut = onPolicyShortcutOf(nMb, epochs, params);
  const vars = model.trainableVariables();
  const sums: Record<string, number[]> = {};
  const push = (k: string, v: number): void => {
    (sums[k] ??= []).push(v);
  };
  let skipped = 0;
  const temp = config.rollout.temperature;
  const budgetMB = activationBudgetOf(config);
  for (let e = 0; e < epochs; e++) {
    for (let b = 0; b < nMb; b++) {
      // A stop asked for meanwhile abandons the update between mini-batches (runTraining puts the weights back).
      await beforeMiniBatch();
      const lo = b * mb;
      const hi = Math.min(rows.length, lo + mb);
      const mbRows = rows.slice(lo, hi);
      const chunks = chunkRows(mbRows, model.config, budgetMB);
      const capture = firstFromUpdate && e === 0 && b === 0;
      const onPolicy = onPolicyShortcut || capture;
      // One chunk: the mini-batch is differentiated whole. Several: every chunk divides by the whole mini-batch's
      // denominators, so losses, metrics and gradients add up to the unsplit mini-batch's (chunking.ts).
      const whole =
        chunks.length === 1
          ? null
          : wholeDenominators(
              model,
              chunks,
              mbRows,
              old.slice(lo, hi),
              adv.slice(lo, hi),
              params,
              onPolicy,
              temp,
              corr?.keep ? corr.keep.slice(lo, hi) : null,
            );
      const mbTokens = Math.max(
        1,
        mbRows.reduce((s, r) => s + r.responseIds.length, 0),
      );
      const chunkSums: Record<string, number> = {};
      let grads: tf.NamedTensorMap = {};
      for (const [cLo, cHi] of chunks) {
        const cRows = mbRows.slice(cLo, cHi);
        const R = Math.max(1, ...cRows.map((r) => r.responseIds.length));
        const oldT = onPolicy ? null : padded(old.slice(lo + cLo, lo + cHi), R);
        const refT = ref ? padded(ref.slice(lo + cLo, lo + cHi), R) : undefined;
        const advT = broadcastRows(adv.slice(lo + cLo, lo + cHi), R);
        const isT = corr?.weights ? padded(corr.weights.slice(lo + cLo, lo + cHi), R) : undefined;
        const keepT = corr?.keep ? padded(corr.keep.slice(lo + cLo, lo + cHi), R) : undefined;
        const bypassT = whole?.bypassLogProbs ? padded(whole.bypassLogProbs.slice(cLo, cHi), R) : undefined;
        const seqKeepT = whole?.seqKeep ? tf.tensor1d(whole.seqKeep.slice(cLo, cHi), 'float32') : undefined;
        const chunkParams: ActorLossParams = whole ? { ...params, pgDenominator: whole.pg, auxDenominator: whole.aux } : params;
        let lossMetrics: Record<string, tf.Scalar> = {};
        let current = null as tf.Tensor2D | null;
        if (dropout) model.setTraining?.(dropout);
        const r = tf.variableGrads(() => {
          const cur = model.tokenLogProbs(cRows, { temperature: temp });
          if (capture) current = tf.keep(cur.logProbs);
          const res = actorLoss(
            {
              logProb: cur.logProbs,
              oldLogProb: oldT ?? (stopGradient(cur.logProbs) as tf.Tensor2D),
              advantages: advT,
              mask: keepT ? (tf.mul(cur.mask, keepT) as tf.Tensor2D) : cur.mask,
              entropy: cur.entropy,
              ...(refT ? { refLogProb: refT } : {}),
              ...(isT ? { rolloutIsWeights: isT } : {}),
              ...(bypassT ? { bypassLogProb: bypassT } : {}),
              ...(seqKeepT ? { seqKeep: seqKeepT } : {}),
            },
            chunkParams,
          );
          lossMetrics = res.metrics as Record<string, tf.Scalar>;
          return res.value;
        }, vars);
        if (dropout) model.setTraining?.(null);
        // Chunk values of pg_loss / entropy / kl_loss are parts of the mini-batch's value (they sum); token means
        // are weighted by the chunk's share of the tokens they average: clip fractions and ppo_kl by its share of
        // the kept tokens (PG_MASK_MEANS: sequence masking and rejection drop tokens), the rest by its share of
        // response tokens; counts sum.
        const share = whole ? cRows.reduce((s, x) => s + x.responseIds.length, 0) / mbTokens : 1;
        const pgW = whole
          ? pgShare(
              whole.pgTokens.slice(cLo, cHi),
              whole.pgTokens.reduce((a, b) => a + b, 0),
            )
          : 1;
        for (const [k, t] of Object.entries(lossMetrics)) {
          const v = t.dataSync()[0];
          t.dispose();
          const w = !whole || SUMMED_METRICS.has(k) ? 1 : k === 'actor/kl_coef' ? 1 / chunks.length : PG_MASK_MEANS.has(k) ? pgW : share;
          chunkSums[k] = (chunkSums[k] ?? 0) + w * v;
        }
        r.value.dispose();
        if (chunks.length === 1) grads = r.grads;
        else accumulateGrads(grads, r.grads);
        if (current) responseRows(current, cRows).forEach((lp, i) => (old[lo + cLo + i] = lp));
        tf.dispose([
          ...(oldT ? [oldT] : []),
          advT,
          ...(refT ? [refT] : []),
          ...(isT ? [isT] : []),
          ...(keepT ? [keepT] : []),
          ...(bypassT ? [bypassT] : []),
          ...(seqKeepT ? [seqKeepT] : []),
        ]);
      }
      for (const [k, v] of Object.entries(chunkSums)) push(k, v);
      const rep = opt.step(grads, config.optim.lr);
      for (const g of Object.values(grads)) g.dispose();
      push('actor/grad_norm', rep.gradNorm);
      if (rep.skipped) skipped++;
    }
  }
  return summariseUpdate(sums, skipped, nMb * epochs, config);
}

/** The update's metrics from the per-mini-batch values collected over `updates` AdamW steps (K = 1 and K > 1). */
function summariseUpdate(sums: Record<string, number[]>, skipped: number, updates: number, config: RunConfig): UpdateReport {
  const a = config.algorithm;
  const out: Record<string, number> = {};
  for (const k of ['actor/pg_loss', 'actor/pg_clipfrac', 'actor/pg_clipfrac_lower', 'actor/ppo_kl', 'actor/entropy', 'actor/kl_loss']) {
    if (sums[k]) out[k] = mean(sums[k]);
  }
  out['actor/num_masked_seqs'] = sums['actor/num_masked_seqs'] ? sums['actor/num_masked_seqs'].reduce((s, x) => s + x, 0) : 0;
  // Bypass mode's rollout_corr/* come from inside the loss, one value per mini-batch: verl averages its micro-batches.
  for (const [k, v] of Object.entries(sums)) if (k.startsWith('rollout_corr/')) out[k] = mean(v);
  out['actor/kl_coef'] = a.kl.enabled ? a.kl.coef : 0;
  const gn = sums['actor/grad_norm'] ?? [];
  out['actor/grad_norm'] = mean(gn);
  // Max keeps a non-finite norm visible (NaN/Infinity is the event the detector reports).
  out['actor/grad_norm_max'] = gn.some((x) => !Number.isFinite(x)) ? gn.find((x) => !Number.isFinite(x))! : maxOf(gn);
  out['actor/skipped_updates'] = skipped;
  out['actor/lr'] = config.optim.lr;
  out['actor/off_policy_step'] = updates - 1;
  return { metrics: out };
}

/**
 * compute.workers = K > 1: updatePolicy's epochs and sequential mini-batches, each mini-batch's rows
 * split into K contiguous shards differentiated on the pool's workers (shards.ts). Every shard divides by the whole
 * mini-batch's denominators, the shard gradients are summed in worker order and applied in ONE AdamW step here,
 * then the new θ goes to every worker. Metric parts are summed the same way (never means of shard means). A worker
 * failure rejects before opt.step, so no update is half-applied.
 */
export async function updatePolicyParallel(
  pool: GradientPool,
  model: PolicyModel,
  opt: AdamW,
  rows: readonly TurnRow[],
  old: number[][],
  ref: number[][] | null,
  adv: readonly number[],
  config: RunConfig,
  firstFromUpdate: boolean,
  corr: CorrectedBatch | null,
  beforeMiniBatch: () => Promise<void>,
): Promise<UpdateReport> {
  const mb = Math.max(1, config.optim.miniBatchRows);
  const nMb = Math.ceil(rows.length / mb);
  const epochs = config.optim.epochs;
  const params = actorParamsOf(config);
  const onPolicyShortcut = onPolicyShortcutOf(nMb, epochs, params);
  const vars = model.trainableVariables();
  const sums: Record<string, number[]> = {};
  let skipped = 0;
  const temp = config.rollout.temperature;
  const budgetMB = activationBudgetOf(config);
  const shardRowsOf = rows.map(shardRow);
  for (let e = 0; e < epochs; e++) {
    for (let b = 0; b < nMb; b++) {
      // A stop asked for meanwhile abandons the update between mini-batches (runTraining puts the weights back).
      await beforeMiniBatch();
      const lo = b * mb;
      const hi = Math.min(rows.length, lo + mb);
      const mbRows = rows.slice(lo, hi);
      const capture = firstFromUpdate && e === 0 && b === 0;
      const onPolicy = onPolicyShortcut || capture;
      const whole = wholeDenominators(
        model,
        chunkRows(mbRows, model.config, budgetMB),
        mbRows,
        old.slice(lo, hi),
        adv.slice(lo, hi),
        params,
        onPolicy,
        temp,
        corr?.keep ? corr.keep.slice(lo, hi) : null,
      );
      const mbTokens = Math.max(
        1,
        mbRows.reduce((s, r) => s + r.responseIds.length, 0),
      );
      const shardParams: ActorLossParams = { ...params, pgDenominator: whole.pg, auxDenominator: whole.aux };
      const parts = await pool.actor(
        shardRanges(mbRows.length, pool.size).map(([a, z]) => ({
          rows: shardRowsOf.slice(lo + a, lo + z),
          old: old.slice(lo + a, lo + z),
          ref: ref ? ref.slice(lo + a, lo + z) : null,
          adv: adv.slice(lo + a, lo + z),
          ...(corr?.weights ? { isWeights: corr.weights.slice(lo + a, lo + z) } : {}),
          ...(corr?.keep ? { keep: corr.keep.slice(lo + a, lo + z) } : {}),
          ...(whole.bypassLogProbs ? { bypassLogProbs: whole.bypassLogProbs.slice(a, z) } : {}),
          ...(whole.seqKeep ? { seqKeep: whole.seqKeep.slice(a, z) } : {}),
          params: shardParams,
          onPolicy,
          returnLogProbs: capture,
          temperature: temp,
          mbTokens,
          pgTokens: { rows: whole.pgTokens.slice(a, z), total: whole.pgTokens.reduce((a, b) => a + b, 0) },
          budgetMB,
        })),
      );
      if (capture) parts.flatMap((p) => p.logProbs ?? []).forEach((lp, i) => (old[lo + i] = lp));
      const { grads, metrics } = combineShards(vars, parts);
      for (const [k, v] of Object.entries(metrics)) (sums[k] ??= []).push(v);
      const rep = opt.step(grads, config.optim.lr);
      for (const g of Object.values(grads)) g.dispose();
      (sums['actor/grad_norm'] ??= []).push(rep.gradNorm);
      if (rep.skipped) skipped++;
      else await pool.setWeights(model.getWeights());
    }
  }
  return summariseUpdate(sums, skipped, nMb * epochs, config);
}

/**
 * How many leading rows (the first mini-batch) skip the old-log-prob pass: before the first AdamW step θ is still
 * θ_old, so spec §6.1-4's π_old := sg(π_θ) holds exactly for the first mini-batch of the first epoch, and its
 * forward pass returns those rows' old log-probs for later epochs and the mismatch metrics. 0 when something before
 * the update needs every row's π_old: EMPG's entropies, or the KL penalty in the reward (`use_kl_in_reward`, spec §2.1;
 * scoreShaping); and 0 unless
 * compute.reuseFirstMiniBatch is true (a stored config from before the field keeps the separate pass).
 */
export function firstMiniBatchFromUpdate(config: RunConfig, nRows: number): number {
  const a = config.algorithm;
  if (config.compute.reuseFirstMiniBatch !== true || a.advantage.estimator === 'empg' || a.kl.inReward) return 0;
  // Rollout correction needs every row's π_old before the update (decoupled) or has no old-log-prob pass (bypass).
  const rc = rolloutCorrectionOf(config);
  if (rc.decoupled || rc.bypass) return 0;
  return Math.min(nRows, Math.max(1, config.optim.miniBatchRows));
}

/** The actor-loss parameters of a config (spec §2.1); exported for the tests that call actorLoss as the trainer does. */
export function actorParamsOf(config: RunConfig): ActorLossParams {
  const a = config.algorithm;
  const rc = rolloutCorrectionOf(config);
  return {
    ...a.policyLoss,
    aggregation: a.aggregation,
    mode: a.policyLoss.mode,
    entropyCoeff: a.entropyCoeff,
    kl: { enabled: a.kl.enabled, type: a.kl.type, coef: a.kl.coef },
    ...(rc.bypass ? { bypass: { lossType: rc.lossType, correction: rc.params } } : {}),
  };
}

/** Decoupled rollout correction of a step's batch, per row (ragged, each row its own response length). */
interface CorrectedBatch {
  /** IS weights to multiply each token's policy loss by (null: IS off). */
  readonly weights: number[][] | null;
  /** 1 = token kept, 0 = rejected (null: rejection off); applied to the loss, entropy and KL masks as in verl. */
  readonly keep: number[][] | null;
}

/** Rows' trainer (`train`) and rollout log-probs padded to one width, with the mask and log-ratio. */
function paddedBatch(rows: readonly TurnRow[], old: readonly (readonly number[])[], current?: readonly (readonly number[])[]) {
  const width = Math.max(1, ...rows.map((r) => r.responseIds.length));
  const fill = (f: (i: number, j: number) => number) =>
    rows.map((r, i) => Array.from({ length: width }, (_, j) => (j < r.responseIds.length ? f(i, j) : 0)));
  const train = fill((i, j) => (current ?? old)[i][j]);
  const rollout = current ? fill((i, j) => old[i][j]) : fill((i, j) => rows[i].behaviourLogProbs[j]);
  const mask = fill(() => 1);
  return {
    train,
    rollout,
    mask,
    logRatio: train.map((row, i) => row.map((v, j) => v - rollout[i][j])),
    hasTokens: rows.some((r) => r.responseIds.length > 0),
  };
}

/** verl's decoupled correction on the whole batch: π_old (trainer) vs π_rollout; logs every rollout_corr/* metric. */
function correctBatch(
  rows: readonly TurnRow[],
  old: readonly (readonly number[])[],
  rc: RunCorrection,
  m: StepMetrics,
): CorrectedBatch | null {
  const b = paddedBatch(rows, old);
  if (!b.hasTokens) return null;
  const r = rolloutCorrection(b.train, b.rollout, b.mask, rc.params);
  for (const [k, v] of Object.entries(r.metrics)) setMetric(m, k, v);
  const cut = (x: number[][]) => x.map((row, i) => row.slice(0, rows[i].responseIds.length));
  return { weights: r.weights ? cut(r.weights) : null, keep: rc.params.rolloutRs !== null ? cut(r.mask) : null };
}

/**
 * K, the gradient workers of this run: compute.workers when set (> 0); for 0 ("one per core") the K the run's
 * checkpoint recorded when it resumes (`recorded`), else what src/main resolved for the machine (its cores), else 1.
 * A stored config without the field was written before compute.workers existed, when every run trained on one
 * thread: it stays at K = 1 on resume and reproduce. K > 1 needs the pool factory from src/main; an explicit K
 * without one is an error.
 */
export function workersOf(config: RunConfig, compute: TrainerDeps['compute'], recorded?: number): number {
  const asked = (config.compute.workers as number | undefined) ?? 1;
  if (!Number.isInteger(asked) || asked < 0) throw new Error(`compute.workers: must be an integer ≥ 0 (0 = one per core), got ${asked}`);
  const resumedK = recorded !== undefined && Number.isInteger(recorded) && recorded >= 1 ? recorded : undefined;
  const k = asked > 0 ? asked : (resumedK ?? Math.max(1, compute.workers ?? 1));
  if (k > 1 && !compute.createGradientPool) {
    if (asked > 0)
      throw new Error(
        `compute.workers ${asked}: this trainer was started without a gradient worker pool (src/main/compute builds one); set compute.workers=1 to train on one thread`,
      );
    return 1;
  }
  return k;
}

/**
 * Old log-probs of `rows` on the pool, in rounds of LOGPROB_CHUNK rows per worker: each round's rows are split into
 * contiguous shards, one per worker, and the outputs concatenated in order. Rounds, not one call for all rows, so a
 * stop (`beforeRound`, the trainer's hooks.interrupted) is answered within one round instead of after the whole
 * pass (a K = 2 pass over ≈130 rows was one uninterruptible call). A worker chunks its shard by
 * LOGPROB_CHUNK rows anyway, so a round is one chunk per worker; the last, shorter round is split evenly.
 */
async function poolLogProbs(
  pool: GradientPool,
  rows: readonly TurnRow[],
  temperature: number,
  budgetMB: number,
  beforeRound: () => Promise<void>,
): Promise<{ logProbs: number[][]; entropyMean: number[] }> {
  const logProbs: number[][] = [];
  const entropyMean: number[] = [];
  const round = LOGPROB_CHUNK * pool.size;
  for (let lo = 0; lo < rows.length; lo += round) {
    await beforeRound();
    const part = rows.slice(lo, lo + round);
    const shards = shardRanges(part.length, pool.size);
    const outs = await pool.logProbs(shards.map(([a, z]) => ({ rows: part.slice(a, z).map(shardRow), temperature, budgetMB })));
    for (const o of outs) {
      logProbs.push(...o.logProbs);
      entropyMean.push(...o.entropyMean);
    }
  }
  return { logProbs, entropyMean };
}

/** A validation's metrics: held-out success, score, episode count and success per task type. */
function setValidation(m: StepMetrics, env: string, summary: EvalSummary): void {
  m.set('val/success_rate', summary.success.rate);
  m.set('val/score_mean', summary.scoreMean);
  m.set('val/episodes', summary.success.n);
  for (const [type, iv] of Object.entries(summary.byTaskType)) m.setDynamic(validationTaskKey(env, type), iv.rate);
}

async function validate(
  config: RunConfig,
  spec: EnvSpec,
  engine: RolloutEngine,
  tok: Tokenizer | PromptCodec,
  mcfg: PolicyShape,
  step: number,
  beforeTurn?: () => Promise<void>,
): Promise<{ summary: EvalSummary; trajectories: Trajectory[] }> {
  const out = await evaluatePolicy({
    engine,
    tokenizer: tok,
    spec,
    seeds: heldOutSeeds(config.training.valEpisodes),
    temperature: config.training.valTemperature,
    topP: config.rollout.topP,
    topK: config.rollout.topK,
    maxResponseTokens: config.rollout.maxResponseTokens,
    maxSeqLen: mcfg.maxSeqLen,
    rng: new Rng(hashSeed(config.seed, 'validation', step)),
    uidPrefix: `val${step}`,
    ...(beforeTurn ? { beforeTurn } : {}),
  });
  const n = Math.min(config.training.sampleTrajectories, out.rollouts[0]?.trajectories.length ?? 0);
  const first = out.rollouts[0];
  const trajectories = first
    ? first.trajectories.slice(0, n).map((t) =>
        toTrajectory(
          t,
          t.rowIndices.map((i) => first.rows[i]),
          step,
          'val',
          spec.name,
        ),
      )
    : [];
  return { summary: out.summary, trajectories };
}

/** A spread of the step's trajectories (one per group first) for the trajectory viewer. */
function sampleTrajectories(
  trajs: readonly TrajectoryInfo[],
  rows: readonly TurnRow[],
  adv: readonly number[],
  step: number,
  env: string,
  n: number,
  G: number,
): Trajectory[] {
  if (n <= 0 || trajs.length === 0) return [];
  const advByRow = new Map<TurnRow, number>();
  rows.forEach((r, i) => advByRow.set(r, adv[i]));
  const picked: TrajectoryInfo[] = [];
  for (let k = 0; picked.length < Math.min(n, trajs.length); k++) {
    const i = ((k * G) % trajs.length) + Math.floor((k * G) / trajs.length);
    if (i >= trajs.length) break;
    picked.push(trajs[i]);
  }
  // Rows of several filtering rounds are concatenated, so a trajectory's rows are found by its uid, not its indices.
  return picked.map((t) =>
    toTrajectory(
      t,
      rows.filter((r) => r.trajUid === t.trajUid),
      step,
      'train',
      env,
      advByRow,
    ),
  );
}

/** The viewer's record of one trajectory from its turn rows (advantages shown where the step computed them). */
function toTrajectory(
  t: TrajectoryInfo,
  own: readonly TurnRow[],
  step: number,
  split: 'train' | 'val',
  env: string,
  adv?: Map<TurnRow, number>,
): Trajectory {
  return {
    step,
    split,
    env,
    taskId: t.taskId,
    taskType: t.taskType,
    uid: t.uid,
    trajUid: t.trajUid,
    won: t.won,
    episodeReturn: t.episodeReturn,
    turns: own.map((r) => turnOf(r, adv?.get(r) ?? null)),
  };
}

function turnOf(r: TurnRow, advantage: number | null): Trajectory['turns'][number] {
  const think = /<think>([\s\S]*?)<\/think>/i.exec(r.responseText);
  return {
    turn: r.turn,
    observation: r.observation,
    prompt: r.promptText,
    response: r.responseText,
    think: think ? think[1].trim() : null,
    action: r.appliedAction || null,
    formatValid: r.formatValid,
    actionValid: r.actionValid,
    reward: r.envReward,
    advantage,
  };
}

// ───────────────────────────────────────────────────────────────────────────────────────────────────────────
// Small helpers
// ───────────────────────────────────────────────────────────────────────────────────────────────────────────

function maskOf(rows: readonly TurnRow[], R: number): tf.Tensor2D {
  const data = new Float32Array(rows.length * R);
  rows.forEach((r, i) => {
    for (let j = 0; j < Math.min(R, r.responseIds.length); j++) data[i * R + j] = 1;
  });
  return tf.tensor2d(data, [rows.length, R]);
}

/** The policy (weights + tokenizer) stored in a trainer checkpoint, for evaluation. */
export function policyFromCheckpoint(config: RunConfig, ck: TrainerCheckpoint): { tok: Tokenizer; weights: ModelWeights } {
  if (hfSourceOf(config) !== null)
    throw new Error(
      `checkpoint at step ${ck.step} is of a Hugging Face model run (model.source=${config.model.source}): it holds the trained adapters or weights, not a lab policy; evaluate it with the run's base model folder`,
    );
  const content = readCheckpoint(ck);
  const tokFile = ck.files['tokenizer.json'];
  if (!tokFile) throw new Error(`checkpoint at step ${ck.step} lacks tokenizer.json`);
  const tok = Tokenizer.fromJSON(JSON.parse(new TextDecoder().decode(tokFile)));
  return { tok, weights: fromNamed(resolveModelConfig(modelSpecOf(config), tok.size), content.policy) };
}

/** The policy-lag queue a checkpoint carries (`lag-0.bin` … oldest first); [] when it has none. */
function lagWeightsOf(ck: TrainerCheckpoint, cfg: ModelConfig): ModelWeights[] {
  const out: ModelWeights[] = [];
  for (let i = 0; `lag-${i}.bin` in ck.files; i++) out.push(fromNamed(cfg, decodeTensors(ck.files[`lag-${i}.bin`])));
  return out;
}

export function toNamed(w: ModelWeights): NamedTensors {
  const out: NamedTensors = {};
  for (const s of weightSpecs(w.config)) out[s.name] = { shape: s.shape, data: w.tensors[s.name] };
  return out;
}

export function fromNamed(cfg: ModelConfig, t: NamedTensors): ModelWeights {
  const tensors: Record<string, Float32Array> = {};
  for (const s of weightSpecs(cfg)) {
    const x = t[s.name];
    if (!x) throw new Error(`checkpoint: weights lack tensor "${s.name}" (model ${cfg.size} d${cfg.dModel}×${cfg.nLayers})`);
    tensors[s.name] = x.data;
  }
  return { config: { ...cfg }, tensors };
}

export { encodePrompt };
