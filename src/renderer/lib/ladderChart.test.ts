import { describe, expect, it } from 'vitest';
import type { LadderCell, LadderRunRef } from '../../shared/ladders';
import { PALETTE } from './chartOptions';
import {
  cellName,
  cellRunIds,
  censorMarks,
  heldOutText,
  ladderKey,
  levelGroupPath,
  outcomeText,
  pickLadder,
  pValueText,
  resumeCommand,
  reusedText,
  rolloutText,
  shareText,
  survivalAt,
  survivalChartOption,
  survivalTooltip,
  survivalCurves,
  verdictClass,
} from './ladderChart';

const run = (seed: number, o: Partial<LadderRunRef>): LadderRunRef => ({
  env: 'sokoban',
  level: 3,
  preset: 'grpo',
  arm: null,
  seed,
  runId: `r${seed}`,
  status: 'completed',
  done: true,
  step: 10,
  collapseStep: null,
  heldOut: 0.5,
  stopReason: null,
  stored: true,
  reusedFrom: null,
  where: null,
  ...o,
});

/** Seeds: 1 collapsed at 4, 2 censored at 6 (stopped early), 3 collapsed at 8, 4 censored at 10, 5 still training. */
const cell: LadderCell = {
  env: 'sokoban',
  level: 3,
  preset: 'grpo',
  arm: null,
  seeds: [1, 2, 3, 4, 5],
  done: 4,
  complete: false,
  collapsedShare: { collapsed: 2, n: 4, mean: 0.5, ci95: [0.0676, 0.9324] },
  medianCollapseStep: 8,
  // KM by hand: step 4: 1 − 1/4 = 3/4; step 8 (at risk: seeds 3, 4): 3/4 · (1 − 1/2) = 3/8.
  survival: [
    [0, 1],
    [4, 0.75],
    [8, 0.375],
    [10, 0.375],
  ],
  vsBaseline: null,
  heldOutSurvivors: { n: 2, mean: 0.45, ci95: [0.1, 0.8] },
  rolloutSecondsPerStep: { n: 4, mean: 1.1, ci95: [0.9, 1.3] },
  reused: [],
  runs: [
    run(3, { collapseStep: 8 }),
    run(1, { collapseStep: 4 }),
    run(2, { step: 6 }),
    run(4, {}),
    run(5, { done: false, status: 'running', step: 3, heldOut: null }),
  ],
};

describe('survival curve helpers', () => {
  it('S(t) holds its value until the next pair (1 before the first)', () => {
    expect(survivalAt(cell.survival, 0)).toBe(1);
    expect(survivalAt(cell.survival, 3.9)).toBe(1);
    expect(survivalAt(cell.survival, 4)).toBe(0.75);
    expect(survivalAt(cell.survival, 6)).toBe(0.75);
    expect(survivalAt(cell.survival, 12)).toBe(0.375);
    expect(survivalAt([], 5)).toBe(1);
  });

  it('censor ticks sit on the curve at the last step of each finished seed that did not collapse; training seeds get none', () => {
    expect(censorMarks(cell)).toEqual([
      { step: 6, share: 0.75, seed: 2, runId: 'r2' },
      { step: 10, share: 0.375, seed: 4, runId: 'r4' },
    ]);
  });

  it("a cell's runs in seed order, the not-started ones left out", () => {
    expect(cellRunIds({ runs: [...cell.runs, run(6, { runId: null, done: false, step: null })] })).toEqual(['r1', 'r2', 'r3', 'r4', 'r5']);
  });

  it('continues a ladder with its own command and --resume (the bare --study NAME --resume is refused once it has a ledger)', () => {
    expect(resumeCommand('arlarena ladder --levels 1 --seeds 8 --study mm ')).toBe(
      'arlarena ladder --levels 1 --seeds 8 --study mm --resume',
    );
    expect(resumeCommand('arlarena ladder --study mm --resume')).toBe('arlarena ladder --study mm --resume');
  });

  it('leaves out the runs this data dir lacks (known by their ledger lines): Compare could not open them', () => {
    const reused = run(7, {
      stored: false,
      reusedFrom: { study: 'ladder-sokoban', runId: 'r7' },
      where: 'reused from study ladder-sokoban',
    });
    expect(cellRunIds({ runs: [...cell.runs, reused, run(6, { stored: false, where: 'not in this data dir' })] })).toEqual([
      'r1',
      'r2',
      'r3',
      'r4',
      'r5',
    ]);
    expect(reusedText([])).toBe('');
    expect(
      reusedText([
        { study: 'ladder-sokoban', runs: 8 },
        { study: 'other', runs: 1 },
      ]),
    ).toBe('8 reused from study ladder-sokoban, 1 reused from study other');
    expect([cell.runs[0], cell.runs[2], cell.runs[4], run(8, { done: false, step: null })].map(outcomeText)).toEqual([
      'collapsed at step 8',
      'no collapse in 6 steps',
      'step 3 so far',
      '',
    ]);
  });

  it("names and colours curves by the cell's place in the ladder: its preset, or its arm in a ladder of arms", () => {
    const other = { ...cell, preset: 'sampo' };
    expect(survivalCurves([other, cell], ['grpo', 'cispo', 'sampo']).map((c) => [c.name, c.color])).toEqual([
      ['sampo', PALETTE[2]],
      ['grpo', PALETTE[0]],
    ]);
    const int8 = { ...cell, preset: 'sampo', arm: 'int8' };
    expect(cellName(int8)).toBe('int8');
    expect(survivalCurves([int8], ['fp32', 'int8']).map((c) => [c.name, c.color])).toEqual([['int8', PALETTE[1]]]);
  });
});

