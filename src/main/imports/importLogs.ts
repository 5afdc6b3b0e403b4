/**
 * `importLogs(store, paths, opts)`: external training logs (verl, TRL, TensorBoard, W&B CSV, JSONL, …) become
 * ordinary runs of kind 'imported'.
 *
 * Two phases. Planning reads only file heads: every path is detected from its content (or `opts.format` forces
 * it), a folder is walked for TensorBoard event files (one run per directory holding them, as TensorBoard groups
 * runs; several files in one directory are one run, read in name order, which for TensorBoard's names is time
 * order). A path in no known format stops the whole import before anything is written, naming the formats
 * tried. Importing then streams each source once: chunks go through the SHA-256 and the parser, and the steps a
 * chunk produced are stored before the next chunk is read, so a 1 GB log never sits in memory. A source whose
 * files some run already holds (same SHA-256 list) is not imported again unless `again`.
 *
 * A source's runs are built aside, in a run store of their own under <dataDir>/.imports/, and move into the
 * catalog only when complete, all at once and under the catalog's lock, where the "already imported" check is
 * made again (two processes importing one file make one run). A failed import removes what it built; a killed
 * one leaves nothing in the catalog (the next import clears its folder). Bundles (zip) go through the bundle
 * importer.
 */
import { randomBytes } from 'node:crypto';
import type { Stats } from 'node:fs';
import { mkdir, readdir, readFile, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { ImportResult, RunRecord } from '../../shared/api';
import type { LogFormat, ParserBase, SourceMeta, SourceStep } from '../../core/formats/types';
import { bundleHolders, importBundle, verifyBundle } from '../bundles/importBundle';
import { BundleError, sha256Hex } from '../bundles/manifest';
import { pidAlive, WRITER_TAG, writerState, writerTag } from '../platform/process';
import { RunStore } from '../store/runStore';
import { OTHER_MACHINE_MS } from '../store/atomic';
import {
  folderLabel,
  isZip,
  LineSplitter,
  listTree,
  readHead,
  sha256File,
  SKIP_LONG_LINE,
  sourceLabel,
  streamFile,
  TreeTooLargeError,
} from './files';
import { defaultRegistry, type FormatRegistry } from './registry';
import { RunWriter, SourceTally, sourceCopyRefusal } from './runWriter';

export type ImportErrorCode = 'NOT_FOUND' | 'UNKNOWN_FORMAT' | 'BAD_OPTION' | 'EMPTY' | 'UNREADABLE' | 'TOO_LARGE';

/** An import refused for a reason the user can act on (the CLI prints it; the API maps `code`). */
export class ImportError extends Error {
  constructor(
    readonly code: ImportErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ImportError';
  }
}

export interface ImportProgress {
  readonly path: string;
  readonly bytesRead: number;
  readonly totalBytes: number;
  readonly steps: number;
}

export interface ImportLogsOptions {
  /** Force a format (a LogFormat name or 'bundle') instead of detecting it. */
  readonly format?: string;
  readonly name?: string;
  readonly tags?: readonly string[];
  /** Import even if a run already holds the same source (by SHA-256). */
  readonly again?: boolean;
  readonly onProgress?: (p: ImportProgress) => void;
  /**
   * The one path is a temporary copy of an uploaded file (imports.file): record and name the run by the name
   * the user's file had (a TensorBoard file sent with its folder path, `run/events.out…`, is named by its folder).
   */
  readonly uploadedAs?: string;
  /**
   * The paths are temporary copies of one uploaded TensorBoard run folder's event files (imports.files), in this
   * order and under these names (`run/events.out…`): they become one run, as TensorBoard and a folder import
   * group a directory's files (a restarted writer leaves a second file beside the first).
   */
  readonly uploadedFolder?: readonly string[];
  /** Tests: parsers of their own. */
  readonly registry?: FormatRegistry;
}

/** One source to import: one file, or one TensorBoard run directory's event files. */
interface Unit {
  readonly format: LogFormat | 'bundle';
  readonly paths: string[];
  /** The paths the run records (an upload records the user's file name, not its temporary copy). */
  readonly recorded?: string[];
  /** Display name: the file name, or the run folder's path inside the imported tree. */
  readonly label: string;
  readonly bytes: number;
}

/** Largest bundle (zip) a path import reads; the lab's own bundles, checkpoint included, are tens of MB. */
export const MAX_BUNDLE_BYTES = 512 * 1024 * 1024;

export const SKIP_EMPTY_TB_DIR = 'event directory without scalars';

function formatList(registry: FormatRegistry): string {
  return [...registry.formats, 'bundle'].join(', ');
}

function checkFormat(format: string | undefined, registry: FormatRegistry): LogFormat | 'bundle' | undefined {
  if (format === undefined) return undefined;
  if (format === 'bundle' || (registry.formats as readonly string[]).includes(format)) return format as LogFormat | 'bundle';
  throw new ImportError('BAD_OPTION', `--format ${JSON.stringify(format)} is not a known format; known formats: ${formatList(registry)}`);
}

function refuseUnknown(path: string, registry: FormatRegistry): never {
  throw new ImportError(
    'UNKNOWN_FORMAT',
    `${path} is in no known format (detected from its content; formats tried: ${formatList(registry)}); nothing was imported. ` +
      `If you know its format, pass --format F.\n${registry.describe()}`,
  );
}

/** `shown`: the name messages use (an upload's own file name rather than its temporary copy's path). */
async function planPath(path: string, forced: LogFormat | 'bundle' | undefined, registry: FormatRegistry, shown = path): Promise<Unit[]> {
  let st;
  try {
    st = await stat(path);
  } catch (e) {
    if (denied(e)) throw new ImportError('UNREADABLE', `${shown}: permission denied (the lab runs as a user that may not read it)`);
    throw new ImportError('NOT_FOUND', `${path}: no such file or folder`);
  }
  try {
    return await planStat(path, st, forced, registry, shown);
  } catch (e) {
    if (e instanceof TreeTooLargeError) throw new ImportError('TOO_LARGE', e.message);
    if (denied(e))
      throw new ImportError(
        'UNREADABLE',
        `${shown}: ${(e as NodeJS.ErrnoException).code === 'EISDIR' ? 'a folder where a file was expected' : 'permission denied (the lab runs as a user that may not read it)'}`,
      );
    throw e;
  }
}

function denied(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  return code === 'EACCES' || code === 'EPERM';
}

async function planStat(
  path: string,
  st: Stats,
  forced: LogFormat | 'bundle' | undefined,
  registry: FormatRegistry,
  shown: string,
): Promise<Unit[]> {
  if (st.isDirectory()) {
    if (forced !== undefined && forced !== 'tensorboard')
      throw new ImportError(
        'BAD_OPTION',
        `${path} is a folder: only TensorBoard folders can be imported as a folder (--format ${forced} needs a file)`,
      );
    const byDir = new Map<string, { files: string[]; bytes: number }>();
    let others = 0;
    const unreadable = { count: 0 };
    for (const f of await listTree(path, undefined, unreadable)) {
      let head: Uint8Array;
      try {
        head = await readHead(f);
      } catch {
        // A file that cannot be opened (permission denied, gone meanwhile) is not one of the run's event files.
        unreadable.count++;
        continue;
      }
      if (head.length === 0 || registry.detect(head)?.format !== 'tensorboard') {
        others++;
        continue;
      }
      const d = dirname(f);
      const cur = byDir.get(d) ?? { files: [], bytes: 0 };
      cur.files.push(f);
      cur.bytes += (await stat(f)).size;
      byDir.set(d, cur);
    }
    if (byDir.size === 0) {
      throw new ImportError(
        'UNKNOWN_FORMAT',
        // Unforced, importSources has looked for trackers' runs in the folder already (scanTrackers): say so, not
        // only TensorBoard, or a wrong folder reads as a W&B or MLflow folder the lab cannot read.
        `${path} is a folder without TensorBoard event files${forced === undefined ? " or trackers' runs (W&B run folders, MLflow stores, MLflow or Trackio databases)" : ''} (${others} other file(s) looked at${unreadable.count ? `, ${unreadable.count} that could not be read` : ''}); to import a log file (verl, TRL, JSONL, CSV, …), pass the file itself`,
      );
    }
    const rootName = basename(resolve(path));
    return [...byDir.entries()].map(([d, v]) => ({
      format: 'tensorboard',
      paths: v.files,
      label: folderLabel(path, d, rootName),
      bytes: v.bytes,
    }));
  }
  if (!st.isFile()) throw new ImportError('NOT_FOUND', `${path} is not a regular file or folder`);
  const head = await readHead(path);
  if (head.length === 0) throw new ImportError('EMPTY', `${shown} is empty; nothing was imported`);
  let format: LogFormat | 'bundle';
  if (forced !== undefined) format = forced;
  else if (isZip(head)) format = 'bundle';
  else format = registry.detect(head)?.format ?? refuseUnknown(shown, registry);
  // TensorBoard names a run by its folder (event file names are timestamps and host names).
  return [{ format, paths: [path], label: sourceLabel(path, format), bytes: st.size }];
}

function uploadLabel(fileName: string, format: LogFormat | 'bundle'): string {
  const parts = fileName.split(/[\\/]/).filter((p) => p.length > 0);
  if (format === 'tensorboard' && parts.length > 1) return parts[parts.length - 2];
  return parts[parts.length - 1] ?? fileName;
}

/** An uploaded run folder's event files (one unit each, in order) as the one run TensorBoard makes of them. */
function folderUnit(units: readonly Unit[], names: readonly string[]): Unit {
  const other = units.findIndex((u) => u.format !== 'tensorboard');
  if (other >= 0)
    throw new ImportError(
      'UNKNOWN_FORMAT',
      `${names[other] ?? units[other].label} is not a TensorBoard event file (read as ${units[other].format}); a folder upload imports a run folder's event files only`,
    );
  if (units.length !== names.length) throw new ImportError('BAD_OPTION', `${names.length} file names for ${units.length} uploaded files`);
  return {
    format: 'tensorboard',
    paths: units.flatMap((u) => u.paths),
    recorded: [...names],
    label: uploadLabel(names[0], 'tensorboard'),
    bytes: units.reduce((n, u) => n + u.bytes, 0),
  };
}

/** Runs that already hold exactly these source files (by SHA-256, in order). */
async function holdersOf(store: RunStore, sha: readonly string[]): Promise<string[]> {
  const key = sha.join(',');
  const ids: string[] = [];
  for (const s of await store.listRuns()) {
    if (s.kind !== 'imported') continue;
    const rec = await store.getRun(s.id);
    if (rec?.source && rec.source.sha256.join(',') === key) ids.push(rec.id);
  }
  return ids;
}

/** Byte totals of imported runs' sources: a source can only duplicate one of the same size. */
async function importedSizes(store: RunStore): Promise<Set<number>> {
  const out = new Set<number>();
  for (const s of await store.listRuns()) {
    if (s.kind !== 'imported') continue;
    const rec = await store.getRun(s.id);
    if (rec?.source) out.add(rec.source.bytes);
  }
  return out;
}

function addCounts(into: Record<string, number>, from: Readonly<Record<string, number>>): void {
  for (const [k, n] of Object.entries(from)) if (n > 0) into[k] = (into[k] ?? 0) + n;
}

/** A run read from several files (a TensorBoard directory): the first file's framework and config, every note. */
function mergeMeta(prev: SourceMeta | null, next: SourceMeta): SourceMeta {
  if (prev === null) return { ...next, notes: [...next.notes] };
  return {
    ...prev,
    framework: prev.framework === 'unknown' ? next.framework : prev.framework,
    config: prev.config ?? next.config,
    notes: [...new Set([...prev.notes, ...next.notes])],
  };
}

interface UnitOutcome {
  runIds: string[];
  steps: number;
  skipped: Record<string, number>;
  /** Runs that already held this source when it was about to join the catalog (another import won the race). */
  duplicateOf: string[];
}

/** Where imports are built before they join the catalog (inside the data directory: one file system). */
export const STAGING_DIR = '.imports';

/** A staging folder's name: `p<pid>s<start>h<host>-<random>` (writerTag: its importer's pid, start in ticks since boot, host). */
const STAGE_NAME = new RegExp(`^${WRITER_TAG}-[0-9a-f]+$`);

/**
 * A run store of its own for one import, in <dataDir>/.imports/<writer>-<random>: the runs are built there and move
 * into the catalog only when complete (RunStore.adoptRuns), so a killed import leaves no half run behind. What a
 * killed import left (its process is gone) is removed here.
 */
async function openStaging(store: RunStore): Promise<{ store: RunStore; dir: string }> {
  const root = join(store.dataDir, STAGING_DIR);
  await mkdir(root, { recursive: true });
  for (const n of await readdir(root).catch(() => [] as string[])) {
    const tagged = STAGE_NAME.exec(n);
    const pid = tagged ? Number(tagged[1]) : Number(n.split('-')[0]);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    const changed = await stat(join(root, n)).then(
      (st) => st.mtimeMs,
      () => null,
    );
    if (changed === null) continue;
    // A name with its importer's start is judged by it exactly, however long the import has run and whatever the wall
    // clock did; another machine's importer (or this one's before a reboot) cannot be judged here, and its folder is left until unchanged for a day. A name of older versions (`<pid>-<random>`) by the folder's last change: its importer made and changed
    // it while it lived, so a process with its pid that started after that is not its importer (after a session's end
    // killed every process, pids are handed out from low numbers again, and a dead import's folder named this very
    // process's pid, or a later one's, stayed) — which a forward step of the clock gets wrong for a live import.
    // Another machine's (or this one's before a reboot) once unchanged for a day: a live import rewrites its catalog.
    const state = tagged ? writerState(tagged[1]!, tagged[2], tagged[3]!, changed) : null;
    const gone =
      state === null ? !pidAlive(pid, changed) : state === 'gone' || (state === 'elsewhere' && Date.now() - changed > OTHER_MACHINE_MS);
    if (gone) await rm(join(root, n), { recursive: true, force: true });
  }
  const dir = join(root, `${writerTag()}-${randomBytes(6).toString('hex')}`);
  return { store: await RunStore.open(dir), dir };
}

async function importUnit(
  target: RunStore,
  unit: Unit,
  opts: ImportLogsOptions,
  registry: FormatRegistry,
  multiUnit: boolean,
): Promise<UnitOutcome> {
  const staging = await openStaging(target);
  try {
    return await importUnitAside(target, staging.store, unit, opts, registry, multiUnit);
  } finally {
    await staging.store.close().catch(() => undefined);
    await rm(staging.dir, { recursive: true, force: true });
  }
}

/** importUnit's body: the runs are written to `store` (the staging store) and adopted by `target` at the end. */
async function importUnitAside(
  target: RunStore,
  store: RunStore,
  unit: Unit,
  opts: ImportLogsOptions,
  registry: FormatRegistry,
  multiUnit: boolean,
): Promise<UnitOutcome> {
  const format = unit.format as LogFormat;
  // Per source run, its attempts: a restarted process (steps going back) continues in a linked run.
  const chains = new Map<string, RunWriter[]>();
  const writers: RunWriter[] = [];
  const totalBytes = unit.bytes;
  let bytesBefore = 0;
  let steps = 0;
  const newWriter = (run: string, attempt: number): RunWriter => {
    const base = opts.name ?? unit.label;
    let name = run === '' ? (multiUnit && opts.name ? `${opts.name} · ${unit.label}` : base) : `${base} · ${run}`;
    if (attempt > 1) name = `${name} (restart ${attempt})`;
    const w = new RunWriter(store, {
      registry,
      format,
      name,
      tags: [...(opts.tags ?? []), ...(attempt > 1 ? ['restart'] : [])],
      paths: unit.recorded ?? unit.paths,
      following: false,
      notes: unit.recorded ? ['uploaded through the app'] : [],
    });
    writers.push(w);
    return w;
  };
  const tally = new SourceTally();
  const onStep = (s: SourceStep): void => {
    tally.steps++;
    let chain = chains.get(s.run);
    if (!chain) chains.set(s.run, (chain = [newWriter(s.run, 1)]));
    let w = chain[chain.length - 1];
    // Steps going back in a text log: the training process was restarted and appended its own steps (a resume
    // from a checkpoint, or a fresh start). Each attempt is a run of its own, as in live follow (follow.ts).
    // TensorBoard's late values are the parser's reorder window's business; what it still emits late is dropped.
    if (format !== 'tensorboard' && Number.isSafeInteger(s.step) && s.step < w.highWater) {
      w = newWriter(s.run, chain.length + 1);
      chain.push(w);
    }
    if (w.add(s)) steps++;
  };
  /** The notes that link the attempts of one source run, by writer. */
  const links = (w: RunWriter): string[] => {
    for (const chain of chains.values()) {
      const i = chain.indexOf(w);
      if (i < 0 || chain.length === 1) continue;
      const out: string[] = [];
      if (i > 0)
        out.push(
          `restart ${i + 1}: the source process started again at step ${w.firstStep} after run ${chain[i - 1].runId} reached step ${chain[i - 1].highWater}`,
        );
      if (i < chain.length - 1)
        out.push(
          `the source restarted at step ${chain[i + 1].firstStep} after step ${w.highWater}; later steps are in run ${chain[i + 1].runId}`,
        );
      return out;
    }
    return [];
  };
  const parserSkipped: Record<string, number> = {};
  let meta: SourceMeta | null = null;
  const sha: string[] = [];
  try {
    for (const path of unit.paths) {
      let parser: ParserBase;
      let feed: (chunk: Uint8Array) => void;
      let finishInput: () => void;
      let splitter: LineSplitter | null = null;
      if (registry.isBinary(format)) {
        const p = registry.byteParser(format, onStep);
        parser = p;
        feed = (c) => p.push(c);
        finishInput = () => p.end();
      } else {
        const p = registry.lineParser(format, onStep);
        parser = p;
        const sp = new LineSplitter(tally.countLines((line) => p.push(line)));
        splitter = sp;
        feed = (c) => sp.push(c);
        finishInput = () => {
          sp.end();
          p.end();
        };
      }
      const flushAll = async () => {
        for (const w of writers) await w.flush(parser.meta);
      };
      const r = await streamFile(
        path,
        async (chunk) => {
          feed(chunk);
          await flushAll();
        },
        (n) => opts.onProgress?.({ path, bytesRead: bytesBefore + n, totalBytes, steps }),
      );
      finishInput();
      await flushAll();
      bytesBefore += r.bytes;
      sha.push(r.sha256);
      addCounts(parserSkipped, parser.skipped);
      if (splitter && splitter.longLines > 0) addCounts(parserSkipped, { [SKIP_LONG_LINE]: splitter.longLines });
      // One run per source: the meta of a TensorBoard directory's files is the first file's plus later notes.
      meta = mergeMeta(meta, parser.meta);
    }
    const built: RunRecord[] = [];
    let stored = 0;
    const skipped: Record<string, number> = { ...parserSkipped };
    const copyRefused = sourceCopyRefusal(opts.format !== undefined, registry.isBinary(format), tally);
    for (const w of writers) {
      const rec = await w.finish({
        meta,
        sha256: sha,
        bytes: bytesBefore,
        parserSkipped,
        copyFrom: unit.paths,
        copyRefused,
        notes: links(w),
      });
      addCounts(skipped, w.skipped);
      if (rec) {
        built.push(rec);
        stored += w.stored;
      }
    }
    if (built.length === 0 && format === 'tensorboard') addCounts(skipped, { [SKIP_EMPTY_TB_DIR]: 1 });
    await store.flush();
    // Into the catalog, all runs of this source at once; the "already imported" check is made under the same lock,
    // so two processes importing one file at once make one run (the other reports it).
    const key = sha.join(',');
    const { adopted, heldBy } = await target.adoptRuns(
      built.map((record) => ({ dir: store.runDir(record.id), record })),
      opts.again ? undefined : (runs) => runs.filter((r) => r.kind === 'imported' && r.source?.sha256.join(',') === key).map((r) => r.id),
    );
    if (heldBy.length > 0) return { runIds: [], steps: 0, skipped: {}, duplicateOf: heldBy };
    return { runIds: adopted, steps: stored, skipped, duplicateOf: [] };
  } catch (e) {
    for (const w of writers) await w.abort();
    throw e;
  }
}

export async function importLogs(store: RunStore, paths: readonly string[], opts: ImportLogsOptions = {}): Promise<ImportResult> {
  const registry = opts.registry ?? defaultRegistry;
  if (paths.length === 0) throw new ImportError('BAD_OPTION', 'no PATH given: pass one or more log files or folders');
  const forced = checkFormat(opts.format, registry);
  // Phase 1: plan every path (heads only), so an unknown format anywhere writes nothing.
  let units: Unit[] = [];
  const shown = opts.uploadedAs !== undefined ? [opts.uploadedAs] : (opts.uploadedFolder ?? paths);
  for (const [i, p] of paths.entries()) units.push(...(await planPath(p, forced, registry, shown[i] ?? p)));
  if (opts.uploadedAs !== undefined)
    units = units.map((u) => ({ ...u, recorded: [opts.uploadedAs!], label: uploadLabel(opts.uploadedAs!, u.format) }));
  if (opts.uploadedFolder !== undefined) units = [folderUnit(units, opts.uploadedFolder)];
  const result = {
    runIds: [] as string[],
    formats: new Set<string>(),
    steps: 0,
    skipped: {} as Record<string, number>,
    duplicateOf: [] as string[],
    exportedFrom: [] as string[],
  };
  const sizes = opts.again ? new Set<number>() : await importedSizes(store);
  const multiUnit = units.length > 1;
  for (const unit of units) {
    result.formats.add(unit.format);
    if (unit.format === 'bundle') {
      // A bundle is checked whole in memory: past MAX_BUNDLE_BYTES it is refused before a byte is read.
      if (unit.bytes > MAX_BUNDLE_BYTES) {
        throw new ImportError(
          'TOO_LARGE',
          `${unit.recorded?.[0] ?? unit.paths[0]} is ${(unit.bytes / 1024 / 1024).toFixed(0)} MiB: a bundle over ${MAX_BUNDLE_BYTES / 1024 / 1024} MiB is not read (the lab's own bundles are far smaller; is it a bundle?)`,
        );
      }
      const data = new Uint8Array(await readFile(unit.paths[0]));
      let r;
      try {
        const verified = verifyBundle(data);
        // A bundle already in the lab (the same file imported before, or the run it was exported from, same
        // metrics: importBundle.ts bundleHolders) is reported, not copied under a new id.
        if (!opts.again) {
          const holders = await bundleHolders(store, sha256Hex(data), verified.manifest);
          if (holders.length > 0) {
            result.duplicateOf.push(...holders.map((h) => h.id));
            result.exportedFrom.push(...holders.filter((h) => h.why === 'exported-from').map((h) => h.id));
            continue;
          }
        }
        r = await importBundle(store, data, verified);
      } catch (e) {
        if (e instanceof BundleError) throw new BundleError(`${unit.recorded?.[0] ?? unit.paths[0]}: ${e.message}`);
        throw e;
      }
      result.runIds.push(r.runId);
      result.steps += (await store.readMetrics(r.runId)).length;
      continue;
    }
    // Only a source of a size some imported run has can be a duplicate: hash it first then (one extra read).
    if (sizes.has(unit.bytes)) {
      const sha: string[] = [];
      for (const p of unit.paths) sha.push(await sha256File(p));
      const holders = await holdersOf(store, sha);
      if (holders.length > 0) {
        result.duplicateOf.push(...holders);
        continue;
      }
    }
    const r = await importUnit(store, unit, opts, registry, multiUnit);
    result.duplicateOf.push(...r.duplicateOf);
    result.runIds.push(...r.runIds);
    result.steps += r.steps;
    addCounts(result.skipped, r.skipped);
  }
  if (result.runIds.length === 0 && result.duplicateOf.length === 0) {
    throw new ImportError(
      'EMPTY',
      `${shown.join(', ')}: read as ${[...result.formats].join(', ')}, but no metric step was found; nothing was imported${Object.keys(result.skipped).length ? ` (skipped: ${JSON.stringify(result.skipped)})` : ''}`,
    );
  }
  return {
    runIds: result.runIds,
    format: [...result.formats].join(','),
    steps: result.steps,
    skipped: result.skipped,
    ...(result.duplicateOf.length > 0 ? { duplicateOf: [...new Set(result.duplicateOf)] } : {}),
    ...(result.exportedFrom.length > 0 ? { exportedFrom: [...new Set(result.exportedFrom)] } : {}),
  };
}

/**
 * The sentence a CLI or UI shows for sources that were already there (a bundle: `bundle` true; `exportedFrom`:
 * holders that are the bundled run itself, ImportResult.exportedFrom). `again`: how the caller's option to import
 * anyway is written (the CLI's flag; the API's bundles.import says `again: true`).
 */
export function duplicateMessage(
  paths: readonly string[],
  holders: readonly string[],
  bundle = false,
  exportedFrom: readonly string[] = [],
  again = '--again',
): string {
  if (bundle && exportedFrom.length > 0)
    return `${paths.join(', ')}: already in the lab as run ${holders.join(', ')} (the run this bundle holds: same metrics, by SHA-256); nothing was changed; ${again} to import a copy under a new id`;
  if (bundle)
    return `${paths.join(', ')}: already imported as run ${holders.join(', ')} (same bundle file, by SHA-256); ${again} to import a copy`;
  return `${paths.join(', ')}: already imported as run ${holders.join(', ')} (same SHA-256); pass ${again} to import it again`;
}
