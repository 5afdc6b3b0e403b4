/**
 * committedLadderInfo on a summary.json as the first ladder version wrote it (no arms, onCollapse, rollout timing
 * or vsBaseline.against): what the view shows is read from the rows and the command, with the CLI's defaults.
 */
import { describe, expect, it } from 'vitest';
import { LadderInfo } from '../../../shared/ladders';
import { readCommittedLadders } from './committedLadders';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const OLD = {
  kind: 'ladder',
  name: 'old',
  command: 'arlarena ladder --levels 0,4 --presets grpo,cispo --seeds 3 --study old',
  collapse: 'a critical alert …',
  interval: 'exact Clopper–Pearson 95 % interval of the share of seeds that collapsed',
  test: 'log-rank',
  baseline: 'grpo',
  levels: [
    { level: 0, overrides: { 'optim.miniBatchRows': 64 }, why: 'then' },
    { level: 4, overrides: { 'optim.miniBatchRows': 8, 'optim.lr': 0.001 }, why: 'the old ceiling' },
  ],
  rows: [
    {
      env: 'sokoban',
      preset: 'cispo',
      level: 4,
      seeds: 3,
      seedList: [1, 2, 3],
      collapsedShare: { mean: 2 / 3, ci95: [0.094, 0.992] },
      medianCollapseStep: 5,
      survival: [
        [0, 1],
        [3, 2 / 3],
        [5, 1 / 3],
        [40, 1 / 3],
      ],
      vsBaseline: { logRankP: 0.04, verdict: 'collapses more' },
      heldOutSurvivors: { n: 1, mean: 0.2, sd: null, ci95: null },
    },
  ],
};

describe('a committed ladder summary of the first version', () => {
  it('reads with the defaults, keeps the levels as they were then, and leaves an arena summary out', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'arl-committed-'));
    try {
      await mkdir(join(dir, 'old'));
      await writeFile(join(dir, 'old', 'summary.json'), JSON.stringify(OLD));
      await mkdir(join(dir, 'sokoban-6x5x40'));
      await writeFile(join(dir, 'sokoban-6x5x40', 'summary.json'), JSON.stringify({ study: 'sokoban-6x5x40', rows: [] }));
      await mkdir(join(dir, 'no-summary'));
      const { ladders, problems } = await readCommittedLadders(dir, 'resources/studies');
      expect(problems).toEqual([]);
      expect(ladders).toHaveLength(1);
      const info = ladders[0];
      expect(LadderInfo.parse(info)).toEqual(info);
      expect(info).toMatchObject({
        steps: null,
        episodes: 100,
        fraction: 0.5,
        stopOnCollapse: false,
        seeds: [1, 2, 3],
        presets: ['cispo'],
      });
      expect(info.onCollapse).toMatch(/^continue/);
      // The knobs the study ran with, not today's level 4.
      expect(info.levels[1]).toMatchObject({
        level: 4,
        overrides: { 'optim.miniBatchRows': 8, 'optim.lr': 0.001 },
        why: 'the old ceiling',
      });
      expect(info.levels[0]).toMatchObject({ level: 0, done: 0, planned: 0 });
      expect(info.cells[0]).toMatchObject({
        collapsedShare: { collapsed: 2, n: 3 },
        vsBaseline: { against: 'grpo', chiSquare: null, rolloutSpeedup: null, verdict: 'collapses more' },
        rolloutSecondsPerStep: { n: 0, mean: null, ci95: null },
        runs: [],
      });
      expect(await readCommittedLadders(join(dir, 'missing'), 'x')).toEqual({ ladders: [], problems: [] });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('a committed ladder summary written from a ledger mid-ladder', () => {
  it("shows each level's runs done of planned from its progress; an unfinished level's cells are incomplete", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'arl-committed-progress-'));
    try {
      const row = OLD.rows[0];
      const summary = {
        ...OLD,
        name: 'mid',
        rows: [row, { ...row, level: 0 }],
        progress: [
          { level: 0, done: 6, planned: 6 },
          { level: 4, done: 3, planned: 6 },
          { level: 9, done: 0, planned: 6 },
        ],
      };
      await mkdir(join(dir, 'mid'));
      await writeFile(join(dir, 'mid', 'summary.json'), JSON.stringify(summary));
      const info = (await readCommittedLadders(dir, 'resources/studies')).ladders[0];
      expect(LadderInfo.parse(info)).toEqual(info);
      expect(info.levels.map((l) => [l.level, l.started, l.done, l.planned])).toEqual([
        [0, true, 6, 6],
        [4, true, 3, 6],
      ]);
      expect(info.cells.map((c) => [c.level, c.complete])).toEqual([
        [4, false],
        [0, true],
      ]);
      expect(info).toMatchObject({ done: 9, planned: 12, complete: false });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