describe('survivalChartOption', () => {
  it('draws each curve as an across-then-down step function with its censor ticks, axes 0–1 and 0–last step', () => {
    const empty = { ...cell, preset: 'sampo', survival: [], runs: [] };
    const opt = survivalChartOption({ curves: survivalCurves([cell, empty], ['grpo', 'sampo']), dark: false, maxStep: 12 });
    const series = opt.series as Array<Record<string, any>>;
    // The empty curve draws nothing; grpo draws its line and its ticks.
    expect(series.map((s) => s.id)).toEqual(['curve:grpo', 'censor:grpo']);
    expect(series[0]).toMatchObject({ type: 'line', step: 'end', name: 'grpo', triggerLineEvent: true });
    expect(series[0].data).toEqual(cell.survival);
    expect(series[1].type).toBe('scatter');
    expect(series[1].data.map((d: { value: number[] }) => d.value)).toEqual([
      [6, 0.75],
      [10, 0.375],
    ]);
    expect(opt.xAxis).toMatchObject({ min: 0, max: 12 });
    expect(opt.yAxis).toMatchObject({ min: 0, max: 1 });
    // By step: every curve's S(t) at the step left of the pointer, and the seeds censored exactly there.
    const tip = opt.tooltip as { trigger: string; formatter: (p: unknown) => string };
    expect(tip.trigger).toBe('axis');
    expect(tip.formatter([{ axisValue: 6.7 }])).toBe('step 6: share not yet collapsed<br>grpo: 75 % (seed 2 censored here: no collapse)');
  });

  it('stretches the x-axis to the longest curve when the plan says less, and themes the axes', () => {
    const light = survivalChartOption({ curves: survivalCurves([cell], ['grpo']), dark: false, maxStep: null });
    const dark = survivalChartOption({ curves: survivalCurves([cell], ['grpo']), dark: true, maxStep: 4 });
    expect((light.xAxis as { max: number }).max).toBe(10);
    expect((dark.xAxis as { max: number }).max).toBe(10);
    expect(dark.textStyle).not.toEqual(light.textStyle);
  });
});

