/**
 * Folders of this process in the OS temp dir, named `<prefix><writer>-<random>` (writer: writerTag, the process's pid,
 * start in ticks since boot and host), so that what a killed process left can be told from what a live one is
 * using: the next process making one of the same prefix removes the folders whose process is gone. The onnxruntime
 * LLM engine writes a model past 2 GiB there (its weights as external data, again at every re-export); a kill while
 * it lived — a session's end SIGKILLs every process — left gigabytes in the temp dir for good, one more per kill.
 */
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pidAlive, WRITER_TAG, writerState, writerTag } from './process';

/**
 * A folder of another host (a temp dir bind-mounted into containers, each with its own pids), whose writer this host
 * cannot judge, is removed once unchanged this long: the engine's folder lives while one model is written and loaded.
 */
const OTHER_HOST_MS = 86_400_000;

/**
 * A new folder `<root>/<prefix><writer>-XXXXXX` (root: the OS temp dir; writer: writerTag), after removing those of
 * `prefix` whose process is gone: judged by the writer the name carries (writerState: no process of that pid started
 * at that start), exactly whatever the folder's age and the wall clock; another host's by its age. Names older
 * versions wrote, `<prefix><pid>-<start>-XXXXXX` and `<prefix><pid>-XXXXXX` (off Linux; before names carried the
 * start), keep their rule, by this host's pids: a process holding the pid that did not start at the recorded start,
 * or, without one, that started after the folder's last change (not exact after a step of the wall clock, which
 * moves every process's start as /proc gives it in wall-clock time).
 */
export async function processTempDir(prefix: string, root: string = tmpdir()): Promise<string> {
  const tagged = new RegExp(`^${WRITER_TAG}-[A-Za-z0-9]+$`);
  for (const n of await readdir(root).catch(() => [] as string[])) {
    if (!n.startsWith(prefix)) continue;
    const rest = n.slice(prefix.length);
    const writer = tagged.exec(rest);
    const older = /^(\d+)-(?:(\d+)-)?[A-Za-z0-9]+$/.exec(rest);
    if (!writer && !older) continue;
    const changed = await stat(join(root, n)).then(
      (st) => (st.isDirectory() ? st.mtimeMs : null),
      () => null,
    );
    if (changed === null) continue;
    const state = writer ? writerState(writer[1]!, writer[2], writer[3]!, changed) : null;
    const gone =
      state !== null
        ? state === 'gone' || (state === 'elsewhere' && Date.now() - changed > OTHER_HOST_MS)
        : !pidAlive(Number(older![1]), changed, older![2] !== undefined ? Number(older![2]) : null);
    if (gone) await rm(join(root, n), { recursive: true, force: true }).catch(() => undefined);
  }
  return mkdtemp(join(root, `${prefix}${writerTag()}-`));
}
