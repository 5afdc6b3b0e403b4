/**
 * `arlarena reproduce FILE` with a FILE that is no bundle file here: a mistyped path, a folder, a file this user
 * cannot read. Each is one line naming the path and what is wrong, exit 1, as `arlarena import` answers a missing
 * path — a mistyped path printed Node's ENOENT with a stack trace.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import reproduce from './reproduce';
import { testCliContext } from '../../testing/testContext';

const work = mkdtempSync(join(tmpdir(), 'arlarena-reproduce-path-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function refusal(file: string): Promise<{ code: number; err: string; out: string }> {
  const c = testCliContext(join(work, 'data'));
  const code = await reproduce.run([file], c.ctx);
  return { code, err: c.err(), out: c.out() };
}

describe('arlarena reproduce: a path that is no readable bundle file', () => {
  it('a missing file: one line naming it, exit 1', async () => {
    const file = join(work, 'no-such.arlarena.zip');
    const r = await refusal(file);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toBe(`arlarena reproduce: refused ${file}: no such file\n`);
  });

  it('a folder: says it is a folder, not a bundle file', async () => {
    const dir = join(work, 'bundles');
    mkdirSync(dir, { recursive: true });
    const r = await refusal(dir);
    expect(r.code).toBe(1);
    expect(r.err).toBe(`arlarena reproduce: refused ${dir}: a folder, not a bundle file (.arlarena.zip)\n`);
  });

  it.skipIf(process.getuid?.() === 0)('a file this user cannot read: says so', async () => {
    const file = join(work, 'locked.arlarena.zip');
    writeFileSync(file, 'x');
    chmodSync(file, 0o000);
    const r = await refusal(file);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(new RegExp(`^arlarena reproduce: refused ${file}: cannot be read \\(EACCES[^\\n]*\\)\\n$`));
  });
});
