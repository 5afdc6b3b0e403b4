/**
 * The production training job: the real trainer (`runTraining`, src/core/training) on the compute this
 * machine has (src/main/compute: tfjs backend + onnxruntime/tfjs rollout engine), with a wall clock.
 * The config was resolved and validated when the session started (sessions.start → resolveConfig).
 */
import type { RunConfig } from '../../../core/config/types';
import { runTraining } from '../../../core/training/trainer';
import type { TrainerDeps } from '../../../core/training/types';
import { setupCompute } from '../../compute/index';
import { shippedLoaderFor } from '../../store/shippedWarmStart';
import { hfModelRecord } from '../../compute/models/hfRunModel';
import { loadHfFolder } from '../../compute/models/hfFolder';
import { createLlmRolloutEngine } from '../../compute/llmRollout';
import type { HfModelRecord } from '../../../shared/api';
import type { TrainingJob } from '../job';

export const trainingJob: TrainingJob = {
  async run(input, hooks, resume, report) {
    const config = input.config as unknown as RunConfig;
    const { backend, rolloutEngine, intraOpThreads, interOpThreads, rolloutPrecision } = config.compute;
    const compute = await setupCompute({ backend, rolloutEngine, intraOpThreads, interOpThreads, rolloutPrecision });
    // model.source = hf:PATH: the folder is read (and hashed) here; the run record gets its identity.
    // Its rollout engine, when onnxruntime was asked for: what sampled (and why not onnxruntime, if it fell back).
    const recorded: { model?: HfModelRecord; rollout?: { name: string; fallback?: string } } = {};
    const deps: TrainerDeps = {
      clock: { now: () => performance.now() },
      // compute.workers = 0 → one gradient worker per core of this machine.
      compute: {
        info: compute.info,
        createRolloutEngine: compute.createRolloutEngine,
        workers: compute.workers,
        createGradientPool: compute.createGradientPool,
        memoryGb: compute.memoryGb,
      },
      // warmStart.source = 'shipped': π_ref from resources/warmstart/<env>, verified against its manifest and the run.
      loadWarmStart: shippedLoaderFor(config),
      loadHfModel: async (path) => {
        const loaded = await loadHfFolder(path);
        recorded.model = hfModelRecord(
          loaded,
          { architecture: loaded.config.architecture, weights: loaded.weightHashes, tokenizer: loaded.tokenizerHashes },
          config,
        );
        // On the run record now, not only with `done`: a run that fails after this (the export, a step) keeps it.
        report?.model(recorded.model);
        return loaded;
      },
      // compute.rolloutEngine = onnxruntime on an hf run: the model's ONNX export (the tfjs engine on a GPU).
      createLlmRolloutEngine: async (policy) => {
        const choice = await createLlmRolloutEngine(policy, {
          engine: rolloutEngine,
          precision: rolloutPrecision,
          gpu: compute.info.training === 'tensorflow-gpu',
        });
        recorded.rollout = { name: choice.engine.name, ...(choice.fallback ? { fallback: choice.fallback } : {}) };
        return choice;
      },
    };
    const result = await runTraining(config, deps, hooks, resume);
    const { training, tensorflow } = compute.info;
    const rollout = recorded.rollout?.name ?? compute.info.rollout;
    const detail = recorded.rollout?.fallback ? `${compute.info.detail}; ${recorded.rollout.fallback}` : compute.info.detail;
    return {
      status: result.status,
      step: result.step,
      backend: { training, rollout, detail, workers: result.workers, ...(tensorflow ? { tensorflow } : {}) },
      ...(recorded.model ? { model: recorded.model } : {}),
    };
  },
};
