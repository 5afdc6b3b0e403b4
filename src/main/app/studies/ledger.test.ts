/**
 * The ladder's committed ledger (ledger.ts) on constructed ladders: the rows from the ledger alone equal the rows
 * from the stored runs; a resume on a data dir without the ladder takes the ledger's runs as done and trains only
 * the rest; the text is stable and ordered; a torn last line is left out and reported, a bad line elsewhere or two
 * different records of one run are refused; a plan that differs is named field by field.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ladderRows, type LadderRunOutcome } from '../../../core/stats/index';
import { RunStore } from '../../store/index';
import { LedgerKeeper, armBaselines, ladderRun, ladderSummary, type LadderPlan } from './ladder';
import {
  LedgerError,
  configHash,
  ledgerHeader,
  ledgerPlanMismatches,
  ledgerPlanOf,
  ledgerText,
  outcomeOfRecord,
  parseLedger,
  readLedger,
  type LedgerRecord,
} from './ledger';
import { readStudy, type StudyState } from './studyFiles';
import {
  LADDER_LEVEL,
  constructedLadderPlan,
  constructedRunConfig,
  finishedConstructedLadder,
  runStandInLadder,
} from '../../testing/ladderRuns';

const LEVEL = LADDER_LEVEL;
const plan = constructedLadderPlan('lg');
const configOf = constructedRunConfig;
const finishedLadder = (dataDir: string): Promise<StudyState> => finishedConstructedLadder(dataDir, 'lg');

/**
 * `--resume` of the ladder on `dataDir` (a data dir without it) from the ledger in `report`, with a stand-in trainer
 * that fails at once (mock): what matters is which runs the ladder asks it to train. runLadder's result, its log
 * lines and the runs it handed the trainer.
 */
async function resumeFromLedger(dataDir: string, report: string) {
  return runStandInLadder({ dataDir, name: 'lg', plan, resume: true, reportDir: report, ledger: await readLedger(report) });
}

