/**
 * `arlarena import PATH…` over everything the lab reads: trackers' stores first (W&B run folders and `.wandb`
 * files, MLflow file and SQLite stores, Trackio databases — trackers.ts, found by content), every other path
 * through the log importer (importLogs.ts: bundles, console logs, JSONL, TensorBoard, CSV, …).
 *
 * A path is a tracker source when scanning it finds tracker runs: a `.wandb` file, a SQLite database with
 * MLflow's or Trackio's tables, or a folder holding any of these or MLflow run folders. Such a folder's other
 * files (W&B's debug logs, config.yaml, requirements.txt) are not imported. The result says how many runs of
 * which tracker were found (`trackers`). A tracker run already imported from the same files (same SHA-256 list,
 * same tracker run) is reported in `duplicateOf` unless `again`.
 */
import { stat } from 'node:fs/promises';
import type { ImportResult, RunRecord } from '../../shared/api';
import type { RunStore } from '../store/runStore';
import { readHead } from './files';
import { HashAside } from './hashAside';
import { ImportError, importLogs, type ImportLogsOptions } from './importLogs';
import { importTrackerRuns, trackerRunNote } from './importTrackers';
import { defaultRegistry } from './registry';
import { BUSY_TIMEOUT_MS, UnreadableDbError } from './sqliteReadOnly';
import { scanTrackers, type TrackerRun } from './trackers';

function add(into: Record<string, number>, from: Readonly<Record<string, number>>): void {
  for (const [k, n] of Object.entries(from)) if (n > 0) into[k] = (into[k] ?? 0) + n;
}

/**
 * Imported runs that came from this tracker run with these exact files. Only a run whose sources are as many bytes
 * can hold the same files, so the files are hashed only when one is (a first import hashes nothing here).
 */
async function holders(run: TrackerRun, imported: readonly RunRecord[], sha256Of: (path: string) => Promise<string>): Promise<string[]> {
  let bytes = 0;
  for (const f of run.files) bytes += (await stat(f)).size;
  const note = trackerRunNote(run.info);
  const candidates = imported.filter((r) => r.source && r.source.bytes === bytes && r.source.notes.some((n) => n.startsWith(note)));
  if (candidates.length === 0) return [];
  const sha: string[] = [];
  for (const f of run.files) sha.push(await sha256Of(f));
  const key = sha.join(',');
  return candidates.filter((r) => r.source!.sha256.join(',') === key).map((r) => r.id);
}

/** importSources' options: the log importer's, plus the user's names for files uploaded together. */
export interface ImportSourcesOptions extends ImportLogsOptions {
  /** Temporary copies of files uploaded together (a picked folder's tracker files) → the user's path for each. */
  readonly uploadedFiles?: Readonly<Record<string, string>>;
}

function isDenied(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  return code === 'EACCES' || code === 'EPERM';
}

/**
 * What a folder's TensorBoard event files are counted as when the folder holds trackers' runs: those runs are what is
 * imported (the event files are often the same run logged twice: verl's `trainer.logger=[…, mlflow, tensorboard]`,
 * W&B's `sync_tensorboard`), and the event files' folder is imported on its own.
 */
export const TB_BESIDE_TRACKERS = "TensorBoard event file in a folder with trackers' runs, not read (import its folder on its own)";

/** How many of `files` are TensorBoard event files, by content as the log importer tells them. */
async function tensorboardFiles(files: readonly string[]): Promise<number> {
  let n = 0;
  for (const f of files) {
    const head = await readHead(f).catch(() => null);
    if (head && head.length > 0 && defaultRegistry.detect(head)?.format === 'tensorboard') n++;
  }
  return n;
}

/**
 * A tracker's database SQLite could not read, in one line: the file (the user's name for an uploaded copy), SQLite's
 * reason, what to do, and what the import kept.
 */
function unreadableDb(e: UnreadableDbError, opts: ImportSourcesOptions): ImportError {
  const shown = opts.uploadedFiles?.[e.path] ?? (opts.uploadedAs !== undefined ? opts.uploadedAs : e.path);
  const kept = e.importedBefore.length
    ? `nothing of it was imported; the ${e.importedBefore.length === 1 ? 'run' : `${e.importedBefore.length} runs`} read before it ${e.importedBefore.length === 1 ? 'was' : 'were'} imported (${e.importedBefore.join(', ')})`
    : 'nothing was imported';
  // Locked by its writer (a long MLflow commit, a tool holding BEGIN EXCLUSIVE): the file is whole; later, it reads.
  if (e.locked)
    return new ImportError(
      'UNREADABLE',
      `${shown} is locked by the process writing it (SQLite: ${e.reason}, still after waiting ${BUSY_TIMEOUT_MS / 1000} s): import it again once that process has finished writing, or import a copy made while it is idle; ${kept}`,
    );
  return new ImportError(
    'UNREADABLE',
    `${shown} could not be read as a SQLite database (${e.reason}): a truncated, damaged or partly copied file? Copy it again from the machine that wrote it, with its -wal or -journal file beside it if it has one; ${kept}`,
  );
}

