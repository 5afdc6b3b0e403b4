/**
 * `arlarena ladder`: usage errors. The tiny ladder end to end is ladder.integration.test.ts (≈ 1 min).
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { UsageError, type CliContext } from '../types';
import arena from './arena';
import ladder from './ladder';

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
  ];
  for (const [args, re] of bad) {
    it(args.join(' ').slice(0, 60), async () => {
      const c = ctx(join(tmpdir(), 'arl-ladder-none'));
      await expect(ladder.run(args, c.ctx)).rejects.toThrow(UsageError);
      await expect(ladder.run(args, c.ctx)).rejects.toThrow(re);
    });
  }
});

describe('arlarena arena --ladder', () => {
  it('is the ladder: the same usage errors', async () => {
    const c = ctx(join(tmpdir(), 'arl-ladder-none'));
    await expect(arena.run(['--ladder', '--levels', '9'], c.ctx)).rejects.toThrow(/--levels: unknown "9"/);
  });
});
