/**
 * A constructed pressure-ladder level for the tests of the ladder's ledger, reuse and resume (ledger.test,
 * reuse.test, ladderLedger.test): level 2 of grpo and cispo × seeds 1..3, 12 steps, 4 held-out episodes, with runs
 * in a run store whose metrics make a known outcome — cispo seeds 1 and 2 stopped at their collapse at step 6 (a
 * held-out fall), grpo seed 2 a critical alert at step 9, the rest censored at 12 — and a runLadder whose trainer is a
 * stand-in that fails at once (mock), so a test sees which runs the ladder hands it without training any.
 */
import type { RunConfig } from '../../core/config/index';
import type { ComputeBackendInfo } from '../../shared/api';
import type { MetricRecord } from '../../shared/metrics';
import { levelPlan, runLadder, type LadderOptions, type LadderPlan } from '../app/studies/ladder';
import { writeStudy, type StudyEntry, type StudyPlan, type StudyState } from '../app/studies/studyFiles';
import { RunStore } from '../store/index';
import { testLadderPlan } from './ladderPlan';

export const LADDER_LEVEL = 2;
export const LADDER_SEEDS = [1, 2, 3];
export const LADDER_PRESETS = ['grpo', 'cispo'];

/** The constructed ladder's plan under study name `name` (the command as `arlarena ladder` records it). */
export function constructedLadderPlan(name: string): LadderPlan {
  return testLadderPlan({
    command: `arlarena ladder --levels ${LADDER_LEVEL} --presets ${LADDER_PRESETS.join(',')} --seeds ${LADDER_SEEDS.length} --steps 12 --episodes 4 --study ${name}`,
    levels: [LADDER_LEVEL],
    presets: LADDER_PRESETS,
    seeds: LADDER_SEEDS,
    steps: 12,
    episodes: 4,
  });
}

/**
 * A stand-in resolved config with what makes a run: preset, env, seed, steps, level and an arm's overrides (an arm
 * without overrides resolves as its bare preset does, as the CLI's ladderRunConfig); the ledger hashes it as the run
 * record stores it.
 */
export function constructedRunConfig(p: Pick<StudyPlan, 'sets' | 'arms'>, e: { preset: string; seed: number; arm?: string }): RunConfig {
  const sets = p.arms?.find((a) => a.name === e.arm)?.sets ?? {};
  return {
    preset: e.preset,
    env: { name: 'sokoban' },
    seed: e.seed,
    training: { steps: 12, pressure: p.sets['training.pressure'] },
    ...(Object.keys(sets).length > 0 ? { overrides: sets } : {}),
  } as unknown as RunConfig;
}

/**
 * One run's metrics: validation 0.5 at step 0, rollout seconds and engine gap at every RL step, validations every 3
 * steps; cispo's validation falls below half its start at step 6 for seeds 1 and 2 (stopped there), grpo's does not.
 */
export function constructedMetrics(preset: string, seed: number): { records: MetricRecord[]; last: number } {
  const falls = preset === 'cispo' && seed < 3;
  const last = falls ? 6 : 12;
  const records: MetricRecord[] = [{ step: 0, values: { 'val/success_rate': 0.5 } }];
  for (let step = 1; step <= last; step++) {
    const values: Record<string, number> = {
      'perf/rollout_s': 0.5 + 0.1 * seed + (preset === 'cispo' ? 0.03 * step : 0.01 * step),
      'mismatch/logprob_abs_mean': 1e-7 * (seed + step / 7),
      'episode/success_rate': 0.25,
    };
    if (step % 3 === 0) values['val/success_rate'] = falls && step === 6 ? 0.125 : 0.5 - 0.01 * step;
    records.push({ step, values });
  }
  return { records, last };
}

/**
 * The level's runs in the run store of `dataDir`, their records made by lab `appVersion` (commit c0ffee) and, where
 * given, with `backend` (absent: the store's 'unknown'); each record's config `config`'s (default the stand-in
 * constructedRunConfig; the CLI's tests give the config the CLI resolves, whose hash it checks). The study entries of
 * the finished level.
 */
