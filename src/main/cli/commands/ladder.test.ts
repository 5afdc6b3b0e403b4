/**
 * `arlarena ladder`: usage errors. The tiny ladder end to end is ladder.integration.test.ts (≈ 1 min).
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { UsageError, type CliContext } from '../types';
import arena from './arena';
import ladder, { takeArms } from './ladder';

function ctx(dataDir: string): { ctx: CliContext; out: () => string } {
  let buf = '';
  const stdout = new Writable({
    write(chunk, _e, cb) {
      buf += String(chunk);
      cb();
    },
  });
  const stderr = new Writable({
    write(_c, _e, cb) {
      cb();
    },
  });
  return { ctx: { dataDir, stdout, stderr, isTTY: false }, out: () => buf };
}

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
});
