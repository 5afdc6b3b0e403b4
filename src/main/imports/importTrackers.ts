/**
 * Tracker runs (trackers.ts: W&B, MLflow, Trackio) become imported lab runs: one lab run per tracker run, named
 * by the tracker's run name, tagged with the tracker, its project / experiment and group, its config as the
 * run's config (a verl run's Hydra config, MLflow params rebuilt into the nested dict verl flattened), the
 * tracker's summary as final metrics in the notes, and how the tracker saw it end (finished, failed, crashed).
 *
 * Steps go through RunWriter as for any imported log: mapped onto the metric catalog, checked by the collapse
 * detector, appended to the store; a run that fails midway is deleted, nothing half-imported remains.
 */
import { stat } from 'node:fs/promises';
import { RunKeyBound } from '../../core/formats/steps';
import type { SourceMeta, SourceRunInfo } from '../../core/formats/types';
import type { RunStore } from '../store/runStore';
import { sha256File } from './files';
import { defaultRegistry, type FormatRegistry } from './registry';
import { RunWriter } from './runWriter';
import { isSqliteError, UnreadableDbError } from './sqliteReadOnly';
import type { TrackerRun } from './trackers';

export interface ImportTrackersOptions {
  readonly name?: string;
  readonly tags?: readonly string[];
  readonly registry?: FormatRegistry;
  /** The one file is a temporary copy of an upload: the record names the user's file instead, as importLogs does. */
  readonly uploadedAs?: string;
  /**
   * The files are temporary copies of files uploaded together (a picked or dropped folder's tracker files): the
   * record names each by the user's path for it (temporary path → the path inside the picked folder).
   */
  readonly uploadedFiles?: Readonly<Record<string, string>>;
  /** SHA-256 of a file (hex); importSources hands in its cache so a file hashed for the duplicate check is not read again. */
  readonly sha256Of?: (path: string) => Promise<string>;
}

export interface TrackerImportOutcome {
  readonly runIds: string[];
  steps: number;
  readonly skipped: Record<string, number>;
  /** Tracker runs that had no step (nothing stored), by label. */
  readonly empty: string[];
  /** Lab runs per tracker format, e.g. { wandb: 3, 'mlflow-sqlite': 2 }. */
  readonly trackers: Record<string, number>;
}

function add(into: Record<string, number>, from: Readonly<Record<string, number>>): void {
  for (const [k, n] of Object.entries(from)) if (n > 0) into[k] = (into[k] ?? 0) + n;
}

function tagsOf(run: TrackerRun, extra: readonly string[]): string[] {
  const i = run.info;
  const tags = [...extra, run.info.tracker];
  if (i.project) tags.push(`${i.tracker === 'mlflow' ? 'experiment' : 'project'}:${i.project}`);
  if (i.group) tags.push(`group:${i.group}`);
  for (const t of i.tags ?? []) tags.push(t);
  if (i.state && i.state !== 'finished') tags.push(i.state);
  return [...new Set(tags)];
}

/** The note that names a tracker run in an imported run's record (also how a re-import is recognised). */
export function trackerRunNote(i: SourceRunInfo): string {
  return `${i.tracker} run ${i.id}`;
}

function endNotes(meta: SourceMeta): string[] {
  const i = meta.run;
  const out: string[] = [];
  if (i) {
    const where = [i.entity, i.project].filter(Boolean).join('/');
    out.push(
      `${trackerRunNote(i)}${i.name ? ` "${i.name}"` : ''}${where ? ` in ${where}` : ''}${i.group ? `, group ${i.group}` : ''}${i.startTime ? `, started ${i.startTime}` : ''}`,
    );
    if (i.state)
      out.push(
        `${i.tracker} says the run ${i.state === 'running' ? 'was still running' : i.state}${i.exitCode !== undefined && i.exitCode !== 0 ? ` (exit code ${i.exitCode})` : ''}`,
      );
  }
  if (meta.finalMetrics && Object.keys(meta.finalMetrics).length > 0) {
    const e = Object.entries(meta.finalMetrics);
    out.push(
      `summary: ${e
        .slice(0, 8)
        .map(([k, v]) => `${k}=${v}`)
        .join(', ')}${e.length > 8 ? `, … (${e.length} values)` : ''}`,
    );
  }
  return out;
}

