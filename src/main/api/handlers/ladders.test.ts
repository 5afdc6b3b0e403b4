/**
 * ladders.list / ladders.get through the real router (inputs and outputs checked against the contract), on level
 * studies and runs stored in a real data dir as `arlarena ladder --study` leaves them: one level finished, one half
 * way (a run still training, one not started).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ladderRows, type LadderRunOutcome } from '../../../core/stats/index';
import { ladderSummary, type LadderPlan } from '../../app/studies/ladder';
import { writeStudy, type StudyEntry, type StudyState } from '../../app/studies/studyFiles';
import type { RunStore } from '../../store/runStore';
import { testLadderPlan } from '../../testing/ladderPlan';
import { openHandlerTestLab, type HandlerTestLab } from '../../testing/testLab';
import { createLaddersHandlers } from './ladders';

let lab: HandlerTestLab;
/** The committed summaries (resources/studies in a checkout): a temporary folder here. */
let committedDir: string;
const call = async (m: string, input?: unknown): Promise<any> => lab.call(m, input);
const COMMAND = 'arlarena ladder --levels 0,2 --presets grpo,cispo --seeds 2 --steps 6 --episodes 4 --study tiny';

/** A stored run with validations every 2 steps (held-out success `val` until `fallAt`, then 0). */
async function storedRun(store: RunStore, preset: string, seed: number, fallAt: number | null, step = 6): Promise<string> {
  const rec = await store.createRun({ preset, env: 'sokoban', seed, config: { preset, seed }, totalSteps: 6, status: 'running' });
  await store.appendMetrics(
    rec.id,
    [0, 2, 4, 6]
      .filter((s) => s <= step)
      .map((s) => ({ step: s, values: { 'val/success_rate': fallAt !== null && s >= fallAt ? 0 : 0.5 } })),
  );
  await store.flush(rec.id);
  await store.updateRun(rec.id, step === 6 ? { status: 'completed', step } : { step });
  return rec.id;
}

function outcome(preset: string, seed: number): NonNullable<StudyEntry['outcome']> {
  return {
    env: 'sokoban',
    preset,
    seed,
    steps: 6,
    heldOutGreedy: 0.25 * seed,
    heldOutSampled: 0.2,
    finalTrainSuccess: 0.3,
    bestTrainSuccess: 0.3,
    firstCriticalStep: null,
    stepsToThreshold: null,
  };
}

function state(level: number, entries: StudyEntry[]): StudyState {
  return {
    version: 1,
    name: `tiny-p${level}`,
    createdAt: '2026-12-05T01:00:00.000Z',
    plan: {
      command: COMMAND,
      envs: ['sokoban'],
      presets: ['grpo', 'cispo'],
      seeds: [1, 2],
      steps: 6,
      model: null,
      sets: { 'training.pressure': level },
      baseline: 'grpo',
      episodes: 4,
      threshold: 0.5,
    },
    entries,
  };
}

/**
 * The summaries a checkout commits, written by the CLI's own ladderSummary: "tiny" — the data dir's ladder as its
 * summary would be once level 0 and GRPO seed 1 of level 2 are counted (so the two can be compared), a ladder of
 * arms, an arena study's summary (not a ladder), and a ladder summary damaged by hand.
 */
async function writeCommitted(): Promise<void> {
  const plan = testLadderPlan({
    command: COMMAND,
    levels: [0, 2],
    presets: ['grpo', 'cispo'],
    seeds: [1, 2],
    steps: 6,
    episodes: 4,
    stopOnCollapse: false,
  });
  const o = (level: number, preset: string, seed: number, collapseStep: number | null, lastStep = 6): LadderRunOutcome => ({
    env: 'sokoban',
    preset,
    level,
    seed,
    lastStep,
    collapseStep,
    heldOut: 0.25 * seed,
    rolloutSeconds: null,
  });
  const rows = ladderRows([o(0, 'grpo', 1, null), o(0, 'grpo', 2, null), o(0, 'cispo', 1, 2), o(0, 'cispo', 2, 4), o(2, 'grpo', 1, null)], {
    baseline: 'grpo',
  });
  const write = async (name: string, body: string) => {
    await mkdir(join(committedDir, name), { recursive: true });
    await writeFile(join(committedDir, name, 'summary.json'), body);
  };
  await write('tiny', JSON.stringify(ladderSummary('tiny', plan, rows), null, 1));
  const arms: LadderPlan['arms'] = [
    { name: 'fp32', preset: 'sampo', sets: {}, vs: null },
    { name: 'int8', preset: 'sampo', sets: { 'compute.rolloutPrecision': 'int8' }, vs: 'fp32' },
  ];
  const armRows = ladderRows(
    [
      { ...o(2, 'sampo', 1, null), arm: 'fp32', rolloutSeconds: 2 },
      { ...o(2, 'sampo', 1, 3), arm: 'int8', rolloutSeconds: 1 },
    ],
    { baseline: 'sampo', vs: { fp32: null, int8: 'fp32' } },
  );
  const mmCommand = 'arlarena ladder --levels 2 --seeds 1 --steps 6 --episodes 20 --fraction 0.4 --arms-file x.arms --study mm';
  await write(
    'mm',
    JSON.stringify(
      ladderSummary(
        'mm',
        { ...plan, command: mmCommand, levels: [2], presets: ['sampo'], seeds: [1], arms, stopOnCollapse: true },
        armRows,
      ),
    ),
  );
  await write('sokoban-arena', JSON.stringify({ command: 'arlarena arena --study sokoban-arena', study: 'sokoban-arena', rows: [] }));
  const damaged = ladderSummary('broken', plan, rows) as unknown as { rows: Array<Record<string, unknown>> };
  delete damaged.rows[1].survival;
  await write('broken', JSON.stringify(damaged));
  await write('notjson', '{"kind": "ladder",');
}

