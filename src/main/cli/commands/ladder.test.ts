/**
 * `arlarena ladder`: usage errors, and resuming a ladder stored by the code before stop-on-collapse and arms. The tiny ladder end to end is ladder.integration.test.ts (≈ 1 min).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storedLadderLevels, storedLadderPlan } from '../../app/studies/ladder';
import { readStudy } from '../../app/studies/studyFiles';
import { testCliContext as ctx } from '../../testing/testContext';
import { UsageError } from '../types';
import arena from './arena';
import ladder, { takeArms } from './ladder';

describe('arlarena ladder: usage', () => {
  const bad: Array<[string[], RegExp]> = [
    [['--levels', '0,7'], /--levels: unknown "7"; valid: 0, 1, 2, 3, 4/],
    [['--presets', 'gspo,sampo'], /--baseline grpo: not among --presets/],
    [['--fraction', '1'], /--fraction "1": expected a number in \(0, 1\)/],
    [['--set', 'training.pressure=2'], /the ladder sets the level itself; use --levels/],
    [['--resume'], /--resume continues a ladder: add --study NAME/],
    [['--study', 'x'.repeat(39)], /--study: .*the level suffix/],
    [['--on-collapse', 'pause'], /--on-collapse "pause": expected stop or continue/],
    [['--arms'], /--arms: give one or more arm specs/],
    [['--arms', 'a=sampo', '--presets', 'grpo'], /--presets with --arms: the arms name their presets/],
    [['--arms', 'a=sampo', '--baseline', 'a'], /--baseline with --arms: each arm names its baseline arm/],
    [['--arms', 'a=sampo', 'b=sampo vs c'], /--arms: arm "b": "vs c" names no arm; arms: a, b/],
    [['--arms', 'a=sampo;training.pressure=2'], /arm a sets training.pressure; the ladder sets the level itself/],
    [['--arms', 'a=sampo', '--arms-file', 'x.txt'], /--arms and --arms-file: give the arms one way/],
    [['--arms-file', '/nonexistent/arms.txt'], /--arms-file \/nonexistent\/arms.txt: cannot read it/],
    // the arm's config is resolved at every level before anything trains, and its error names the arm
    [
      ['--levels', '0', '--arms', 'fp32=sampo', 'int8=sampo;compute.rolloutPrecision=int8;compute.rolloutEngine=tfjs'],
      /arm int8: compute.rolloutPrecision/,
    ],
  ];
  for (const [args, re] of bad) {
    it(args.join(' ').slice(0, 60), async () => {
      const c = ctx(join(tmpdir(), 'arl-ladder-none'));
      await expect(ladder.run(args, c.ctx)).rejects.toThrow(UsageError);
      await expect(ladder.run(args, c.ctx)).rejects.toThrow(re);
    });
  }
});

describe('--arms takes every argument up to the next flag', () => {
  it('one quoted spec per argument, --arms=SPEC, repeated --arms; the rest is left for the other flags', () => {
    expect(takeArms(['--levels', '0', '--arms', 'a=sampo', 'b=sampo;optim.lr=0.001 vs a', '--seeds', '2', '--arms=c=grpo'])).toEqual({
      rest: ['--levels', '0', '--seeds', '2'],
      specs: ['a=sampo', 'b=sampo;optim.lr=0.001 vs a', 'c=grpo'],
    });
    expect(takeArms(['--seeds', '2'])).toEqual({ rest: ['--seeds', '2'], specs: null });
  });
});

describe('arlarena arena --ladder', () => {
  it('is the ladder: the same usage errors', async () => {
    const c = ctx(join(tmpdir(), 'arl-ladder-none'));
    await expect(arena.run(['--ladder', '--levels', '9'], c.ctx)).rejects.toThrow(/--levels: unknown "9"/);
  });

  it('arena --arms / --arms-file without --ladder says that arms run as a ladder; with --ladder they do', async () => {
    const c = ctx(join(tmpdir(), 'arl-ladder-none'));
    await expect(arena.run(['--arms-file', 'resources/studies/rollout-mismatch.arms'], c.ctx)).rejects.toThrow(
      /^--arms-file: a study of arms runs as a ladder .*arlarena ladder --levels L --arms-file FILE/,
    );
    await expect(arena.run(['--arms=a=grpo'], c.ctx)).rejects.toThrow(/^--arms: a study of arms runs as a ladder/);
    await expect(arena.run(['--ladder', '--arms', 'a=grpo', '--presets', 'grpo'], c.ctx)).rejects.toThrow(/--presets with --arms/);
  });
});

// One level of a ladder as 7d05cc1's code stored it (before stop-on-collapse, arms and stopReason): made by that
// code (a tiny ladder killed during its second run), the run ids and timings as it wrote them.
const OLD_LEVEL = {
  version: 1,
  name: 'compat-p0',
  createdAt: '2026-12-05T03:29:31.356Z',
  plan: {
    command: 'arlarena ladder --levels 0 --presets grpo --seeds 2 --steps 6 --study compat',
    envs: ['sokoban'],
    presets: ['grpo'],
    seeds: [1, 2],
    steps: 6,
    model: null,
    sets: { 'training.pressure': 0 },
    baseline: 'grpo',
    episodes: 2,
    threshold: 0.5,
  },
  entries: [
    {
      env: 'sokoban',
      preset: 'grpo',
      seed: 1,
      runId: '20261205-032931-sokoban-grpo-76c4a0',
      status: 'completed',
      wallSeconds: 19.380007346,
      outcome: {
        env: 'sokoban',
        preset: 'grpo',
        seed: 1,
        steps: 6,
        heldOutGreedy: 0,
        heldOutSampled: 0,
        finalTrainSuccess: 0,
        bestTrainSuccess: 0,
        stepsToThreshold: null,
        firstCriticalStep: null,
      },
    },
    {
      env: 'sokoban',
      preset: 'grpo',
      seed: 2,
      runId: '20261205-032955-sokoban-grpo-a14ecd',
      status: 'running',
      wallSeconds: null,
      outcome: null,
    },
  ],
};

describe('a ladder stored before stop-on-collapse and arms', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'arl-ladder-old-'));
    await mkdir(join(dir, 'studies', 'compat-p0'), { recursive: true });
    await writeFile(join(dir, 'studies', 'compat-p0', 'study.json'), JSON.stringify(OLD_LEVEL));
    // not levels of ladder "compat": another ladder, an unknown level, a folder without a study file
    for (const other of ['compat2-p1', 'compat-p9', 'compat-px', 'compat-p3'])
      await mkdir(join(dir, 'studies', other), { recursive: true });
    for (const other of ['compat2-p1', 'compat-p9', 'compat-px'])
      await writeFile(join(dir, 'studies', other, 'study.json'), JSON.stringify({ ...OLD_LEVEL, name: other }));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads as it was: no stop-on-collapse (its runs train on), no arms, no stop reasons', async () => {
    const back = await readStudy(dir, 'compat-p0');
    expect(back.plan.stopOnCollapse).toBeUndefined();
    expect(back.plan.arms).toBeUndefined();
    expect(back.entries.map((e) => [e.arm, e.stopReason])).toEqual([
      [undefined, undefined],
      [undefined, undefined],
    ]);
    expect((await storedLadderPlan(dir, 'compat', [0, 1]))!.command).toBe(OLD_LEVEL.plan.command);
    expect(await storedLadderLevels(dir, 'compat')).toEqual([0]);
    expect(await storedLadderLevels(dir, 'nothing')).toEqual([]);
  });

  const refused: Array<[string[], RegExp]> = [
    [
      ['--on-collapse', 'stop'],
      /ladder "compat" was started with another plan than this --resume gives: --on-collapse: stop here, continue when it was started\. Fix: drop --on-collapse \(arlarena ladder --study compat --resume continues it/,
    ],
    [['--arms', 'a=grpo'], /--arms: a=grpo here, none \(presets grpo\) when it was started\. Fix: drop --arms /],
  ];
  for (const [args, re] of refused) {
    it(`--resume ${args.join(' ')} is refused: it resumes as continue, with its presets`, async () => {
      await expect(ladder.run(['--study', 'compat', '--resume', ...args], ctx(dir).ctx)).rejects.toThrow(re);
    });
  }

  it('--resume of a ladder with no stored level says so', async () => {
    await expect(ladder.run(['--study', 'nothing', '--resume'], ctx(dir).ctx)).rejects.toThrow(
      /no ladder "nothing" in .* \(no study nothing-p<level>\); start it without --resume/,
    );
  });
});
