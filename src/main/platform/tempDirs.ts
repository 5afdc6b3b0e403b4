/**
 * Folders of this process in the OS temp dir, named `<prefix><pid>-<random>`, so that what a killed process left
 * can be told from what a live one is using: the next process making one of the same prefix removes the folders
 * whose process is gone. The onnxruntime LLM engine writes a model past 2 GiB there (its weights as external data,
 * again at every re-export); a kill while it lived — a session's end SIGKILLs every process — left gigabytes in
 * the temp dir for good, one more per kill.
 */
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pidAlive, processStartTicks } from './process';

/**
 * A new folder `<root>/<prefix><pid>-<start>-XXXXXX` (root: the OS temp dir; start: the process's start in ticks since
 * boot, on Linux), after removing those of `prefix` whose process is gone: a process holding the pid that did not
 * start at the recorded start, or — for a name without one (off Linux; folders made before names carried it) — that
 * started after the folder's last change. The start in the name is exact whatever the wall clock did meanwhile; the
 * last change is not (a step of the clock moves every process's start as /proc gives it in wall-clock time).
 */
export async function processTempDir(prefix: string, root: string = tmpdir()): Promise<string> {
  for (const n of await readdir(root).catch(() => [] as string[])) {
    if (!n.startsWith(prefix)) continue;
    const m = /^(\d+)-(?:(\d+)-)?[A-Za-z0-9]+$/.exec(n.slice(prefix.length));
    if (!m) continue;
    // a process with its pid that started after the folder's last change is not its maker (pids are handed out again)
    const changed = await stat(join(root, n)).then(
      (st) => (st.isDirectory() ? st.mtimeMs : null),
      () => null,
    );
    if (changed !== null && !pidAlive(Number(m[1]), changed, m[2] !== undefined ? Number(m[2]) : null))
      await rm(join(root, n), { recursive: true, force: true }).catch(() => undefined);
  }
  const start = processStartTicks();
  return mkdtemp(join(root, `${prefix}${process.pid}-${start !== null ? `${start}-` : ''}`));
}
