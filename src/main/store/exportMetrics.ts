/**
 * `arlarena export RUN --format tensorboard|csv|jsonl`: a run's metrics in the formats researchers' own tools
 * read. The byte layouts are the pure exporters in src/core/formats/export; this module picks
 * the keys, names the output and writes it.
 *
 * The file is streamed chunk by chunk to a hidden `.arlarena-export-<run id>.<writer>-<n>.partial` beside the output
 * and renamed into place only when complete, so a failed or interrupted export never leaves a truncated file under the
 * final name. The temporary name has no "tfevents" in it: TensorBoard reads every file of a log directory whose name
 * contains that word, a half-written one included. It names its writer: an export killed mid-way (a session's end)
 * left its partial for good, one per run and folder, and the next export to that folder removes those whose writer
 * is gone (removeDeadPartials).
 */
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { once } from 'node:events';
import { csvChunks } from '../../core/formats/export/csv';
import { exportableKeys } from '../../core/formats/export/keys';
import { tensorboardChunks } from '../../core/formats/export/tensorboard';
import { verlJsonlChunks } from '../../core/formats/export/verlJsonl';
import { pidAlive, WRITER_TAG, writerState, writerTag } from '../platform/process';
import { storeFaults } from './faults';
import type { RunStore } from './runStore';

/** A partial named by its writer: `.arlarena-export-<run id>.p<pid>s<start>h<host>-<n>.partial` (writerTag). */
const PARTIAL_RE = new RegExp(`^\\.arlarena-export-.+\\.${WRITER_TAG}-\\d+\\.partial$`);
/** A partial of the versions that named its writer by pid alone: `.arlarena-export-<run id>.<pid>-<n>.partial`. */
const PID_PARTIAL_RE = /^\.arlarena-export-.+\.(\d+)-\d+\.partial$/;
/** A partial of the versions before it named its writer (the run id alone; run ids hold no dots). */
const OLD_PARTIAL_RE = /^\.arlarena-export-[^.]+\.partial$/;
/** An old partial changed this long ago is a killed export's: a live one writes it chunk after chunk. */
const OLD_PARTIAL_AGE_MS = 60_000;

let partials = 0;

/**
 * Remove the partials that metrics exports killed mid-way left in `dir`: those named by a writer that is gone — its
 * pid's process did not start at the start in ticks the name records, whatever the partial's age; for the pid-only
 * names of older versions, a process holding the pid started after the partial's last change (pids are handed out
 * again after a session's end) — and the old unnamed ones, and another host's, unchanged for a minute. Other files
 * stay: the folder may be the user's. (store/atomic.ts's removeDeadTemps does the same for writeFileAtomic's temps.)
 */
async function removeDeadPartials(dir: string): Promise<void> {
  for (const n of await readdir(dir).catch(() => [] as string[])) {
    const m = PARTIAL_RE.exec(n);
    const old = m ? null : PID_PARTIAL_RE.exec(n);
    if (!m && !old && !OLD_PARTIAL_RE.test(n)) continue;
    const st = await stat(join(dir, n)).catch(() => null);
    if (!st?.isFile()) continue;
    const state = m ? writerState(m[1]!, m[2], m[3]!, st.mtimeMs) : null;
    const dead =
      state === 'alive' || state === 'gone'
        ? state === 'gone'
        : old
          ? !pidAlive(Number(old[1]), st.mtimeMs)
          : Date.now() - st.mtimeMs > OLD_PARTIAL_AGE_MS;
    if (dead) await rm(join(dir, n), { force: true });
  }
}

export const METRIC_EXPORT_FORMATS = ['tensorboard', 'csv', 'jsonl'] as const;
export type MetricExportFormat = (typeof METRIC_EXPORT_FORMATS)[number];

export function isMetricExportFormat(s: string): s is MetricExportFormat {
  return (METRIC_EXPORT_FORMATS as readonly string[]).includes(s);
}

export interface MetricExportResult {
  format: MetricExportFormat;
  path: string;
  bytes: number;
  steps: number;
  keys: number;
}

/**
 * Where the export goes. TensorBoard only picks up files whose names contain "tfevents", so for that format
 * an --out whose name lacks it is a log directory to create the file in (as TensorBoard's writers treat their
 * logdir); csv and jsonl write to --out itself. Default: <data dir>/exports/<run id>[.csv|.jsonl|/].
 */
export function exportPath(dataDir: string, runId: string, format: MetricExportFormat, startSeconds: number, out?: string): string {
  if (format === 'tensorboard') {
    if (out !== undefined && basename(out).includes('tfevents')) return resolve(out);
    const dir = resolve(out ?? join(dataDir, 'exports', runId));
    return join(dir, `events.out.tfevents.${Math.floor(startSeconds)}.arlarena.${runId}`);
  }
  return resolve(out ?? join(dataDir, 'exports', `${runId}.${format}`));
}

export async function exportMetrics(
  store: RunStore,
  runId: string,
  opts: { format: MetricExportFormat; out?: string },
): Promise<MetricExportResult> {
  const run = await store.getRun(runId);
  if (!run) throw new Error(`no run ${runId}`);
  const records = await store.readMetrics(runId);
  if (records.length === 0) throw new Error(`run ${runId} has no metric records to export`);
  const keys = exportableKeys(records);
  const startMs = Date.parse(run.startedAt ?? run.createdAt);
  const startSeconds = Number.isFinite(startMs) ? startMs / 1000 : 0;
  const path = exportPath(store.dataDir, runId, opts.format, startSeconds, opts.out);
  const chunks: Iterable<string | Uint8Array> =
    opts.format === 'tensorboard'
      ? tensorboardChunks(records, { keys, startWallTime: startSeconds })
      : opts.format === 'csv'
        ? csvChunks(records, { keys })
        : verlJsonlChunks(records, { keys });

  await mkdir(dirname(path), { recursive: true });
  await removeDeadPartials(dirname(path));
  const partial = join(dirname(path), `.arlarena-export-${runId}.${writerTag()}-${++partials}.partial`);
  const ws = createWriteStream(partial);
  try {
    await once(ws, 'ready');
    for (const c of chunks) {
      if (!ws.write(c)) await once(ws, 'drain');
      storeFaults().at('metrics-export-chunk');
    }
    ws.end();
    await once(ws, 'finish');
    await rename(partial, path);
  } catch (e) {
    ws.destroy();
    await rm(partial, { force: true });
    throw e;
  }
  return { format: opts.format, path, bytes: (await stat(path)).size, steps: records.length, keys: keys.length };
}
