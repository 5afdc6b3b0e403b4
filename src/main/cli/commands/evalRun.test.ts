/**
 * `arlarena eval RUN` where RUN is not there, or has no checkpoint: one line each, prefixed with the command as the
 * other commands' are, exit 1 — a run that matched nothing was bad usage (exit 2) in eval alone, while show, check,
 * export, stop and resume answer the same line with exit 1.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import evalCmd from './eval';
import runs from './runs';
import show from './show';
import { testCliContext } from '../../testing/testContext';

const work = mkdtempSync(join(tmpdir(), 'arlarena-eval-run-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const data = join(work, 'data');

describe('arlarena eval: a run that is not there, or has nothing to evaluate', () => {
  it('no run matches: exit 1 and the line show gives', async () => {
    const e = testCliContext(data);
    const s = testCliContext(data);
    expect(await evalCmd.run(['nope'], e.ctx)).toBe(1);
    expect(await show.run(['nope'], s.ctx)).toBe(1);
    expect(e.err()).toMatch(/^arlarena eval: no run matches "nope" \(0 runs in .*\)\n$/);
    expect(e.err().replace('arlarena eval:', '')).toBe(s.err().replace('arlarena show:', ''));
  });

  it('a run without a checkpoint (a synthetic one): says so, prefixed, exit 1', async () => {
    const w = testCliContext(data);
    expect(await runs.run(['synth', '--steps', '5', '--name', 'no-ckpt'], w.ctx)).toBe(0);
    const e = testCliContext(data);
    expect(await evalCmd.run(['no-ckpt'], e.ctx)).toBe(1);
    expect(e.err()).toMatch(/^arlarena eval: run \S+ has no checkpoint yet \(status completed\); nothing to evaluate\n$/);
  });
});
