/**
 * A stored study as the Study view shows it (src/shared/studies.ts): the same statistics the CLI prints. In a study
 * of arms (plan.arms) the cells are the arms: their names stand where a study of presets has the presets.
 */
import { arenaCells, type ArenaRunOutcome } from '../../../core/stats/index';
import type { StudyInfo } from '../../../shared/studies';
import type { StudyState } from './studyFiles';

export function studyInfo(state: StudyState): StudyInfo {
  const outcomes = state.entries
    .map((e) => (e.outcome && e.arm !== undefined ? { ...e.outcome, preset: e.arm } : e.outcome))
    .filter((o): o is ArenaRunOutcome => o !== null);
  const cells = arenaCells(outcomes, { baseline: state.plan.baseline, threshold: state.plan.threshold });
  const iv = (s: { mean: number | null; ci95: readonly [number, number] | null; n: number }) => ({
    mean: s.mean,
    ci95: s.ci95 ? ([s.ci95[0], s.ci95[1]] as [number, number]) : null,
    n: s.n,
  });
  return {
    name: state.name,
    command: state.plan.command,
    createdAt: state.createdAt,
    baseline: state.plan.baseline,
    envs: state.plan.envs,
    presets: state.plan.arms ? state.plan.arms.map((a) => a.name) : state.plan.presets,
    seeds: state.plan.seeds,
    steps: state.plan.steps,
    episodes: state.plan.episodes,
    done: outcomes.length,
    planned: state.entries.length,
    rows: cells.map((c) => ({
      env: c.env,
      preset: c.preset,
      seeds: [...c.seeds],
      steps: c.steps,
      heldOutGreedy: iv(c.heldOutGreedy),
      heldOutSampled: iv(c.heldOutSampled),
      vsBaseline: c.vsBaseline
        ? {
            diff: c.vsBaseline.diff,
            ci95: c.vsBaseline.ci95 ? [c.vsBaseline.ci95[0], c.vsBaseline.ci95[1]] : null,
            p: c.vsBaseline.p,
            verdict: c.vsBaseline.verdict,
            seedsFor80Power: c.vsBaseline.seedsFor80Power,
          }
        : null,
      criticalAlertShare: c.criticalAlertShare,
    })),
    runs: state.entries.map((e) => ({
      env: e.env,
      preset: e.arm ?? e.preset,
      seed: e.seed,
      runId: e.runId,
      status: e.status,
      done: e.outcome !== null,
    })),
  };
}
