/**
 * The Ladder view's summary, from level studies as `arlarena ladder --study` stores them, on a constructed ladder
 * whose answers are known by hand: which runs collapsed (a critical alert, a held-out fall below the command's
 * --fraction), the Kaplan–Meier curve and median, the exact interval, the log-rank χ² summed by hand, and what a
 * ladder still training says (a running seed, a level not started).
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pressureLevel } from '../../../core/config/index';
import { LadderInfo, LadderListItem } from '../../../shared/ladders';
import type { MetricRecord } from '../../../shared/metrics';
import { projectRoot } from '../../platform/appInfo';
import {
  LADDER_CLI_DEFAULTS,
  findLadders,
  ladderCommandPlan,
  ladderInfo,
  ladderList,
  ledgerFileOf,
  type LadderRunSource,
} from './ladderInfo';
import type { StudyEntry, StudyState } from './studyFiles';

const STEPS = 10;
const COMMAND = 'arlarena ladder --levels 0,3,4 --presets grpo,sampo --seeds 3 --steps 10 --fraction 0.6 --study demo';

/** Validations every 2 steps: 0.5 throughout, or falling to `to` from step `from` on. */
function validations(fall?: { from: number; to: number }): MetricRecord[] {
  const out: MetricRecord[] = [];
  for (let step = 0; step <= STEPS; step += 2)
    out.push({ step, values: { 'val/success_rate': fall && step >= fall.from ? fall.to : 0.5, 'episode/success_rate': 0.3 } });
  return out;
}

interface FakeRun {
  status: string;
  step: number;
  metrics: MetricRecord[];
}

function entry(
  runs: Map<string, FakeRun>,
  level: number,
  preset: string,
  seed: number,
  o: { critical?: number; fall?: { from: number; to: number }; heldOut?: number; running?: number } = {},
): StudyEntry {
  const runId = `p${level}-${preset}-s${seed}`;
  const running = o.running !== undefined;
  runs.set(runId, { status: running ? 'running' : 'completed', step: o.running ?? STEPS, metrics: validations(o.fall) });
  return {
    env: 'sokoban',
    preset,
    seed,
    runId,
    status: running ? 'running' : 'completed',
    wallSeconds: running ? null : 12,
    outcome: running
      ? null
      : {
          env: 'sokoban',
          preset,
          seed,
          steps: STEPS,
          heldOutGreedy: o.heldOut ?? 0.5,
          heldOutSampled: 0.4,
          finalTrainSuccess: 0.3,
          bestTrainSuccess: 0.4,
          firstCriticalStep: o.critical ?? null,
          stepsToThreshold: null,
        },
  };
}

function levelStudy(name: string, level: number, entries: StudyEntry[], command = COMMAND): StudyState {
  return {
    version: 1,
    name: `${name}-p${level}`,
    createdAt: '2026-12-05T01:00:00.000Z',
    plan: {
      command,
      envs: ['sokoban'],
      presets: ['grpo', 'sampo'],
      seeds: [1, 2, 3],
      steps: STEPS,
      model: null,
      sets: { 'training.pressure': level },
      baseline: 'grpo',
      episodes: 20,
      threshold: 0.5,
    },
    entries,
  };
}

/**
 * Level 0: nothing collapses. Level 3: GRPO seed 1 has a critical alert at step 4, seed 2's validation falls to 0.28
 * at step 6 (below 0.6 × 0.5 = 0.3, not below the default 0.5 × 0.5), seed 3 falls to 0 at step 8 and alerts at 9
 * (collapse 8, the earlier); SAMPO seeds 1–2 survive to step 10, seed 3 is still training at step 5. Level 4: not
 * started. Plus an ordinary study that only looks like a level.
 */
