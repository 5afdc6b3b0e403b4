/**
 * A pressure ladder's plan (app/studies/ladder.ts LadderPlan) for the tests that build a ladder without parsing a
 * command: what `arlarena ladder` gives a field the command leaves out (sokoban, no --set, no --model, --fraction 0.5,
 * --on-collapse stop, presets rather than arms, --baseline grpo), with the test's command, levels,
 * presets, seeds, steps and episodes. The keys are in LadderPlan's order, whatever order the test gives them in.
 */
import type { LadderPlan } from '../app/studies/ladder';
import { configHash, type LedgerRecord } from '../app/studies/ledger';
import { resolveConfig } from '../../core/config/index';
import { appVersion } from '../platform/appInfo';

export function testLadderPlan(
  p: Pick<LadderPlan, 'command' | 'levels' | 'presets' | 'seeds' | 'steps' | 'episodes'> & Partial<LadderPlan>,
): LadderPlan {
  return {
    command: p.command,
    levels: p.levels,
    envs: p.envs ?? ['sokoban'],
    presets: p.presets,
    seeds: p.seeds,
    steps: p.steps,
    model: p.model ?? null,
    sets: p.sets ?? {},
    baseline: p.baseline ?? 'grpo',
    episodes: p.episodes,
    fraction: p.fraction ?? 0.5,
    stopOnCollapse: p.stopOnCollapse ?? true,
    arms: p.arms ?? null,
  };
}

/**
 * A small committed ladder for the tests that resume one from its ledger: grpo and gspo × seeds 1-2 at level 0,
 * 3 steps, 2 episodes, named `study`: `arlarena ladder ARGS` and the plan it gives.
 */
export function smallLadder(study: string): { args: string[]; plan: LadderPlan } {
  const args = ['--levels', '0', '--presets', 'grpo,gspo', '--seeds', '2', '--steps', '3', '--episodes', '2', '--study', study];
  const plan = testLadderPlan({
    command: `arlarena ladder ${args.join(' ')}`,
    levels: [0],
    presets: ['grpo', 'gspo'],
    seeds: [1, 2],
    steps: 3,
    episodes: 2,
  });
  return { args, plan };
}

/**
 * smallLadder's ledger: every run completed at step 3 but those `collapsed` names, which fall at step 2 (their first
 * critical alert); each with the config hash this checkout resolves for it, as `arlarena ladder` records it.
 */
export function smallLadderRecords(plan: LadderPlan, collapsed: (preset: string, seed: number) => boolean): LedgerRecord[] {
  return plan.presets.flatMap((preset) =>
    plan.seeds.map((seed) => {
      const fell = collapsed(preset, seed);
      return {
        level: 0,
        env: 'sokoban',
        preset,
        seed,
        runId: `run-${preset}-${seed}`,
        status: 'completed' as const,
        steps: 3,
        collapseStep: fell ? 2 : null,
        censoredAt: fell ? null : 3,
        collapseReason: fell ? 'first critical alert at step 2' : null,
        heldOutGreedy: 0.5,
        heldOutSampled: 0.5,
        finalTrainSuccess: 0.5,
        bestTrainSuccess: 0.5,
        firstCriticalStep: fell ? 2 : null,
        stepsToThreshold: 1,
        rolloutSecondsPerStep: 0.25 * seed,
        rolloutMismatch: null,
        wallSeconds: 12,
        appVersion: appVersion(),
        appCommit: 'abc123',
        configHash: configHash(resolveConfig(preset, 'sokoban', { 'training.pressure': 0, seed, 'training.steps': 3 }).config),
      };
    }),
  );
}