const ids: Record<string, string> = {};

beforeAll(async () => {
  committedDir = await mkdtemp(join(tmpdir(), 'arl-ladders-committed-'));
  await writeCommitted();
  lab = await openHandlerTestLab('arl-ladders-', (s) =>
    createLaddersHandlers(s, { committed: { dir: committedDir, shownAs: 'resources/studies' } }),
  );
  const { store } = await lab.services.lab();
  const done = async (level: number, preset: string, seed: number, fallAt: number | null): Promise<StudyEntry> => {
    const id = await storedRun(store, preset, seed, fallAt);
    ids[`${level}/${preset}/${seed}`] = id;
    return { env: 'sokoban', preset, seed, runId: id, status: 'completed', wallSeconds: 3, outcome: outcome(preset, seed) };
  };
  // Level 0 finished: CISPO's seeds both lose their held-out success (at steps 2 and 4), GRPO's do not.
  await writeStudy(
    lab.dir,
    state(0, [await done(0, 'grpo', 1, null), await done(0, 'grpo', 2, null), await done(0, 'cispo', 1, 2), await done(0, 'cispo', 2, 4)]),
  );
  // Level 2 half way: GRPO seed 1 finished, seed 2 training at step 4; CISPO not started.
  const training = await storedRun(store, 'grpo', 2, null, 4);
  ids['2/grpo/2'] = training;
  await writeStudy(
    lab.dir,
    state(2, [
      await done(2, 'grpo', 1, null),
      { env: 'sokoban', preset: 'grpo', seed: 2, runId: training, status: 'running', wallSeconds: null, outcome: null },
      { env: 'sokoban', preset: 'cispo', seed: 1, runId: null, status: null, wallSeconds: null, outcome: null },
      { env: 'sokoban', preset: 'cispo', seed: 2, runId: null, status: null, wallSeconds: null, outcome: null },
    ]),
  );
});
afterAll(async () => {
  await lab?.close();
  await rm(committedDir, { recursive: true, force: true });
});

