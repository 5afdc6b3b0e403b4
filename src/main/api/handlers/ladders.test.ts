/**
 * ladders.list / ladders.get through the real router (inputs and outputs checked against the contract), on level
 * studies and runs stored in a real data dir as `arlarena ladder --study` leaves them: one level finished, one half
 * way (a run still training, one not started). And a ladder known by its ledger — committed beside its summary, and
 * resumed into the data dir as `--resume` on a fresh clone does — whose lines name runs this data dir lacks, some of
 * them reused from another study's ledger (one of which this data dir holds).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ladderRows, type LadderRunOutcome } from '../../../core/stats/index';
import { REUSE_RULE, ladderSummary, type LadderPlan } from '../../app/studies/ladder';
import { entryOfRecord, ledgerHeader, ledgerText, outcomeOfRecord, type LedgerRecord } from '../../app/studies/ledger';
import { reusedSummary } from '../../app/studies/reuse';
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
const ORPHAN_COMMAND = 'arlarena ladder --levels 2 --presets grpo,cispo --seeds 2 --steps 6 --episodes 4 --study orphan';

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
  // "orphan": level 2's CISPO finished, its baseline GRPO with no runs (a resume whose ledger lost the GRPO lines).
  const orphanRows = ladderRows([o(2, 'cispo', 1, 2), o(2, 'cispo', 2, 4)], { baseline: 'grpo' });
  await write('orphan', JSON.stringify(ladderSummary('orphan', { ...plan, command: ORPHAN_COMMAND, levels: [2] }, orphanRows)));
  await write('sokoban-arena', JSON.stringify({ command: 'arlarena arena --study sokoban-arena', study: 'sokoban-arena', rows: [] }));
  const damaged = ladderSummary('broken', plan, rows) as unknown as { rows: Array<Record<string, unknown>> };
  delete damaged.rows[1].survival;
  await write('broken', JSON.stringify(damaged));
  await write('notjson', '{"kind": "ladder",');
}

const ids: Record<string, string> = {};

/**
 * Ladder "clone" (level 2, grpo and cispo × seeds 1, 2), known by its ledger: GRPO's two seeds reused from study
 * tiny — seed 1 is tiny's level-2 GRPO run, stored in this data dir; seed 2's run is not — CISPO seed 1 trained by
 * clone in a data dir that is not this one (collapsed at step 3), CISPO seed 2 not trained yet.
 */
const CLONE_COMMAND = 'arlarena ladder --levels 2 --presets grpo,cispo --seeds 2 --steps 6 --episodes 4 --study clone --out elsewhere';
const GONE_DONOR = '20261205-010000-sokoban-grpo-0ff51e';
const ELSEWHERE = '20261205-020000-sokoban-cispo-e15e00';
const clonePlan = () =>
  testLadderPlan({
    command: CLONE_COMMAND,
    levels: [2],
    presets: ['grpo', 'cispo'],
    seeds: [1, 2],
    steps: 6,
    episodes: 4,
    stopOnCollapse: false,
  });
function cloneLine(preset: string, seed: number, runId: string, o: Partial<LedgerRecord> = {}): LedgerRecord {
  return {
    level: 2,
    env: 'sokoban',
    preset,
    seed,
    runId,
    status: 'completed',
    steps: 6,
    collapseStep: null,
    censoredAt: 6,
    collapseReason: null,
    heldOutGreedy: 0.25 * seed,
    heldOutSampled: 0.2,
    finalTrainSuccess: 0.3,
    bestTrainSuccess: 0.3,
    firstCriticalStep: null,
    stepsToThreshold: null,
    rolloutSecondsPerStep: 1.5,
    rolloutMismatch: null,
    wallSeconds: 30,
    appVersion: '0.1.0',
    appCommit: 'c0ffee',
    configHash: `hash-${preset}-${seed}`,
    ...o,
  };
}
const cloneLines = (): LedgerRecord[] => [
  cloneLine('grpo', 1, ids['2/grpo/1'], { reusedFrom: { study: 'tiny', runId: ids['2/grpo/1'] } }),
  cloneLine('grpo', 2, GONE_DONOR, { reusedFrom: { study: 'tiny', runId: GONE_DONOR } }),
  cloneLine('cispo', 1, ELSEWHERE, { collapseStep: 3, censoredAt: null, collapseReason: 'held-out 0 < 0.5 × 0.5 at step 3' }),
];