function ladder(command = COMMAND): { states: StudyState[]; source: LadderRunSource; runs: Map<string, FakeRun> } {
  const runs = new Map<string, FakeRun>();
  const p0 = ['grpo', 'sampo'].flatMap((preset) => [1, 2, 3].map((seed) => entry(runs, 0, preset, seed)));
  const p3 = [
    entry(runs, 3, 'grpo', 1, { critical: 4, heldOut: 0.1 }),
    entry(runs, 3, 'grpo', 2, { fall: { from: 6, to: 0.28 }, heldOut: 0.2 }),
    entry(runs, 3, 'grpo', 3, { fall: { from: 8, to: 0 }, critical: 9, heldOut: 0 }),
    entry(runs, 3, 'sampo', 1, { heldOut: 0.4 }),
    entry(runs, 3, 'sampo', 2, { heldOut: 0.6 }),
    entry(runs, 3, 'sampo', 3, { running: 5 }),
  ];
  const impostor: StudyState = { ...levelStudy('other', 1, []), plan: { ...levelStudy('other', 1, []).plan, sets: {} } };
  const states = [levelStudy('demo', 0, p0, command), levelStudy('demo', 3, p3, command), impostor];
  const source: LadderRunSource = {
    getRun: async (id) => runs.get(id),
    readMetrics: async (id) => runs.get(id)?.metrics ?? [],
  };
  return { states, source, runs };
}

/** A survival curve: the same steps, and shares equal up to floating-point rounding. */
function expectCurve(actual: ReadonlyArray<readonly [number, number]>, expected: Array<[number, number]>): void {
  expect(actual.map(([t]) => t)).toEqual(expected.map(([t]) => t));
  actual.forEach(([, s], i) => expect(s).toBeCloseTo(expected[i][1], 12));
}

describe('ladderCommandPlan: the levels and fraction a ladder was started with', () => {
  it('reads --levels and --fraction in both spellings, and says null where the command did not', () => {
    expect(ladderCommandPlan(COMMAND)).toEqual({ levels: [0, 3, 4], fraction: 0.6 });
    expect(ladderCommandPlan('arlarena ladder --levels=4,0 --fraction=0.25 --study x')).toEqual({ levels: [0, 4], fraction: 0.25 });
    expect(ladderCommandPlan('arlarena ladder --study x')).toEqual({ levels: null, fraction: null });
    expect(ladderCommandPlan('arlarena ladder --levels a,b --fraction 2')).toEqual({ levels: null, fraction: null });
  });
});

describe('ledgerFileOf: where the ladder says its ledger is', () => {
  it("the folder its latest run wrote to (relative inside the checkout), else its command's --out, else resources/studies", () => {
    const cmd = 'arlarena ladder --study x --out first';
    expect(ledgerFileOf(cmd, 'x', join(projectRoot(), 'resources', 'studies', 'x'))).toBe('resources/studies/x/ledger.jsonl');
    expect(ledgerFileOf(cmd, 'x', join(tmpdir(), 'moved', 'x'))).toBe(join(tmpdir(), 'moved', 'x', 'ledger.jsonl'));
    expect(ledgerFileOf(cmd, 'x')).toBe('first/x/ledger.jsonl');
    expect(ledgerFileOf('arlarena ladder --study x', 'x')).toBe('resources/studies/x/ledger.jsonl');
  });
});

describe('the ladders in a data dir', () => {
  it('groups level studies by ladder name and leaves a study without the level pressure out', () => {
    const { states } = ladder();
    const found = findLadders(states);
    expect([...found.keys()]).toEqual(['demo']);
    expect(found.get('demo')!.map((l) => l.level)).toEqual([0, 3]);
    const list = ladderList(states);
    expect(list).toHaveLength(1);
    expect(LadderListItem.parse(list[0])).toEqual(list[0]);
    // 6 + 5 results out of 3 levels × 6 planned runs (level 4 not created yet).
    expect(list[0]).toMatchObject({
      name: 'demo',
      levels: [0, 3, 4],
      cells: ['grpo', 'sampo'],
      seeds: 3,
      done: 11,
      planned: 18,
      complete: false,
    });
  });
});