describe('a constructed ladder: the ledger gives the rows the stored runs give', () => {
  let dir: string;
  let state: StudyState;
  let fromStore: LadderRunOutcome[];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'arl-ledger-'));
    state = await finishedLadder(join(dir, 'data'));
    fromStore = [];
    for (const e of state.entries) fromStore.push((await ladderRun(join(dir, 'data'), e, LEVEL, plan.fraction)).outcome);
    const keeper = new LedgerKeeper(join(dir, 'data'), join(dir, 'report'), 'lg', plan, null);
    expect(await keeper.addFinished(LEVEL, state)).toBe(6);
    await keeper.save();
    await keeper.writeReport();
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('each line carries the collapse or censoring step, the reason, held-out success, timings and provenance', async () => {
    const ledger = (await readLedger(join(dir, 'report')))!;
    expect(ledger.torn).toBeNull();
    expect(ledger.records).toHaveLength(6);
    const cispo1 = ledger.records.find((r) => r.preset === 'cispo' && r.seed === 1)!;
    expect(cispo1).toMatchObject({ status: 'stopped', steps: 6, collapseStep: 6, censoredAt: null, heldOutGreedy: null });
    expect(cispo1.collapseReason).toMatch(/^collapsed at step 6 /);
    const grpo2 = ledger.records.find((r) => r.preset === 'grpo' && r.seed === 2)!;
    expect(grpo2).toMatchObject({
      status: 'completed',
      collapseStep: 9,
      censoredAt: null,
      collapseReason: 'first critical alert at step 9',
    });
    const grpo3 = ledger.records.find((r) => r.preset === 'grpo' && r.seed === 3)!;
    expect(grpo3).toMatchObject({ collapseStep: null, censoredAt: 12, heldOutGreedy: 0.75, wallSeconds: 13, appVersion: '0.1.0' });
    expect(grpo3.configHash).toBe(configHash(configOf({ sets: { 'training.pressure': LEVEL } }, { preset: 'grpo', seed: 3 })));
    expect(grpo3.rolloutSecondsPerStep).toBeCloseTo(0.8 + 0.01 * 6.5, 12);
  });

  it('ladderRows over the ledger alone equal ladderRows over the stored runs; summary.json holds those rows', async () => {
    const ledger = (await readLedger(join(dir, 'report')))!;
    const opts = { baseline: plan.baseline, vs: armBaselines(plan) };
    const rowsStore = ladderRows(fromStore, opts);
    expect(ladderRows(ledger.records.map(outcomeOfRecord), opts)).toEqual(rowsStore);
    // the case has collapses, censoring and a separable cell (not a vacuous equality)
    expect(rowsStore.map((r) => [r.preset, r.collapsedShare.mean, r.medianCollapseStep])).toEqual([
      ['grpo', 1 / 3, null],
      ['cispo', 2 / 3, 6],
    ]);
    const summary = JSON.parse(await readFile(join(dir, 'report', 'summary.json'), 'utf8'));
    expect(summary.rows).toEqual(JSON.parse(JSON.stringify(ladderSummary('lg', plan, rowsStore).rows)));
    expect(summary.progress).toEqual([{ level: LEVEL, done: 6, planned: 6 }]);
    expect(await readFile(join(dir, 'report', 'README.md'), 'utf8')).toContain('Runs finished: level 2: 6 of 6.');
  });

  it('--resume on a data dir without the ladder takes every ledger run as done and trains nothing', async () => {
    const fresh = join(dir, 'fresh');
    const { complete, outcomes, lines, spawned } = await resumeFromLedger(fresh, join(dir, 'report'));
    expect(spawned).toEqual([]);
    expect(complete).toBe(true);
    expect(lines[0]).toBe('level 2: 6 of 6 runs from the committed ledger');
    expect(ladderRows(outcomes, { baseline: 'grpo' })).toEqual(ladderRows(fromStore, { baseline: 'grpo' }));
    // the level's study.json in the new data dir holds the ledger's runs, with their figures (no run to read them from)
    const back = await readStudy(fresh, 'lg-p2');
    expect(back.entries.every((e) => e.outcome && e.ledger)).toBe(true);
    expect(back.entries.find((e) => e.preset === 'cispo' && e.seed === 1)).toMatchObject({
      status: 'stopped',
      ledger: { collapseStep: 6 },
      stopReason: expect.stringMatching(/^collapsed at step 6/),
    });
  });

  it('a finished entry whose run is gone from the store is named with the fix, not counted from no metrics', async () => {
    const gone: StudyState = { ...state, entries: [{ ...state.entries[0], runId: 'deleted-run' }] };
    const keeper = new LedgerKeeper(join(dir, 'data'), join(dir, 'report-gone'), 'lg', plan, null);
    await expect(keeper.addFinished(LEVEL, gone)).rejects.toThrow(
      /^run deleted-run \(level 2 · grpo · sokoban · seed 1\) has a result in its level's study\.json but is not in .*'s run store \(deleted\?\).*set that entry's runId and outcome to null/,
    );
  });

  it('a ledger without one run: that run alone goes to the trainer (a mock trainer that fails at once)', async () => {
    const report = join(dir, 'report-5');
    const full = (await readLedger(join(dir, 'report')))!;
    const five = full.records.filter((r) => !(r.preset === 'cispo' && r.seed === 3));
    await rm(report, { recursive: true, force: true });
    await new LedgerKeeper(join(dir, 'none'), report, 'lg', plan, { ...full, records: five }).save();
    const fresh = join(dir, 'fresh-5');
    const { complete, lines, spawned } = await resumeFromLedger(fresh, report);
    expect(lines[0]).toBe('level 2: 5 of 6 runs from the committed ledger');
    expect(complete).toBe(false);
    const store = await RunStore.open(fresh);
    try {
      const runs = await store.listRuns();
      expect(runs.map((r) => [r.preset, r.seed])).toEqual([['cispo', 3]]);
      expect(spawned).toEqual([runs[0].id]);
    } finally {
      await store.close();
    }
    // the ledger still holds the five, the failed run did not join it
    expect((await readLedger(report))!.records).toHaveLength(5);
  });
});