describe('survivalTooltip', () => {
  it('names every curve at the step, also curves that lie on top of each other, and the seeds censored there', () => {
    const same = { ...cell, preset: 'gspo' };
    const curves = survivalCurves([cell, same, { ...cell, preset: 'sampo', survival: [], runs: [] }], ['grpo', 'gspo', 'sampo']);
    expect(survivalTooltip(curves, 3)).toEqual(['step 3: share not yet collapsed', 'grpo: 100 %', 'gspo: 100 %']);
    expect(survivalTooltip(curves, 8)).toEqual(['step 8: share not yet collapsed', 'grpo: 38 %', 'gspo: 38 %']);
    expect(survivalTooltip(curves, 10)[1]).toBe('grpo: 38 % (seed 4 censored here: no collapse)');
  });
});

describe('table text', () => {
  it('writes shares, p values, held-out success and verdict classes', () => {
    expect(shareText(cell.collapsedShare)).toBe('50 % [7 %, 93 %] (2/4)');
    expect(shareText({ collapsed: 0, n: 0, mean: null, ci95: null })).toBe('–');
    expect(pValueText(0.0004)).toBe('< 0.001');
    expect(pValueText(0.0634)).toBe('0.063');
    expect(heldOutText(cell.heldOutSurvivors)).toBe('45.0 % [10.0, 80.0] (n 2)');
    expect(heldOutText({ n: 1, mean: 0.3, ci95: null })).toBe('30.0 % (n 1)');
    expect(heldOutText({ n: 0, mean: null, ci95: null })).toBe('–');
    expect(verdictClass('collapses less')).toBe('good');
    expect(verdictClass('collapses more')).toBe('bad');
    expect(verdictClass('not separable')).toBe('muted');
    expect(rolloutText(cell.rolloutSecondsPerStep, null)).toBe('1.10 s');
    expect(rolloutText(cell.rolloutSecondsPerStep, 2.1 / 1.1)).toBe('1.10 s (× 1.91)');
    expect(rolloutText({ n: 0, mean: null, ci95: null }, null)).toBe('–');
  });
});

describe('levelGroupPath: what Compare groups a level by', () => {
  it('the preset for bare presets; for arms the first override on which they differ', () => {
    expect(levelGroupPath(null)).toBe('preset');
    const fp32 = { preset: 'sampo', sets: {} };
    const int8 = { preset: 'sampo', sets: { 'compute.rolloutPrecision': 'int8' } };
    const int8tis = { preset: 'sampo', sets: { 'compute.rolloutPrecision': 'int8', 'algorithm.rolloutCorrection.is': 'token' } };
    expect(levelGroupPath([fp32, int8])).toBe('compute.rolloutPrecision');
    expect(levelGroupPath([int8, int8tis])).toBe('algorithm.rolloutCorrection.is');
    expect(levelGroupPath([fp32, { preset: 'grpo', sets: {} }])).toBe('preset');
  });
});

describe('pickLadder: the ladder the address names', () => {
  const item = (name: string, source: 'data' | 'committed', problem: string | null = null) => ({
    name,
    source,
    command: '',
    createdAt: null,
    levels: [],
    envs: [],
    cells: [],
    seeds: 0,
    done: 0,
    planned: 0,
    complete: true,
    problem,
  });
  const list = [
    item('a', 'data'),
    item('bad', 'committed', 'resources/studies/bad/summary.json: not JSON'),
    item('a', 'committed'),
    item('c', 'committed'),
  ];

  it('the data-dir ladder of that name before the committed one, unless the address says committed', () => {
    expect(ladderKey(pickLadder(list, 'a', false)!)).toBe('data:a');
    expect(ladderKey(pickLadder(list, 'a', true)!)).toBe('committed:a');
    // Only committed under that name: the committed one, whatever the address said.
    expect(ladderKey(pickLadder(list, 'c', false)!)).toBe('committed:c');
    // An unreadable one is shown when named (its problem), never picked by default.
    expect(pickLadder(list, 'bad', true)!.problem).toContain('not JSON');
    expect(ladderKey(pickLadder([list[1], list[3]], null, false)!)).toBe('committed:c');
    expect(ladderKey(pickLadder(list, 'nope', false)!)).toBe('data:a');
    expect(pickLadder([list[1]], null, false)).toBeNull();
    expect(pickLadder([], 'a', false)).toBeNull();
  });
});
