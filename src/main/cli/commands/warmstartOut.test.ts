/**
 * `arlarena warmstart --out DIR` where DIR cannot be a folder (under a file, say) is refused before behaviour cloning
 * starts, in one line naming the folder: the lab model's warm start wrote DIR only after its updates and held-out
 * evaluation (600 updates by default, minutes on 2 cores) and then failed with Node's ENOTDIR and a stack trace.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import warmstart from './warmstart';
import { testCliContext } from '../../testing/testContext';
import { tinyCliSets } from '../../testing/tinyCli';

const work = mkdtempSync(join(tmpdir(), 'arlarena-warmstart-out-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('arlarena warmstart: an --out that cannot be made', () => {
  it('is refused before any BC update, naming the folder, exit 1', async () => {
    const file = join(work, 'a-file');
    writeFileSync(file, 'not a folder');
    const out = join(file, 'ws');
    const c = testCliContext(join(work, 'data'));
    const code = await warmstart.run(['--updates', '1', '--episodes', '1', '--out', out, ...tinyCliSets()], c.ctx);
    expect(code).toBe(1);
    expect(c.err()).toMatch(
      new RegExp(`^arlarena warmstart: --out ${out}: cannot make this folder \\(ENOTDIR[^\\n]*\\); nothing was trained\\n$`),
    );
    expect(c.out()).toBe('');
    expect(existsSync(out)).toBe(false);
  });
});
