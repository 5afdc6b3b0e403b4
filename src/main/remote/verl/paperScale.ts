/**
 * The paper's scale per environment, for a Hugging Face model: what ARLArena's release scripts run (Qwen3-4B,
 * 4 GPUs) where the lab's presets carry laptop numbers. Two halves:
 * - `lab`: values of lab config fields (dotted RunConfig paths). They are applied as named overrides before the
 *   user's --set, so the lab's own validation sees the launch's numbers and --set still wins;
 * - `infra`: verl-only knobs the scripts set that no lab field carries (prompt length, micro-batches, vLLM memory,
 *   FSDP offload, validation nucleus/top-k), needed for a launch to run on GPUs at this scale.
 * `--laptop` keeps the preset's lab values and still takes `infra` (a launch needs it either way).
 *
 * Sources (repo:path at the commits named in stacks/): A = WillDreamer/ARLArena@dc1da9f, P =
 * Personal-Assistant521/ARL-Arena@4a1719c (the public copy of the official release; the only one with
 * train_sampo.sh). Each value's file is named beside it and in docs/guides/verl.md.
 */
import type { FieldValue } from '../../../core/config/fields';
import type { VerlEnv } from './types';

export interface VerlInfra {
  readonly maxPromptLength: number;
  /** Per-GPU micro-batch of the actor update and of the two log-prob passes (rows). */
  readonly microBatchPerGpu: number;
  readonly logProbMicroBatchPerGpu: number;
  /** Prompts per validation batch (the validation set may be several batches). */
  readonly valBatchSize: number;
  readonly gpuMemoryUtilization: number;
  readonly enforceEager: boolean;
  readonly freeCacheEngine: boolean;
  readonly actorOffload: boolean;
  /** CPU share per environment worker (Ray resources). */
  readonly envWorkerCpus: number;
  /** Validation nucleus and top-k (ALFWorld's scripts only; the lab validates with temperature alone). */
  readonly valTopP?: number;
  readonly valTopK?: number;
}

export interface PaperScale {
  readonly lab: Readonly<Record<string, FieldValue>>;
  readonly infra: VerlInfra;
  /** The files the values come from, for the printed header and the docs. */
  readonly sources: readonly string[];
}

const ALF = 'A:examples/embody_agent_trainer/train_alfworld_gigpo.sh';
const ALF_DAPO = 'A:examples/embody_agent_trainer/train_alfworld_dapo.sh';
const SHOP = 'A:examples/shop_agent_trainer/Qwen3_4B/train_gigpo.sh';
const SHOP_SAMPO = 'P:examples/shop_agent_trainer/Qwen3_4B/train_sampo.sh';
const GAME = 'A:examples/game_agent_trainer/train_gigpo_ablation.sh';

export const PAPER_SCALE: Readonly<Record<VerlEnv, PaperScale>> = {
  alfworld: {
    lab: {
      'rollout.tasksPerStep': 16,
      'rollout.groupSize': 8,
      'rollout.maxResponseTokens': 512,
      'optim.lr': 1e-6,
      'optim.miniBatchRows': 256,
      'algorithm.kl.type': 'low_var_kl',
      'algorithm.kl.coef': 0.01,
      'algorithm.advantage.gamma': 0.95,
      // 15 of 200 steps before filtering starts (the DAPO and SAMPO scripts; the config default is 0).
      'algorithm.filter.maxRounds': 3,
      'algorithm.filter.coldStartSteps': 15,
      'env.maxSteps': 50,
      'env.historyWindow': 2,
      'training.steps': 200,
      'training.validateEvery': 5,
      'training.valEpisodes': 128,
      'training.valTemperature': 0.6,
      'training.checkpointEvery': 10,
    },
    infra: {
      maxPromptLength: 2048,
      microBatchPerGpu: 32,
      logProbMicroBatchPerGpu: 32,
      valBatchSize: 128,
      gpuMemoryUtilization: 0.4,
      enforceEager: false,
      freeCacheEngine: false,
      actorOffload: false,
      envWorkerCpus: 0.2,
      valTopP: 0.95,
      valTopK: 20,
    },
    sources: [ALF, ALF_DAPO, 'A:recipe/world_agent/config/alfworld_.yaml (env.history_length 2)'],
  },
  webshop: {
    lab: {
      'rollout.tasksPerStep': 16,
      'rollout.groupSize': 8,
      'rollout.maxResponseTokens': 512,
      'optim.lr': 1e-6,
      'optim.miniBatchRows': 128,
      'algorithm.kl.type': 'low_var_kl',
      'algorithm.kl.coef': 0.01,
      'algorithm.advantage.gamma': 0.95,
      'algorithm.filter.maxRounds': 3,
      'algorithm.filter.coldStartSteps': 5,
      'env.maxSteps': 15,
      'env.historyWindow': 2,
      // 2 × 128 validation tasks in batches of 128 ("evaluate 2 × val_data_size tasks during each iteration").
      'training.steps': 250,
      'training.validateEvery': 10,
      'training.valEpisodes': 256,
      'training.valTemperature': 0.6,
      'training.checkpointEvery': 10,
    },
    infra: {
      maxPromptLength: 4096,
      microBatchPerGpu: 8,
      logProbMicroBatchPerGpu: 8,
      valBatchSize: 128,
      gpuMemoryUtilization: 0.5,
      enforceEager: true,
      freeCacheEngine: false,
      actorOffload: true,
      envWorkerCpus: 0.1,
    },
    sources: [SHOP, `${SHOP_SAMPO} (cold start 5, 250 steps)`, 'A:recipe/shop_agent/config/webshop_.yaml (env.history_length 2)'],
  },
  sokoban: {
    // ARLArena's only Sokoban launch (a GiGPO ablation); its batch, lengths and horizon. The KL stays the preset's
    // (the SAMPO scripts' 0.01 low_var_kl). No cold start: the game trainer does not pass the training step to
    // the rollout, so any cold start would keep filtering off for the whole run (stacks/arlarena.ts).
    lab: {
      'rollout.tasksPerStep': 32,
      'rollout.groupSize': 8,
      'rollout.maxResponseTokens': 500,
      'optim.lr': 1e-6,
      'optim.miniBatchRows': 64,
      'algorithm.advantage.gamma': 0.95,
      'algorithm.filter.maxRounds': 3,
      'algorithm.filter.coldStartSteps': 0,
      'env.maxSteps': 15,
      'env.historyWindow': 2,
      'training.steps': 150,
      'training.validateEvery': 5,
      'training.valEpisodes': 128,
      'training.valTemperature': 0.4,
      'training.checkpointEvery': 0,
    },
    infra: {
      maxPromptLength: 1024,
      microBatchPerGpu: 8,
      logProbMicroBatchPerGpu: 16,
      valBatchSize: 128,
      gpuMemoryUtilization: 0.5,
      enforceEager: true,
      freeCacheEngine: true,
      actorOffload: true,
      envWorkerCpus: 0.1,
    },
    sources: [GAME, 'A:recipe/game_agent/config/game_.yaml (env.history_length 2, env.sokoban.*)'],
  },
};

/**
 * What the verl hand-off sets on top of any lab config, laptop or paper scale: the lab's tiny-model limits do not
 * apply (verl loads the Hugging Face model; model.* has no verl key) and the starting policy is that model.
 */
export const HF_MODEL_LAB_OVERRIDES: Readonly<Record<string, FieldValue>> = {
  'model.size': 'custom',
  'model.maxSeqLen': 8192,
  'warmStart.source': 'none',
};