describe('ladderInfo on a constructed ladder', () => {
  it('has the hand-computed cells, the runs behind them, and says what is incomplete', async () => {
    const { states, source } = ladder();
    const info = (await ladderInfo(states, 'demo', source))!;
    expect(LadderInfo.parse(info)).toEqual(info);
    expect(info).toMatchObject({ name: 'demo', fraction: 0.6, baseline: 'grpo', done: 11, planned: 18, complete: false });
    expect(info.collapse).toContain('0.6 ×');
    expect(info.levels.map((l) => [l.level, l.started, l.done, l.planned, l.study])).toEqual([
      [0, true, 6, 6, 'demo-p0'],
      [3, true, 5, 6, 'demo-p3'],
      [4, false, 0, 6, 'demo-p4'],
    ]);
    // A level not started yet still shows the knobs and the why this version of the lab gives it.
    expect(info.levels[2]).toMatchObject({ overrides: { ...pressureLevel(4).overrides }, why: pressureLevel(4).why });
    expect(info.cells.map((c) => [c.level, c.preset, c.done, c.complete])).toEqual([
      [0, 'grpo', 3, true],
      [0, 'sampo', 3, true],
      [3, 'grpo', 3, true],
      [3, 'sampo', 2, false],
      [4, 'grpo', 0, false],
      [4, 'sampo', 0, false],
    ]);
    const cell = (level: number, preset: string) => info.cells.find((c) => c.level === level && c.preset === preset)!;

    const g3 = cell(3, 'grpo');
    expect(g3.runs.map((r) => [r.seed, r.runId, r.collapseStep])).toEqual([
      [1, 'p3-grpo-s1', 4],
      [2, 'p3-grpo-s2', 6],
      [3, 'p3-grpo-s3', 8],
    ]);
    expect(g3.collapsedShare.collapsed).toBe(3);
    expect(g3.collapsedShare.mean).toBe(1);
    // Clopper–Pearson with every seed collapsed: [(α/2)^(1/n), 1].
    expect(g3.collapsedShare.ci95![0]).toBeCloseTo(0.025 ** (1 / 3), 10);
    expect(g3.collapsedShare.ci95![1]).toBe(1);
    // Kaplan–Meier products (1 − 1/3 …): equal to the fractions up to rounding.
    expectCurve(g3.survival, [
      [0, 1],
      [4, 2 / 3],
      [6, 1 / 3],
      [8, 0],
    ]);
    expect(g3.medianCollapseStep).toBe(6);
    expect(g3.vsBaseline).toBeNull();
    expect(g3.heldOutSurvivors.n).toBe(0);

    const s3 = cell(3, 'sampo');
    expect(s3.survival).toEqual([
      [0, 1],
      [10, 1],
    ]);
    expect(s3.medianCollapseStep).toBeNull();
    // Log-rank of SAMPO's two finished seeds against GRPO's three, by hand: at steps 4, 6, 8 one GRPO collapse each
    // with (SAMPO, GRPO) at risk (2, 3), (2, 2), (2, 1): E = 2/5 + 1/2 + 2/3 = 47/30, V = 6/25 + 1/4 + 2/9 = 641/900,
    // O = 0, so χ² = (47/30)² / (641/900) = 2209/641.
    expect(s3.vsBaseline!.chiSquare).toBeCloseTo(2209 / 641, 10);
    expect(s3.vsBaseline!.logRankP).toBeGreaterThan(0.05);
    expect(s3.vsBaseline!.logRankP).toBeLessThan(0.07);
    expect(s3.vsBaseline!.verdict).toBe('not separable');
    expect(s3.heldOutSurvivors.n).toBe(2);
    expect(s3.heldOutSurvivors.mean).toBeCloseTo(0.5, 12);
    // The still-training seed is listed with its run and progress, outside the statistics.
    expect(s3.runs.map((r) => [r.seed, r.runId, r.status, r.done, r.step])).toEqual([
      [1, 'p3-sampo-s1', 'completed', true, 10],
      [2, 'p3-sampo-s2', 'completed', true, 10],
      [3, 'p3-sampo-s3', 'running', false, 5],
    ]);
    expect(s3.collapsedShare).toMatchObject({ collapsed: 0, n: 2, mean: 0 });

    const s0 = cell(0, 'sampo');
    expect(s0.vsBaseline).toMatchObject({ chiSquare: 0, logRankP: 1, verdict: 'not separable' });

    const g4 = cell(4, 'grpo');
    expect(g4).toMatchObject({ seeds: [1, 2, 3], done: 0, complete: false, survival: [], runs: [], medianCollapseStep: null });
    expect(g4.collapsedShare).toEqual({ collapsed: 0, n: 0, mean: null, ci95: null });
  });

  it('follows the command: without --fraction the default 0.5 applies, and a fall to 0.28 of 0.5 is no collapse', async () => {
    const { states, source } = ladder('arlarena ladder --presets grpo,sampo --seeds 3 --steps 10 --study demo');
    const info = (await ladderInfo(states, 'demo', source))!;
    expect(info.fraction).toBe(LADDER_CLI_DEFAULTS.fraction);
    // No --levels: the CLI's default levels (1, 2, 3 since the recalibration), plus the ones that exist.
    expect(info.levels.map((l) => l.level)).toEqual([0, 1, 2, 3]);
    const g3 = info.cells.find((c) => c.level === 3 && c.preset === 'grpo')!;
    expect(g3.runs.map((r) => r.collapseStep)).toEqual([4, null, 8]);
    expect(g3.medianCollapseStep).toBe(8);
  });

  it('reads the store at the time of the call: a run that finished since is counted once its outcome is recorded', async () => {
    const { states, source, runs } = ladder();
    runs.get('p3-sampo-s3')!.step = 7;
    const before = (await ladderInfo(states, 'demo', source))!;
    expect(before.cells.find((c) => c.level === 3 && c.preset === 'sampo')!.runs[2].step).toBe(7);
    const p3 = states[1];
    const done = { ...p3.entries[5], status: 'completed', outcome: { ...p3.entries[4].outcome!, seed: 3, heldOutGreedy: 0.5 } };
    const after = (await ladderInfo([states[0], { ...p3, entries: [...p3.entries.slice(0, 5), done] }], 'demo', source))!;
    const s3 = after.cells.find((c) => c.level === 3 && c.preset === 'sampo')!;
    expect(s3).toMatchObject({ done: 3, complete: true });
    expect(s3.heldOutSurvivors.n).toBe(3);
    expect(after.done).toBe(12);
  });

  it('answers null for a name that is no ladder', async () => {
    const { states, source } = ladder();
    expect(await ladderInfo(states, 'other', source)).toBeNull();
    expect(await ladderInfo(states, 'nope', source)).toBeNull();
  });
});

