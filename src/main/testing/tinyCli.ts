/**
 * The trainer tests' tiny model and batches (as tests/tinyTrainer.ts's TINY: a 1-layer d16 custom model, 2 tasks ×
 * 2 rollouts, 2-turn Sokoban) as `--set` arguments for the CLI commands that train (arena, ladder, and the e2e
 * ladder that runs the real CLI): from scratch with one BC update, 12-token responses, a checkpoint every step,
 * on tfjs-wasm — seconds a run on 2 cores.
 */

/** The settings; a test's own values go through tinyCliSets' `extra`. */
export const TINY_CLI: Readonly<Record<string, string | number>> = {
  'model.size': 'custom',
  'model.dModel': 16,
  'model.nLayers': 1,
  'model.nHeads': 2,
  'model.dFF': 32,
  'model.maxSeqLen': 192,
  'env.historyWindow': 0,
  'env.maxSteps': 2,
  'rollout.tasksPerStep': 2,
  'rollout.groupSize': 2,
  'rollout.maxResponseTokens': 12,
  'warmStart.source': 'scratch',
  'warmStart.bcUpdates': 1,
  'warmStart.bcBatchRows': 4,
  'training.validateEvery': 1,
  'training.valEpisodes': 2,
  'training.checkpointEvery': 1,
  // The tiny batch has at most 2 tasks × 2 rollouts × 2 turns = 8 rows, fewer than any preset's or ladder level's
  // mini-batch rows (validation would refuse them); a --set is applied after the level, so this wins (lr, lag stay).
  'optim.miniBatchRows': 4,
  'compute.rolloutEngine': 'tfjs',
  'compute.backend': 'wasm',
};

/**
 * The tiny pressure ladder the ladder tests train (the CLI test and the e2e Ladder view): levels 0 and 3 × GRPO and
 * GSPO × one seed, 2 steps a run and 2 held-out episodes — 4 tiny runs, about a minute on 2 cores.
 */
export const TINY_LADDER: readonly string[] = [
  '--levels',
  '0,3',
  '--presets',
  'grpo,gspo',
  '--seeds',
  '1',
  '--steps',
  '2',
  '--episodes',
  '2',
];

/** `--set key=value` for each of TINY_CLI, `extra` replacing or adding keys. */
export function tinyCliSets(extra: Readonly<Record<string, string | number>> = {}): string[] {
  return Object.entries({ ...TINY_CLI, ...extra }).flatMap(([k, v]) => ['--set', `${k}=${v}`]);
}