export async function importSources(store: RunStore, paths: readonly string[], opts: ImportSourcesOptions = {}): Promise<ImportResult> {
  if (paths.length === 0) throw new ImportError('BAD_OPTION', 'no PATH given: pass one or more log files or folders');
  const trackerRuns: TrackerRun[] = [];
  const logPaths: string[] = [];
  let tbBeside = 0;
  // A forced format is a log format (or bundle): trackers are only found by content.
  for (const p of paths) {
    if (opts.format !== undefined) {
      logPaths.push(p);
      continue;
    }
    let scan;
    try {
      await stat(p);
    } catch (e) {
      if (!isDenied(e)) throw new ImportError('NOT_FOUND', `${p}: no such file or folder`);
    }
    try {
      scan = await scanTrackers(p);
    } catch (e) {
      if (e instanceof UnreadableDbError) throw unreadableDb(e, opts);
      // A path the lab may not read (or enter): the log importer refuses it in one line saying so.
      if (!isDenied(e)) throw e;
      logPaths.push(p);
      continue;
    }
    if (scan.runs.length > 0) {
      trackerRuns.push(...scan.runs);
      tbBeside += await tensorboardFiles(scan.others);
    } else logPaths.push(p);
  }
  const result: ImportResult = { runIds: [], format: '', steps: 0, skipped: {} };
  if (tbBeside > 0) result.skipped[TB_BESIDE_TRACKERS] = tbBeside;
  const formats = new Set<string>();
  const duplicateOf: string[] = [];
  if (trackerRuns.length > 0) {
    // Each file hashed once per import, on a worker thread while the runs are read (the duplicate check and the
    // run record share the digests).
    const hasher = new HashAside();
    const sha256Of = (f: string): Promise<string> => hasher.sha256(f);
    for (const run of trackerRuns) for (const f of run.files) void sha256Of(f);
    try {
      let todo = trackerRuns;
      if (!opts.again) {
        const imported: RunRecord[] = [];
        for (const s of await store.listRuns()) {
          if (s.kind !== 'imported') continue;
          const r = await store.getRun(s.id);
          if (r?.source) imported.push(r);
        }
        todo = [];
        for (const run of trackerRuns) {
          const h = await holders(run, imported, sha256Of);
          if (h.length > 0) duplicateOf.push(...h);
          else todo.push(run);
        }
      }
      const out = await importTrackerRuns(store, todo, {
        name: opts.name,
        tags: opts.tags,
        sha256Of,
        ...(opts.uploadedAs !== undefined ? { uploadedAs: opts.uploadedAs } : {}),
        ...(opts.uploadedFiles !== undefined ? { uploadedFiles: opts.uploadedFiles } : {}),
      }).catch((e: unknown) => {
        throw e instanceof UnreadableDbError ? unreadableDb(e, {}) : e;
      });
      result.runIds.push(...out.runIds);
      result.steps += out.steps;
      add(result.skipped, out.skipped);
      result.trackers = out.trackers;
      for (const r of trackerRuns) formats.add(r.format);
      if (out.empty.length > 0) add(result.skipped, { 'tracker run without any step': out.empty.length });
    } finally {
      await hasher.close();
    }
  }
  if (logPaths.length > 0) {
    const r = await importLogs(store, logPaths, opts);
    result.runIds.push(...r.runIds);
    result.steps += r.steps;
    add(result.skipped, r.skipped);
    for (const f of r.format.split(',')) if (f) formats.add(f);
    if (r.duplicateOf) duplicateOf.push(...r.duplicateOf);
    if (r.exportedFrom) result.exportedFrom = r.exportedFrom;
  }
  result.format = [...formats].join(',');
  if (duplicateOf.length > 0) result.duplicateOf = [...new Set(duplicateOf)];
  if (result.runIds.length === 0 && duplicateOf.length === 0) {
    throw new ImportError(
      'EMPTY',
      `${paths.join(', ')}: read as ${result.format || 'nothing'}, but no metric step was found; nothing was imported`,
    );
  }
  return result;
}

/** Each tracker format's tracker and how its runs were stored, in the order a line names them. */
const TRACKER_FORMATS: Readonly<Record<string, { tracker: string; layout: string }>> = {
  wandb: { tracker: 'W&B', layout: 'from .wandb logs' },
  'wandb-files': { tracker: 'W&B', layout: 'from older run folders' },
  'mlflow-file': { tracker: 'MLflow', layout: 'file store' },
  'mlflow-sqlite': { tracker: 'MLflow', layout: 'SQLite store' },
  trackio: { tracker: 'Trackio', layout: 'database' },
};

/**
 * "4 W&B runs, 6 MLflow runs (3 file store, 3 SQLite store)" for a CLI line: runs counted per tracker as the app's
 * import panel counts them, the layouts named when a tracker's runs came in more than one, or in W&B's older one.
 */
export function describeTrackers(trackers: Readonly<Record<string, number>> | undefined): string {
  if (!trackers) return '';
  const order = Object.keys(TRACKER_FORMATS);
  const byTracker = new Map<string, [string, number][]>();
  const entries = Object.entries(trackers)
    .filter(([, n]) => n > 0)
    .sort(([a], [b]) => (order.includes(a) ? order.indexOf(a) : order.length) - (order.includes(b) ? order.indexOf(b) : order.length));
  for (const [format, n] of entries) {
    const t = TRACKER_FORMATS[format]?.tracker ?? format;
    byTracker.set(t, [...(byTracker.get(t) ?? []), [format, n]]);
  }
  return [...byTracker]
    .map(([tracker, parts]) => {
      const n = parts.reduce((sum, [, k]) => sum + k, 0);
      const layouts =
        parts.length > 1 || parts[0][0] === 'wandb-files'
          ? ` (${parts.map(([f, k]) => `${parts.length > 1 ? `${k} ` : ''}${TRACKER_FORMATS[f]?.layout ?? f}`).join(', ')})`
          : '';
      return `${n} ${tracker} run${n === 1 ? '' : 's'}${layouts}`;
    })
    .join(', ');
}