describe('ladders.* on a stored ladder', () => {
  it('lists the ladder with its progress', async () => {
    const res = await call('ladders.list');
    expect(res.ok).toBe(true);
    expect(res.value.map((l: any) => [l.name, l.source])).toEqual([
      ['tiny', 'data'],
      ['broken', 'committed'],
      ['mm', 'committed'],
      ['notjson', 'committed'],
      ['tiny', 'committed'],
    ]);
    expect(res.value[0]).toMatchObject({
      levels: [0, 2],
      envs: ['sokoban'],
      cells: ['grpo', 'cispo'],
      seeds: 2,
      done: 5,
      planned: 8,
      complete: false,
      problem: null,
    });
    // The committed ones: what their summaries hold, each complete; the damaged ones say what is wrong, by file.
    expect(res.value[2]).toMatchObject({
      levels: [2],
      cells: ['fp32', 'int8'],
      seeds: 1,
      done: 2,
      planned: 2,
      complete: true,
      problem: null,
    });
    expect(res.value[1].problem).toBe(
      'resources/studies/broken/summary.json: not a ladder summary this lab can read (rows.1.survival: Invalid input: expected array, received undefined)',
    );
    expect(res.value[3].problem).toMatch(/^resources\/studies\/notjson\/summary\.json: not JSON \(/);
  });

  it('gives the cells from the stored runs, the runs behind each curve, and the incomplete ones', async () => {
    const res = await call('ladders.get', { name: 'tiny' });
    expect(res.ok).toBe(true);
    const info = res.value;
    const cell = (level: number, preset: string) => info.cells.find((c: any) => c.level === level && c.preset === preset);
    const c0 = cell(0, 'cispo');
    expect(c0.runs.map((r: any) => [r.runId, r.collapseStep])).toEqual([
      [ids['0/cispo/1'], 2],
      [ids['0/cispo/2'], 4],
    ]);
    expect(c0.survival).toEqual([
      [0, 1],
      [2, 0.5],
      [4, 0],
    ]);
    expect(c0.medianCollapseStep).toBe(2);
    expect(c0.collapsedShare).toMatchObject({ collapsed: 2, n: 2, mean: 1 });
    // Two collapses (steps 2, 4; at risk (2, 2) then (1, 2)) against none: E = 2/4 + 1/3 = 5/6, V = 1/4 + 2/9 = 17/36,
    // O = 2, so χ² = (7/6)² / (17/36) = 49/17.
    expect(c0.vsBaseline.chiSquare).toBeCloseTo(49 / 17, 10);
    expect(cell(0, 'grpo')).toMatchObject({
      complete: true,
      survival: [
        [0, 1],
        [6, 1],
      ],
      vsBaseline: null,
    });
    expect(cell(0, 'grpo').heldOutSurvivors).toMatchObject({ n: 2, mean: 0.375 });

    const g2 = cell(2, 'grpo');
    expect(g2).toMatchObject({ done: 1, complete: false });
    expect(g2.runs.map((r: any) => [r.runId, r.status, r.done, r.step])).toEqual([
      [ids['2/grpo/1'], 'completed', true, 6],
      [ids['2/grpo/2'], 'running', false, 4],
    ]);
    const c2 = cell(2, 'cispo');
    expect(c2).toMatchObject({ done: 0, complete: false, survival: [], vsBaseline: null });
    expect(c2.runs.map((r: any) => [r.seed, r.runId, r.done])).toEqual([
      [1, null, false],
      [2, null, false],
    ]);
    expect(info.levels.map((l: any) => [l.level, l.started, l.done, l.planned])).toEqual([
      [0, true, 4, 4],
      [2, true, 1, 4],
    ]);
  });

  it('answers NOT_FOUND naming the ladders there, and VALIDATION for a malformed name', async () => {
    const missing = await call('ladders.get', { name: 'nope' });
    expect(missing.ok).toBe(false);
    expect(missing.error).toMatchObject({ code: 'NOT_FOUND', field: 'name', hint: 'ladders here: tiny, mm (committed), tiny (committed)' });
    expect((await call('ladders.get', { name: 'mm', source: 'data' })).error.code).toBe('NOT_FOUND');
    const broken = await call('ladders.get', { name: 'broken' });
    expect(broken.error).toMatchObject({ code: 'INTERNAL' });
    expect(broken.error.message).toContain('resources/studies/broken/summary.json');
    const bad = await call('ladders.get', { name: '../etc' });
    expect(bad.error.code).toBe('VALIDATION');
    expect(bad.error.field).toBe('name');
  });
});

describe('ladders.get on a committed summary (a fresh clone: statistics, no runs)', () => {
  it('has the numbers of the same ladder read from its runs, with no runs to link and no χ²', async () => {
    const data = (await call('ladders.get', { name: 'tiny' })).value;
    const res = await call('ladders.get', { name: 'tiny', source: 'committed' });
    expect(res.ok).toBe(true);
    const committed = res.value;
    expect(data.source).toBe('data');
    expect(committed).toMatchObject({
      source: 'committed',
      summaryFile: 'resources/studies/tiny/summary.json',
      createdAt: null,
      complete: true,
      steps: 6,
      episodes: 4,
      fraction: 0.5,
      stopOnCollapse: false,
    });
    expect(committed.levels.map((l: any) => [l.level, l.done, l.planned])).toEqual([
      [0, 4, 4],
      [2, 1, 1],
    ]);
    const stats = (c: any) => ({
      cell: [c.level, c.preset],
      collapsedShare: c.collapsedShare,
      median: c.medianCollapseStep,
      survival: c.survival,
      vs: c.vsBaseline && [c.vsBaseline.logRankP, c.vsBaseline.verdict, c.vsBaseline.against],
      heldOut: c.heldOutSurvivors,
    });
    // Every cell with a result in the data dir has the same statistics in the summary.
    expect(committed.cells.map(stats)).toEqual(data.cells.filter((c: any) => c.done > 0).map(stats));
    for (const c of committed.cells) {
      expect(c.runs).toEqual([]);
      if (c.vsBaseline) expect(c.vsBaseline.chiSquare).toBeNull();
    }
  });

  it('reads a ladder of arms: each compared with its vs arm, the fraction and stop-on-collapse it ran with, the rollout speed-up', async () => {
    const mm = (await call('ladders.get', { name: 'mm' })).value;
    expect(mm).toMatchObject({ source: 'committed', fraction: 0.4, stopOnCollapse: true, steps: 6, episodes: 20, presets: ['sampo'] });
    expect(mm.arms.map((a: any) => [a.name, a.vs])).toEqual([
      ['fp32', null],
      ['int8', 'fp32'],
    ]);
    const int8 = mm.cells.find((c: any) => c.arm === 'int8');
    expect(int8).toMatchObject({ collapsedShare: { collapsed: 1, n: 1, mean: 1 }, medianCollapseStep: 3 });
    expect(int8.survival).toEqual([
      [0, 1],
      [3, 0],
    ]);
    expect(int8.vsBaseline).toMatchObject({ against: 'fp32', chiSquare: null, rolloutSpeedup: 2 });
    expect(int8.rolloutSecondsPerStep.mean).toBe(1);
  });
});
