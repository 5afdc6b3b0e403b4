/**
 * Where the real public training logs live (../shared/data/real-runs: verl, TRL, W&B and DeepSpeed-Chat logs that
 * nobody here wrote; see its README). Tests read them in place and never copy them into the project.
 *
 * Looked for at $ARLARENA_REAL_RUNS, then ../shared/data/real-runs beside the checkout, then
 * /work/shared/data/real-runs. On a user's clone the folder is usually absent: `describeRealRuns` then skips its
 * tests under a title that says so, and the project's own fixtures still cover every format.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');

export function realRunsDir(): string | null {
  const candidates = [process.env.ARLARENA_REAL_RUNS, join(ROOT, '..', 'shared', 'data', 'real-runs'), '/work/shared/data/real-runs'];
  for (const c of candidates) if (c && existsSync(join(c, 'README.md'))) return c;
  return null;
}

/** The path of one real-runs file (relative to the folder), or null when the folder is absent. */
export function realRun(rel: string): string | null {
  const d = realRunsDir();
  return d ? join(d, rel) : null;
}

/** `describe` over the real runs; when the folder is absent its tests are skipped and the title says why. */
export function describeRealRuns(name: string, fn: (dir: string) => void): void {
  const dir = realRunsDir();
  if (dir) describe(`${name} (real runs from ${dir})`, () => fn(dir));
  else describe.skip(`${name} — NOT RUN: ../shared/data/real-runs is absent (set ARLARENA_REAL_RUNS to run these)`, () => fn(''));
}