/** Clone's ledger, summary.json and README as the CLI commits them (resources/studies/clone), and a damaged ledger beside mm. */
async function writeCloneCommitted(): Promise<void> {
  const plan = clonePlan();
  const lines = cloneLines();
  const rows = ladderRows(lines.map(outcomeOfRecord), { baseline: 'grpo' });
  await mkdir(join(committedDir, 'clone'), { recursive: true });
  const summary = ladderSummary('clone', plan, rows, [{ level: 2, done: 3, planned: 4 }], reusedSummary(lines));
  await writeFile(join(committedDir, 'clone', 'summary.json'), JSON.stringify(summary, null, 1));
  await writeFile(join(committedDir, 'clone', 'ledger.jsonl'), ledgerText(ledgerHeader('clone', plan, null), lines));
  await writeFile(join(committedDir, 'mm', 'ledger.jsonl'), '{"kind":"something else"}\n');
}

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
  // Orphan's level 2: CISPO's seeds finished (collapsed at 2 and 4), its baseline GRPO has no runs.
  await writeStudy(lab.dir, {
    ...state(2, [
      { env: 'sokoban', preset: 'grpo', seed: 1, runId: null, status: null, wallSeconds: null, outcome: null },
      { env: 'sokoban', preset: 'grpo', seed: 2, runId: null, status: null, wallSeconds: null, outcome: null },
      await done(2, 'cispo', 1, 2),
      await done(2, 'cispo', 2, 4),
    ]),
    name: 'orphan-p2',
    plan: { ...state(2, []).plan, command: ORPHAN_COMMAND },
  });
  // Clone resumed from its committed ledger into this data dir (ladder.ts LedgerKeeper.take: entryOfRecord of each line).
  const lines = cloneLines();
  const fromLedger = (preset: string, seed: number): StudyEntry => {
    const line = lines.find((l) => l.preset === preset && l.seed === seed);
    return line ? entryOfRecord(line) : { env: 'sokoban', preset, seed, runId: null, status: null, wallSeconds: null, outcome: null };
  };
  await writeStudy(lab.dir, {
    ...state(2, [fromLedger('grpo', 1), fromLedger('grpo', 2), fromLedger('cispo', 1), fromLedger('cispo', 2)]),
    name: 'clone-p2',
    plan: { ...state(2, []).plan, command: CLONE_COMMAND },
  });
  await writeCloneCommitted();
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
      ['clone', 'data'],
      ['orphan', 'data'],
      ['tiny', 'data'],
      ['broken', 'committed'],
      ['clone', 'committed'],
      ['mm', 'committed'],
      ['notjson', 'committed'],
      ['orphan', 'committed'],
      ['tiny', 'committed'],
    ]);
    const item = (name: string, source: string) => res.value.find((l: any) => l.name === name && l.source === source);
    expect(item('tiny', 'data')).toMatchObject({
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
    expect(item('mm', 'committed')).toMatchObject({
      levels: [2],
      cells: ['fp32', 'int8'],
      seeds: 1,
      done: 2,
      planned: 2,
      complete: true,
      problem: null,
    });
    expect(item('broken', 'committed').problem).toBe(
      'resources/studies/broken/summary.json: not a ladder summary this lab can read (rows.1.survival: Invalid input: expected array, received undefined)',
    );
    expect(item('notjson', 'committed').problem).toMatch(/^resources\/studies\/notjson\/summary\.json: not JSON \(/);
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
    expect(missing.error).toMatchObject({
      code: 'NOT_FOUND',
      field: 'name',
      hint: 'ladders here: clone, orphan, tiny, clone (committed), mm (committed), orphan (committed), tiny (committed)',
    });
    expect((await call('ladders.get', { name: 'mm', source: 'data' })).error.code).toBe('NOT_FOUND');
    const broken = await call('ladders.get', { name: 'broken' });
    expect(broken.error).toMatchObject({ code: 'INTERNAL' });
    expect(broken.error.message).toContain('resources/studies/broken/summary.json');
    const bad = await call('ladders.get', { name: '../etc' });
    expect(bad.error.code).toBe('VALIDATION');
    expect(bad.error.field).toBe('name');
  });
});