export async function storeConstructedRuns(
  dataDir: string,
  o: { appVersion: string; backend?: ComputeBackendInfo; config?: (preset: string, seed: number) => RunConfig },
): Promise<StudyEntry[]> {
  const configOf =
    o.config ?? ((preset: string, seed: number) => constructedRunConfig({ sets: { 'training.pressure': LADDER_LEVEL } }, { preset, seed }));
  const store = await RunStore.open(dataDir);
  const entries: StudyEntry[] = [];
  try {
    for (const preset of LADDER_PRESETS)
      for (const seed of LADDER_SEEDS) {
        const { records, last } = constructedMetrics(preset, seed);
        const rec = await store.createRun({
          preset,
          env: 'sokoban',
          seed,
          config: configOf(preset, seed) as unknown as Record<string, unknown>,
          totalSteps: 12,
          appVersion: o.appVersion,
          appCommit: 'c0ffee',
          ...(o.backend ? { backend: o.backend } : {}),
        });
        await store.appendMetrics(rec.id, records);
        const stopped = last < 12;
        const reason = stopped ? 'collapsed at step 6 (held-out success 0.125 < 0.5 × 0.5, the step-0 validation)' : null;
        await store.updateRun(rec.id, { status: stopped ? 'stopped' : 'completed', step: last, error: reason });
        entries.push({
          env: 'sokoban',
          preset,
          seed,
          runId: rec.id,
          status: stopped ? 'stopped' : 'completed',
          wallSeconds: 10 + seed,
          outcome: {
            env: 'sokoban',
            preset,
            seed,
            steps: last,
            heldOutGreedy: stopped ? null : 0.25 * seed,
            heldOutSampled: stopped ? null : 0.2,
            finalTrainSuccess: 0.25,
            bestTrainSuccess: 0.25,
            // grpo seed 2 had a critical alert at step 9 (a collapse the validations did not show)
            firstCriticalStep: preset === 'grpo' && seed === 2 ? 9 : null,
            stepsToThreshold: null,
          },
          ...(reason ? { stopReason: reason } : {}),
        });
      }
  } finally {
    await store.close();
  }
  return entries;
}

/** A data dir holding the finished level of ladder `name` as `arlarena ladder` leaves it: the runs and its study.json. */
export async function finishedConstructedLadder(
  dataDir: string,
  name: string,
  o: { appVersion?: string; config?: (preset: string, seed: number) => RunConfig } = {},
): Promise<StudyState> {
  const state: StudyState = {
    version: 1,
    name: `${name}-p${LADDER_LEVEL}`,
    createdAt: '2026-12-05T00:00:00.000Z',
    plan: levelPlan(constructedLadderPlan(name), LADDER_LEVEL),
    entries: await storeConstructedRuns(dataDir, { appVersion: o.appVersion ?? '0.1.0', ...(o.config ? { config: o.config } : {}) }),
  };
  await writeStudy(dataDir, state);
  return state;
}

/**
 * runLadder with the constructed configs and a stand-in trainer that fails at once (mock): its result, its log lines
 * and the run ids it handed the trainer.
 */
export async function runStandInLadder(
  o: Pick<LadderOptions, 'dataDir' | 'name' | 'plan' | 'resume' | 'reportDir' | 'ledger' | 'reuse' | 'donors'>,
): Promise<Awaited<ReturnType<typeof runLadder>> & { lines: string[]; spawned: string[] }> {
  const lines: string[] = [];
  const spawned: string[] = [];
  const result = await runLadder({
    ...o,
    parallel: 1,
    jobs: {
      spawn: (id) => {
        spawned.push(id);
        throw new Error('no trainer in this test');
      },
      validateConfig: () => [],
    },
    configOf: constructedRunConfig,
    log: (l) => lines.push(l),
  });
  return { ...result, lines, spawned };
}
