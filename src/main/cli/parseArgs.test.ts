/** `--steps -1` says what is wrong instead of Node's "argument is ambiguous". */
import { describe, expect, it } from 'vitest';
import { parseCommandArgs, UsageError } from './types';

const opts = { steps: { type: 'string' as const }, name: { type: 'string' as const } };

describe('parseCommandArgs', () => {
  it('a negative number given as a separate argument is named as the problem', () => {
    const e = (() => {
      try {
        parseCommandArgs({ args: ['--steps', '-1'], options: opts, strict: true });
      } catch (x) {
        return x;
      }
      return null;
    })();
    expect(e).toBeInstanceOf(UsageError);
    expect((e as Error).message).toMatch(/^--steps -1: a negative number is not a valid --steps/);
    expect((e as Error).message).not.toMatch(/ambiguous/);
    expect(() => parseCommandArgs({ args: ['--name', '-x'], options: opts, strict: true })).toThrow(
      /--name -x: a value cannot start with "-" .*--name=-x/,
    );
    expect(parseCommandArgs({ args: ['--steps=5'], options: opts, strict: true }).values.steps).toBe('5');
  });
});
