/** builtOnce (the shared build of the Hugging Face test checkpoints) on a temp root with stand-in builds. */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { builtOnce } from './builtOnce';

const root = mkdtempSync(join(tmpdir(), 'arlarena-built-once-test-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('builtOnce', () => {
  it('builds into arlarena-NAME-KEY once; later calls take the folder without building', () => {
    let builds = 0;
    const build = (work: string) => {
      builds++;
      writeFileSync(join(work, 'model.txt'), 'weights');
    };
    const dir = builtOnce('thing', 'abc123', 'the thing', build, root);
    expect(dir).toBe(join(root, 'arlarena-thing-abc123'));
    expect(readFileSync(join(dir, 'model.txt'), 'utf8')).toBe('weights');
    expect(existsSync(join(dir, 'DONE'))).toBe(true);
    expect(builtOnce('thing', 'abc123', 'the thing', build, root)).toBe(dir);
    expect(builds).toBe(1);
    // Another key (the script changed) is another folder.
    expect(builtOnce('thing', 'def456', 'the thing', build, root)).toBe(join(root, 'arlarena-thing-def456'));
    expect(builds).toBe(2);
  });

  it("a failed build leaves nothing behind and names what failed with its stderr's last lines", () => {
    const fail = (work: string) => {
      writeFileSync(join(work, 'half.txt'), 'half written');
      execFileSync(process.execPath, ['-e', 'for (const l of ["one", "two", "three", "four"]) console.error(l); process.exit(3)'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    };
    expect(() => builtOnce('broken', 'k1', 'the broken thing', fail, root)).toThrow('making the broken thing failed: two | three | four');
    expect(readdirSync(root).filter((f) => f.startsWith('arlarena-broken'))).toEqual([]);
  });
});