describe('the ledger text', () => {
  const rec = (preset: string, seed: number, level = 1): LedgerRecord => ({
    level,
    env: 'sokoban',
    preset,
    seed,
    runId: `r-${preset}-${seed}-${level}`,
    status: 'completed',
    steps: 40,
    collapseStep: null,
    censoredAt: 40,
    collapseReason: null,
    heldOutGreedy: 0.3,
    heldOutSampled: 0.25,
    finalTrainSuccess: 0.5,
    bestTrainSuccess: 0.5,
    firstCriticalStep: null,
    stepsToThreshold: 3,
    rolloutSecondsPerStep: 1.25,
    rolloutMismatch: null,
    wallSeconds: 300,
    appVersion: '0.1.0',
    appCommit: 'abc',
    configHash: 'sha256:0123456789abcdef',
  });
  const header = ledgerHeader('lg', { ...plan, levels: [1, 2] }, null);
  const records = [rec('cispo', 2, 2), rec('grpo', 2), rec('cispo', 1), rec('grpo', 1), rec('grpo', 1, 2)];

  it('is one header line, then one line per run in level, cell (plan order) and seed order, whatever order they came in', () => {
    const text = ledgerText(header, records);
    expect(ledgerText(header, [...records].reverse())).toBe(text);
    const lines = text.trimEnd().split('\n');
    expect(lines).toHaveLength(6);
    expect(lines.slice(1).map((l) => JSON.parse(l).runId)).toEqual([
      'r-grpo-1-1',
      'r-grpo-2-1',
      'r-cispo-1-1',
      'r-grpo-1-2',
      'r-cispo-2-2',
    ]);
    // keys in the schema's order: a record's line reads the same whoever wrote it
    expect(lines[1].startsWith('{"level":1,"env":"sokoban","preset":"grpo","seed":1,"runId":')).toBe(true);
    expect(parseLedger(text, 'L').records).toHaveLength(5);
  });

  it('a torn last line is left out and reported; its run trains again', () => {
    const text = ledgerText(header, records);
    const cut = text.slice(0, text.length - 40);
    const led = parseLedger(cut, 'ledger.jsonl');
    expect(led.records).toHaveLength(4);
    expect(led.torn).toMatch(
      /^ledger\.jsonl line 6 \(the last\) is not a whole run record \(not JSON .*\): left out, so its run trains again/,
    );
    // a last line that is JSON but not a record is torn too
    expect(parseLedger(`${text}{"level":1}\n`, 'L').torn).toMatch(
      /line 7 \(the last\) is not a whole run record \(not a run record \(env: /,
    );
  });

  it('a bad line before the last, a bad header and two different records of one run are refused with the line and the fix', () => {
    const lines = ledgerText(header, records).split('\n');
    const conflict = [...lines.slice(0, 3), '<<<<<<< HEAD', ...lines.slice(3)].join('\n');
    expect(() => parseLedger(conflict, 'L')).toThrow(LedgerError);
    expect(() => parseLedger(conflict, 'L')).toThrow(/^L line 4: not JSON .*; restore it from git .* or delete the line/);
    expect(() => parseLedger(lines.slice(1).join('\n'), 'L')).toThrow(/^L line 1: not a ladder ledger's header \(kind: /);
    expect(() => parseLedger('', 'L')).toThrow(/^L: empty/);
    const other = JSON.stringify({ ...rec('grpo', 1), runId: 'r-other' });
    expect(() => parseLedger(`${lines.join('\n')}${other}\n`, 'L')).toThrow(
      /^L lines 2 and 7: two records of grpo · sokoban · seed 1 at level 1 \(runs r-grpo-1-1 and r-other\)/,
    );
    // the same record twice (a union merge of two copies) is one run
    expect(parseLedger(`${lines.join('\n')}${lines[1]}\n`, 'L').records).toHaveLength(5);
  });

  it('a missing ledger is null; the file written by the keeper reads back the same', async () => {
    const d = await mkdtemp(join(tmpdir(), 'arl-ledger-text-'));
    try {
      expect(await readLedger(d)).toBeNull();
      await writeFile(join(d, 'ledger.jsonl'), ledgerText(header, records));
      const back = (await readLedger(d))!;
      expect(back.header).toEqual(header);
      expect(ledgerText(back.header, back.records)).toBe(ledgerText(header, records));
    } finally {
      await rm(d, { recursive: true, force: true });
    }
  });
});

describe('plans and configs', () => {
  it('a plan that differs is named field by field; more levels are not a difference', () => {
    const a = ledgerPlanOf(plan);
    expect(ledgerPlanMismatches(a, ledgerPlanOf({ ...plan, levels: [1, 2, 3] }))).toEqual([]);
    expect(
      ledgerPlanMismatches(
        a,
        ledgerPlanOf({ ...plan, seeds: [1, 2, 3, 4], presets: ['grpo', 'sampo'], steps: 40, episodes: 50, stopOnCollapse: false }),
      ),
    ).toEqual([
      'presets grpo,cispo in the ledger, grpo,sampo here',
      'seeds 1..3 in the ledger, 1..4 here',
      'steps 12 in the ledger, 40 here',
      'episodes 4 in the ledger, 50 here',
      'on-collapse stop in the ledger, continue here',
    ]);
    const arms: LadderPlan['arms'] = [
      { name: 'fp32', preset: 'sampo', sets: {}, vs: null },
      { name: 'int8', preset: 'sampo', sets: { 'compute.rolloutPrecision': 'int8' }, vs: 'fp32' },
    ];
    expect(ledgerPlanMismatches(ledgerPlanOf({ ...plan, arms }), ledgerPlanOf({ ...plan, arms: arms!.slice(0, 1) }))).toEqual([
      'arms fp32=sampo{} vs - int8=sampo{"compute.rolloutPrecision":"int8"} vs fp32 in the ledger, fp32=sampo{} vs - here',
    ]);
    expect(ledgerPlanMismatches(a, ledgerPlanOf({ ...plan, sets: { 'optim.lr': 0.001 } }))).toEqual([
      'sets none in the ledger, optim.lr=0.001 here',
    ]);
  });

  it('the config hash does not depend on key order and changes with any value', () => {
    const c = { optim: { lr: 3e-4, epochs: 1 }, seed: 1, preset: 'grpo' };
    expect(configHash(c)).toMatch(/^sha256:[0-9a-f]{16}$/);
    expect(configHash({ preset: 'grpo', seed: 1, optim: { epochs: 1, lr: 3e-4 } })).toBe(configHash(c));
    expect(configHash({ ...c, optim: { lr: 3e-4, epochs: 2 } })).not.toBe(configHash(c));
    expect(configHash({ ...c, seed: 2 })).not.toBe(configHash(c));
  });
});