export async function importTrackerRuns(
  store: RunStore,
  runs: readonly TrackerRun[],
  opts: ImportTrackersOptions = {},
): Promise<TrackerImportOutcome> {
  const registry = opts.registry ?? defaultRegistry;
  const out: TrackerImportOutcome = { runIds: [], steps: 0, skipped: {}, empty: [], trackers: {} };
  for (const run of runs) {
    // The label is known before reading for MLflow and Trackio; a W&B run's name comes from its first file's
    // run record, which the scan already read.
    const name = opts.name ? (runs.length > 1 ? `${opts.name} · ${run.label}` : opts.name) : run.label;
    const upload = opts.uploadedAs !== undefined && run.files.length === 1;
    const together = opts.uploadedFiles !== undefined && run.files.some((f) => opts.uploadedFiles![f] !== undefined);
    const newWriter = (): RunWriter =>
      new RunWriter(store, {
        registry,
        format: run.format,
        name,
        tags: tagsOf(run, opts.tags ?? []),
        paths: upload ? [opts.uploadedAs!] : run.files.map((f) => opts.uploadedFiles?.[f] ?? f),
        following: false,
        notes: upload || together ? ['uploaded through the app'] : [],
      });
    let writer = newWriter();
    // The tracker readers hand steps over directly (not through the text parsers' StepAccumulator): the same bound
    // on a run's distinct keys, its counts added to the reader's.
    let keyBound: Record<string, number> = {};
    let keys = new RunKeyBound(keyBound);
    try {
      const read = await run.read({
        add: (s) => {
          keys.apply(s.run, s.values);
          writer.add(s);
        },
        afterChunk: async (m) => {
          await writer.flush(m);
        },
        // Made while the reader's first steps are read (its files written and synced take ~0.1-0.2 s here); the
        // first flush waits for it. Its failure is the first flush's, which awaits the same promise.
        ready: (m) => void writer.ensureRun(m).catch(() => undefined),
        // The reader found the steps it gave out of order (trackers.ts MLFLOW_STEPS_PROGRAM): the half-written run is
        // removed, as a failed import's is, and the run is written afresh from what the reader gives next.
        again: async () => {
          await writer.abort();
          writer = newWriter();
          keyBound = {};
          keys = new RunKeyBound(keyBound);
        },
      });
      const meta = read.meta;
      const skipped = { ...read.skipped };
      add(skipped, keyBound);
      const sha: string[] = [];
      let bytes = 0;
      for (const f of run.files) {
        sha.push(await (opts.sha256Of ?? sha256File)(f));
        bytes += (await stat(f)).size;
      }
      // A run made early (`ready`) that no step ever reached is removed: a tracker run without steps is no lab run.
      const rec =
        writer.firstStep === null
          ? await writer.abort().then(() => null)
          : await writer.finish({
              meta: { ...meta, notes: [...meta.notes] },
              sha256: sha,
              bytes,
              parserSkipped: skipped,
              notes: endNotes(meta),
            });
      add(out.skipped, skipped);
      add(out.skipped, writer.skipped);
      if (rec) {
        // The tracker's verdict on how the run ended (crashed, failed) is known only after reading it.
        const tags = tagsOf(run, opts.tags ?? []);
        if (tags.join('\u0001') !== rec.tags.join('\u0001')) await store.updateRun(rec.id, { tags });
        out.runIds.push(rec.id);
        out.steps += writer.stored;
        out.trackers[run.format] = (out.trackers[run.format] ?? 0) + 1;
      } else out.empty.push(run.label);
    } catch (e) {
      await writer.abort();
      // A database damaged past the pages the scan read fails here, part way through its steps: the run is gone
      // (aborted above), the runs stored before it stay and are named.
      if (isSqliteError(e) || e instanceof UnreadableDbError) {
        const f = run.files[0];
        throw UnreadableDbError.of(upload ? opts.uploadedAs! : (opts.uploadedFiles?.[f] ?? f), e, out.runIds);
      }
      throw e;
    }
  }
  return out;
}