describe('ladders.get on a ladder whose baseline has no runs at a level', () => {
  it('names the missing baseline on the cells compared with it (data dir and committed summary), not on the baseline', async () => {
    for (const source of ['data', 'committed']) {
      const res = await call('ladders.get', { name: 'orphan', source });
      expect(res.ok).toBe(true);
      const cells = res.value.cells.map((c: any) => [
        c.preset,
        c.done > 0 ? c.collapsedShare.collapsed : null,
        c.vsBaseline,
        c.baselineMissing,
      ]);
      // A committed summary holds only the rows with results; the data dir's ladder has GRPO's empty cell too.
      expect(cells).toEqual([...(source === 'data' ? [['grpo', null, null, undefined]] : []), ['cispo', 2, null, 'grpo']]);
    }
    // A ladder whose baseline has runs carries no such field.
    const tiny = (await call('ladders.get', { name: 'tiny' })).value;
    expect(tiny.cells.some((c: any) => 'baselineMissing' in c)).toBe(false);
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

describe('a ladder known by its ledger: runs this data dir lacks, and runs reused from another study', () => {
  const cellOf = (info: any, preset: string) => info.cells.find((c: any) => c.level === 2 && c.preset === preset);
  const runsOf = (info: any, preset: string) =>
    cellOf(info, preset).runs.map((r: any) => ({
      seed: r.seed,
      runId: r.runId,
      stored: r.stored,
      reusedFrom: r.reusedFrom?.study ?? null,
    }));

  it('resumed into the data dir: each run from its line, linked only where the store has it, and says where the rest is', async () => {
    const res = await call('ladders.get', { name: 'clone' });
    expect(res.ok).toBe(true);
    const info = res.value;
    expect(info).toMatchObject({ source: 'data', ledgerFile: 'elsewhere/clone/ledger.jsonl', ledgerProblem: null, notStored: 2, done: 3 });
    expect(runsOf(info, 'grpo')).toEqual([
      { seed: 1, runId: ids['2/grpo/1'], stored: true, reusedFrom: 'tiny' },
      { seed: 2, runId: GONE_DONOR, stored: false, reusedFrom: 'tiny' },
    ]);
    expect(runsOf(info, 'cispo')).toEqual([
      { seed: 1, runId: ELSEWHERE, stored: false, reusedFrom: null },
      { seed: 2, runId: null, stored: false, reusedFrom: null },
    ]);
    const [s1, s2] = cellOf(info, 'grpo').runs;
    expect(s1.where).toBeNull();
    expect(s2).toMatchObject({ status: 'completed', done: true, step: 6, collapseStep: null, heldOut: 0.5 });
    expect(s2.where).toBe(
      `reused from study tiny (its run ${GONE_DONOR}): not in this data dir — its outcome is tiny's ledger line, copied into ` +
        'elsewhere/clone/ledger.jsonl; its metrics and checkpoints are in the data dir that trained tiny',
    );
    const c1 = cellOf(info, 'cispo').runs[0];
    expect(c1).toMatchObject({ done: true, collapseStep: 3, heldOut: 0.25 });
    expect(c1.where).toBe(
      'not in this data dir: its outcome is its line in elsewhere/clone/ledger.jsonl; its metrics and checkpoints are in the data dir that trained it',
    );
    expect(cellOf(info, 'cispo').runs[1].where).toBeNull();
    // The cell and the ladder say how many were reused and from which study, as summary.json does.
    expect(cellOf(info, 'grpo').reused).toEqual([{ study: 'tiny', runs: 2 }]);
    expect(cellOf(info, 'cispo').reused).toEqual([]);
    expect(info.reused).toEqual({
      runs: 2,
      rule: REUSE_RULE,
      from: [{ study: 'tiny', runs: 2, cells: ['level 2 grpo · sokoban seeds 1,2'] }],
    });
    // The statistics count the lines' outcomes: GRPO censored at 6 twice, CISPO's one seed collapsed at 3.
    expect(cellOf(info, 'grpo')).toMatchObject({ done: 2, complete: true, collapsedShare: { collapsed: 0, n: 2 } });
    expect(cellOf(info, 'cispo')).toMatchObject({
      done: 1,
      complete: false,
      collapsedShare: { collapsed: 1, n: 1 },
      medianCollapseStep: 3,
    });
  });

  it('committed: the same runs from the ledger beside the summary, its reused account, the same statistics', async () => {
    const data = (await call('ladders.get', { name: 'clone' })).value;
    const res = await call('ladders.get', { name: 'clone', source: 'committed' });
    expect(res.ok).toBe(true);
    const info = res.value;
    expect(info).toMatchObject({
      source: 'committed',
      summaryFile: 'resources/studies/clone/summary.json',
      ledgerFile: 'resources/studies/clone/ledger.jsonl',
      ledgerProblem: null,
      notStored: 2,
      complete: false,
    });
    for (const preset of ['grpo', 'cispo']) expect(runsOf(info, preset)).toEqual(runsOf(data, preset));
    const fields = (r: any) => [r.seed, r.status, r.done, r.step, r.collapseStep, r.heldOut];
    for (const preset of ['grpo', 'cispo']) expect(cellOf(info, preset).runs.map(fields)).toEqual(cellOf(data, preset).runs.map(fields));
    expect(cellOf(info, 'grpo').runs[1].where).toContain(
      "its outcome is tiny's ledger line, copied into resources/studies/clone/ledger.jsonl",
    );
    expect(cellOf(info, 'cispo').runs[0].stopReason).toBeNull();
    expect(cellOf(info, 'cispo').seeds).toEqual([1, 2]);
    expect(cellOf(info, 'grpo').reused).toEqual([{ study: 'tiny', runs: 2 }]);
    // summary.json's own account, rule included.
    expect(info.reused).toEqual({
      runs: 2,
      rule: REUSE_RULE,
      from: [{ study: 'tiny', runs: 2, cells: ['level 2 grpo · sokoban seeds 1,2'] }],
    });
    const stats = (c: any) => [c.preset, c.collapsedShare, c.medianCollapseStep, c.survival, c.heldOutSurvivors];
    expect(info.cells.map(stats)).toEqual(data.cells.map(stats));
  });

  it("a committed ledger that cannot be read: the summary's statistics without runs, and what is wrong with the ledger", async () => {
    const mm = (await call('ladders.get', { name: 'mm' })).value;
    expect(mm.ledgerFile).toBeNull();
    expect(mm.ledgerProblem).toMatch(
      /mm\/ledger\.jsonl line 1: not a ladder ledger's header .*; its runs are not listed \(the statistics are the summary's\)$/,
    );
    expect(mm.cells.every((c: any) => c.runs.length === 0)).toBe(true);
    expect(mm.cells.find((c: any) => c.arm === 'int8').medianCollapseStep).toBe(3);
  });
});