describe('ladderInfo on a ladder of arms that stops runs at their collapse', () => {
  /**
   * One level (2) of two arms of SAMPO, fp32 rollouts against int8 (vs fp32), two seeds each, started with
   * --on-collapse stop at fraction 0.4 (stored in the plan; the command says nothing). int8 seed 1 fell to 0.1 at
   * step 4 (< 0.4 × 0.5) and was stopped there, not evaluated; the others trained 10 steps. Rollout seconds per step:
   * fp32 2.0 and 2.2, int8 1.0 and 1.2 — the speed-up of int8 over fp32 is 2.1 / 1.1.
   */
  function armsLadder(): { states: StudyState[]; source: LadderRunSource } {
    const runs = new Map<string, FakeRun>();
    const metrics = (rollout: number, fall?: { from: number; to: number }, last = STEPS): MetricRecord[] =>
      validations(fall)
        .filter((m) => m.step <= last)
        .map((m) => ({ step: m.step, values: { ...m.values, 'perf/rollout_s': m.step === 0 ? 99 : rollout } }));
    const armEntry = (arm: string, seed: number, rollout: number, stopped?: number): StudyEntry => {
      const runId = `${arm}-s${seed}`;
      runs.set(runId, {
        status: stopped ? 'stopped' : 'completed',
        step: stopped ?? STEPS,
        metrics: metrics(rollout, stopped ? { from: stopped, to: 0.1 } : undefined, stopped ?? STEPS),
      });
      return {
        env: 'sokoban',
        preset: 'sampo',
        arm,
        seed,
        runId,
        status: stopped ? 'stopped' : 'completed',
        wallSeconds: 5,
        stopReason: stopped ? `collapsed at step ${stopped} (held-out success 0.1 < 0.4 × 0.5)` : null,
        outcome: {
          env: 'sokoban',
          preset: 'sampo',
          seed,
          steps: stopped ?? STEPS,
          heldOutGreedy: stopped ? null : 0.5,
          heldOutSampled: stopped ? null : 0.4,
          finalTrainSuccess: 0.3,
          bestTrainSuccess: 0.4,
          firstCriticalStep: null,
          stepsToThreshold: null,
        },
      };
    };
    const base = levelStudy('mm', 2, [
      armEntry('fp32', 1, 2.0),
      armEntry('fp32', 2, 2.2),
      armEntry('int8', 1, 1.0, 4),
      armEntry('int8', 2, 1.2),
    ]);
    const state: StudyState = {
      ...base,
      plan: {
        ...base.plan,
        command: 'arlarena ladder --levels 2 --presets sampo --baseline sampo --seeds 2 --study mm',
        presets: ['sampo'],
        seeds: [1, 2],
        baseline: 'sampo',
        stopOnCollapse: { fraction: 0.4 },
        arms: [
          { name: 'fp32', preset: 'sampo', sets: {}, vs: null },
          { name: 'int8', preset: 'sampo', sets: { 'compute.rolloutPrecision': 'int8' }, vs: 'fp32' },
        ],
      },
    };
    return {
      states: [state],
      source: { getRun: async (id) => runs.get(id), readMetrics: async (id) => runs.get(id)?.metrics ?? [] },
    };
  }

  it('has a cell per arm, compared with its vs arm, the stored fraction, the stopped run and the rollout speed-up', async () => {
    const { states, source } = armsLadder();
    expect(ladderList(states)[0]).toMatchObject({ name: 'mm', levels: [2], cells: ['fp32', 'int8'], done: 4, planned: 4, complete: true });
    const info = (await ladderInfo(states, 'mm', source))!;
    expect(LadderInfo.parse(info)).toEqual(info);
    expect(info).toMatchObject({ fraction: 0.4, stopOnCollapse: true, complete: true });
    expect(info.onCollapse).toMatch(/^stop/);
    expect(info.arms!.map((a) => [a.name, a.vs])).toEqual([
      ['fp32', null],
      ['int8', 'fp32'],
    ]);
    expect(info.cells.map((c) => [c.arm, c.preset, c.done])).toEqual([
      ['fp32', 'sampo', 2],
      ['int8', 'sampo', 2],
    ]);
    const [fp32, int8] = info.cells;
    expect(fp32.vsBaseline).toBeNull();
    expect(int8.runs.map((r) => [r.seed, r.status, r.collapseStep, r.step, r.heldOut])).toEqual([
      [1, 'stopped', 4, 4, null],
      [2, 'completed', null, 10, 0.5],
    ]);
    expect(int8.runs[0].stopReason).toMatch(/^collapsed at step 4/);
    expect(int8.survival).toEqual([
      [0, 1],
      [4, 0.5],
      [10, 0.5],
    ]);
    expect(int8.medianCollapseStep).toBe(4);
    // Only the survivor's held-out success counts; the stopped run was not evaluated.
    expect(int8.heldOutSurvivors).toEqual({ n: 1, mean: 0.5, ci95: null });
    expect(int8.vsBaseline).toMatchObject({ against: 'fp32', verdict: 'not separable' });
    // Rollout seconds per step, step 0 (the validation row) left out: int8 (1.0 + 1.2) / 2, fp32 (2.0 + 2.2) / 2.
    expect(int8.rolloutSecondsPerStep.mean).toBeCloseTo(1.1, 12);
    expect(int8.vsBaseline!.rolloutSpeedup).toBeCloseTo(2.1 / 1.1, 12);
  });
});

