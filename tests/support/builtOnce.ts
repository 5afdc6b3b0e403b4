/**
 * A folder the tests build once (a peer script writing checkpoints, ≈ 10 s) and share: built once per `key` (a hash
 * of what it is made from) into the OS temp folder as arlarena-NAME-KEY, so every test file and later run takes the
 * same copy. It is built beside (a fresh temp folder) and renamed into place with a DONE marker, so a half-written
 * folder is never used; when another test file finished first, its copy is taken and ours removed.
 */
import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The folder, built by `build(work)` when it is not there yet. A failed build is removed and reported as
 * "making WHAT failed: " with the last 3 lines of its stderr (a child process's, as execFileSync throws it).
 */
export function builtOnce(name: string, key: string, what: string, build: (work: string) => void, root = tmpdir()): string {
  const dir = join(root, `arlarena-${name}-${key}`);
  if (existsSync(join(dir, 'DONE'))) return dir;
  const work = mkdtempSync(join(root, `arlarena-${name}-build-`));
  try {
    build(work);
    writeFileSync(join(work, 'DONE'), '');
    try {
      renameSync(work, dir);
    } catch (e) {
      // Another test file finished first: use its copy.
      if (!existsSync(join(dir, 'DONE'))) throw e;
      rmSync(work, { recursive: true, force: true });
    }
  } catch (e) {
    rmSync(work, { recursive: true, force: true });
    const err = e as { stderr?: Buffer; message: string };
    throw new Error(`making ${what} failed: ${err.stderr?.toString().split('\n').filter(Boolean).slice(-3).join(' | ') ?? err.message}`);
  }
  return dir;
}
