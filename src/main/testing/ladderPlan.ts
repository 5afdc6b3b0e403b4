/**
 * A pressure ladder's plan (app/studies/ladder.ts LadderPlan) for the tests that build a ladder without parsing a
 * command: what `arlarena ladder` gives a field the command leaves out (sokoban, no --set, no --model, --fraction 0.5,
 * --on-collapse stop, presets rather than arms, --baseline grpo), with the test's command, levels,
 * presets, seeds, steps and episodes. The keys are in LadderPlan's order, whatever order the test gives them in.
 */
import type { LadderPlan } from '../app/studies/ladder';

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