describe('ladderInfo on a data dir resumed from a committed ledger', () => {
  it("takes a ledger run's collapse step and rollout time from its entry: its run is not in this data dir", async () => {
    const { states, source, runs } = ladder();
    const before = (await ladderInfo(states, 'demo', source))!;
    // Level 3's GRPO runs came from the ledger: no run in the store, their figures on the entries.
    const p3 = states[1];
    for (const e of p3.entries.filter((x) => x.preset === 'grpo')) {
      const collapse = before.cells.find((c) => c.level === 3 && c.preset === 'grpo')!.runs.find((r) => r.seed === e.seed)!.collapseStep;
      e.ledger = { collapseStep: collapse, rolloutSeconds: 0.5 * e.seed, rolloutMismatch: null };
      runs.delete(e.runId!);
    }
    const after = (await ladderInfo(states, 'demo', source))!;
    const g3 = after.cells.find((c) => c.level === 3 && c.preset === 'grpo')!;
    expect(g3.runs.map((r) => [r.seed, r.collapseStep, r.done, r.status])).toEqual([
      [1, 4, true, 'completed'],
      [2, 6, true, 'completed'],
      [3, 8, true, 'completed'],
    ]);
    expect(g3.survival).toEqual(before.cells.find((c) => c.level === 3 && c.preset === 'grpo')!.survival);
    expect(g3.rolloutSecondsPerStep.mean).toBe(1);
  });
});
