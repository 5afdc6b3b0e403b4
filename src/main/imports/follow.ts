/**
 * Live follow: tail a training log that is still being written — one file, or a TensorBoard
 * run folder gaining event files — into one imported run, running the collapse detector on every new step.
 *
 * Reading: `fs.watch` wakes the follower when the file or folder changes, and a poll (default every 500 ms)
 * catches what watching misses (network file systems, editors that replace files). Each wake reads what was
 * appended since the last one, in chunks, through the format's incremental parser; the steps go through a
 * RunWriter (runWriter.ts), which stores them and raises alerts live.
 *
 * Truncation and rotation: when the file's inode changes or it shrinks below what was read, it is reopened
 * from the start with a fresh parser. Steps at or below the run's high-water mark are then either a replay of
 * what is stored — recognised by a fingerprint of their values, and dropped — or a restarted process writing
 * its own steps again (e.g. from 0). A restart ends the current run (completed, with a note) and continues in a
 * new linked run named "<name> (restart N)": overlaying a second attempt on the first one's steps would mix
 * two trainings in one curve, and shifting its steps would invent step numbers, so neither is done.
 *
 * Latency: text parsers complete a step when the next one begins (verl prints a validation line and a training
 * line for one step), so the newest step of a text log appears when the one after it is written, or when
 * following stops. TensorBoard's open steps are flushed whenever the folder has been quiet for a poll.
 */
import { createHash, type Hash } from 'node:crypto';
import { watch, type FSWatcher, type Stats } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';
import type { Alert, FollowInfo, RunRecord } from '../../shared/api';
import type { MetricRecord } from '../../shared/metrics';
import type { ByteParser, LineParser, LogFormat, SourceMeta, SourceStep } from '../../core/formats/types';
import type { RunStore } from '../store/runStore';
import { CHUNK_BYTES, HEAD_BYTES, LineSplitter, listTree, readHead, sourceLabel } from './files';
import { ImportError } from './importLogs';
import { defaultRegistry, type FormatRegistry } from './registry';
import { RunWriter, SourceTally, sourceCopyRefusal } from './runWriter';
import { isSqlite, openReadOnly, tablesOf } from './sqliteReadOnly';
import { sqliteKind } from './trackers';

export const SKIP_REPLAYED = 'replayed step';
export const SKIP_OTHER_RUN = 'other source run';
/** How much of a file's start is compared on every growth to notice it was rewritten in place. */
const HEAD_CHECK = 4096;

export interface FollowOptions {
  readonly format?: string;
  readonly name?: string;
  readonly tags?: readonly string[];
  /** Poll interval (ms), the fallback to fs.watch. Default 500. */
  readonly pollMs?: number;
  /** Stop (completed) after this many seconds without new bytes. Default: follow until stop(). */
  readonly idleSeconds?: number;
  readonly registry?: FormatRegistry;
  /** Stored metric records of the followed run (publish as run.metrics). */
  readonly onRecords?: (runId: string, records: readonly MetricRecord[]) => void;
  /** Alerts raised or extended, after they are stored (publish as run.alert). */
  readonly onAlert?: (runId: string, alert: Alert, kind: 'raised' | 'updated') => void;
  /** A run of this follow was created, ended or changed status (publish runs.changed / session.status). */
  readonly onRunChange?: (runId: string) => void;
  /** A restarted source process: its steps now go to `runId`, a new run linked to `previousRunId`. */
  readonly onRestart?: (runId: string, previousRunId: string) => void;
  /** Source events worth telling a user (reopened after truncation, restart detected, gave up). */
  readonly onNotice?: (message: string) => void;
  /**
   * How long the followed file may be gone (deleted, rotated away) or unreadable (permission denied) before the
   * follow ends, stopped, with the reason (ms). Default 10 s: a rotation or a brief chmod passes unnoticed.
   */
  readonly goneMs?: number;
  /**
   * How long a file whose format has not shown may be followed before the follow ends, stopped, saying so
   * (seconds). Default 600: a trainer prints its config within minutes of starting; a file that matches no
   * format by then is not a training log (and a follow must not sit at "step 0" forever).
   */
  readonly formatSeconds?: number;
}

/**
 * Whether the start of a file reads as text: valid UTF-8 (a partial character at the end allowed). A file that
 * does not, and matches no binary format, is no log that will ever be read (a picture, an archive).
 */
export function looksLikeText(head: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
    return true;
  } catch {
    return false;
  }
}

/** Errors reading the followed file that may pass (a rotation in progress, a brief chmod). */
function transient(e: unknown): 'gone' | 'unreadable' | null {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  if (code === 'ENOENT') return 'gone';
  if (code === 'EACCES' || code === 'EPERM') return 'unreadable';
  return null;
}

interface Tail {
  readonly path: string;
  ino: number;
  pos: number;
  /** The file's first bytes as read (up to HEAD_CHECK): a file rewritten in place no longer starts with them. */
  head: Uint8Array;
  hash: Hash;
  parser: LineParser | ByteParser;
  splitter: LineSplitter | null;
}

/** Fingerprint of one source step's values (32-bit FNV-1a of their JSON), to tell a replay from a restart. */
function fingerprint(s: SourceStep): number {
  const text = JSON.stringify(s.values);
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * Stored steps' fingerprints, in step order (the writer only takes increasing steps): two flat number arrays,
 * about 16 bytes a step, so a follow of a million-step log stays small.
 */
class Fingerprints {
  private steps: number[] = [];
  private prints: number[] = [];

  add(step: number, fp: number): void {
    this.steps.push(step);
    this.prints.push(fp);
  }

  get(step: number): number | undefined {
    let lo = 0;
    let hi = this.steps.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const v = this.steps[mid];
      if (v === step) return this.prints[mid];
      if (v < step) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }
}

function addCounts(into: Record<string, number>, from: Readonly<Record<string, number>>): void {
  for (const [k, n] of Object.entries(from)) if (n > 0) into[k] = (into[k] ?? 0) + n;
}

/**
 * Folder mode follows one TensorBoard run folder (its own event files). A folder whose event files all sit in
 * sub-folders is a tree of runs: refused with the run folders to choose from.
 */
async function refuseTree(path: string, registry: FormatRegistry): Promise<void> {
  const dirs = new Set<string>();
  for (const f of await listTree(path)) {
    const d = dirname(f);
    if (dirs.has(d)) continue;
    if (registry.detect(await readHead(f))?.format !== 'tensorboard') continue;
    if (d === join(path)) return;
    dirs.add(d);
  }
  if (dirs.size === 0) return; // nothing yet: the training has not written its first event file
  const list = [...dirs].sort().map((d) => relative(path, d));
  throw new ImportError(
    'BAD_OPTION',
    `${path} holds TensorBoard runs in sub-folders (${list.slice(0, 5).join(', ')}${list.length > 5 ? ', …' : ''}): follow one run folder, e.g. ${join(path, list[0])}`,
  );
}

/**
 * The run a follow of `path` left behind when its process died (marked interrupted, still recorded as followed),
 * in the same format: the newest one, or null.
 */
async function interruptedFollowOf(store: RunStore, path: string, format: LogFormat | null): Promise<RunRecord | null> {
  let best: RunRecord | null = null;
  for (const s of await store.listRuns({ status: ['interrupted'] })) {
    if (s.kind !== 'imported') continue;
    const rec = await store.getRun(s.id);
    const src = rec?.source;
    if (!rec || !src?.following || src.paths.length !== 1 || src.paths[0] !== path) continue;
    if (format !== null && src.format !== format) continue;
    if (!best || rec.createdAt > best.createdAt) best = rec;
  }
  return best;
}

/**
 * A tracker's SQLite database is no log to tail: `arlarena follow` polls it (followTrackers.ts, one lab run per
 * tracker run) and Import reads it, but this follower would refuse it as binary "in no known format", which is
 * untrue. Say what it is and the ways in instead.
 */
function refuseTrackerDb(path: string): never {
  let kind: 'mlflow-sqlite' | 'trackio' | null = null;
  try {
    const db = openReadOnly(path);
    try {
      kind = sqliteKind(tablesOf(db));
    } finally {
      db.close();
    }
  } catch {
    // Unreadable as SQLite (or no reader here): named as a database in general below.
  }
  const what = kind === 'mlflow-sqlite' ? 'an MLflow SQLite store' : kind === 'trackio' ? 'a Trackio database' : 'a SQLite database';
  const tracker = kind === null ? " (neither MLflow's nor Trackio's tables)" : '';
  throw new ImportError(
    'BAD_OPTION',
    `${path} is ${what}${tracker}: Follow tails a log file or a TensorBoard folder, not a database; nothing was followed. ` +
      (kind === null
        ? 'The lab reads MLflow and Trackio databases only.'
        : `Import it (Import… / From a path…: every run in it), or follow it live while it gains rows with \`arlarena follow ${path}\` (polled read-only, one lab run per tracker run).`),
  );
}

export class LogFollower {
  private writer: RunWriter;
  private readonly runs: string[] = [];
  private format: LogFormat | null;
  private readonly isDir: boolean;
  private tails = new Map<string, Tail>();
  /** Folder mode: files seen that are not (yet) recognisable event files, and their size when last looked at. */
  private undecided = new Map<string, number>();
  private fingerprints = new Fingerprints();
  private sourceRun: string | null = null;
  private restarts = 0;
  private retiring: Array<{ writer: RunWriter; notes: string[] }> = [];
  private readonly skipped: Record<string, number> = {};
  private readonly parserSkipped: Record<string, number> = {};
  private meta: SourceMeta | null = null;
  private bytes = 0;
  private lastDataAt = Date.now();
  private quietTicks = 0;
  private timer: ReturnType<typeof setInterval> | null = null;
  private watcher: FSWatcher | null = null;
  private ticking: Promise<void> | null = null;
  private again = false;
  private stopping: Promise<FollowInfo> | null = null;
  private status: FollowInfo['status'] = 'running';
  private readonly startedAt = new Date().toISOString();
  private readonly startedMs = Date.now();
  private resolveDone!: (info: FollowInfo) => void;
  /** Resolves once following has ended (stopped, idle, or failed). */
  readonly done: Promise<FollowInfo>;
  private readonly registry: FormatRegistry;
  /** Continuing a run a killed follower left: the last step it stored (steps up to it are replays), until passed. */
  private continuedThrough: number | null = null;
  /** Lines and steps read, to judge whether the source is a log whose copy the run keeps. */
  private readonly tally = new SourceTally();
  /** Since when the followed file has been gone or unreadable (null: readable now). */
  private troubleSince: number | null = null;
  /** Why following must end, found during a tick (the tick cannot stop itself): stop() then ends the run stopped. */
  private endReason: string | null = null;

  private constructor(
    private readonly store: RunStore,
    readonly path: string,
    isDir: boolean,
    format: LogFormat | null,
    private readonly opts: FollowOptions,
  ) {
    this.registry = opts.registry ?? defaultRegistry;
    this.isDir = isDir;
    this.format = format;
    this.writer = this.newWriter([]);
    this.done = new Promise((r) => (this.resolveDone = r));
  }

  /**
   * Start following `path`. A file that already holds enough to judge and is in no known format is refused
   * before anything is written; an empty or young file is followed while its format is detected.
   */
  static async start(store: RunStore, path: string, opts: FollowOptions = {}): Promise<LogFollower> {
    const registry = opts.registry ?? defaultRegistry;
    let forced: LogFormat | null = null;
    if (opts.format !== undefined) {
      if (!(registry.formats as readonly string[]).includes(opts.format))
        throw new ImportError(
          'BAD_OPTION',
          `--format ${JSON.stringify(opts.format)} cannot be followed; followable formats: ${registry.formats.join(', ')}`,
        );
      forced = opts.format as LogFormat;
    }
    let st;
    try {
      st = await stat(path);
    } catch {
      throw new ImportError('NOT_FOUND', `${path}: no such file or folder (start following once the training has created it)`);
    }
    const isDir = st.isDirectory();
    if (isDir && forced !== null && forced !== 'tensorboard')
      throw new ImportError('BAD_OPTION', `${path} is a folder: only a TensorBoard run folder can be followed as a folder`);
    if (isDir) await refuseTree(path, registry);
    let format = isDir ? 'tensorboard' : forced;
    if (!isDir && format === null && st.size > 0) {
      const head = await readHead(path);
      format = registry.detect(head)?.format ?? null;
      if (format === null && isSqlite(head)) refuseTrackerDb(path);
      if (format === null && head.length >= HEAD_BYTES) {
        throw new ImportError(
          'UNKNOWN_FORMAT',
          `${path} is in no known format (detected from its first ${HEAD_BYTES} bytes; formats tried: ${registry.formats.join(', ')}); nothing was followed. If you know its format, pass --format F.\n${registry.describe()}`,
        );
      }
      // A young text log may not show its format yet; binary content in no binary format never will.
      if (format === null && !looksLikeText(head)) {
        throw new ImportError(
          'UNKNOWN_FORMAT',
          `${path} is in no known format (its content is binary, not text, and matches none of the binary formats; formats tried: ${registry.formats.join(', ')}); nothing was followed. If you know its format, pass --format F.\n${registry.describe()}`,
        );
      }
    }
    // A follow of this file that its process left behind (killed): continue that run rather than start another.
    const prior = isDir ? null : await interruptedFollowOf(store, path, format);
    const priorFormat =
      prior?.source && (registry.formats as readonly string[]).includes(prior.source.format) ? (prior.source.format as LogFormat) : null;
    const f = new LogFollower(store, path, isDir, (format ?? priorFormat) as LogFormat | null, opts);
    if (prior) f.continuedThrough = await f.writer.attach(prior);
    else await f.writer.ensureRun(null);
    f.runs.push(f.writer.runId!);
    opts.onRunChange?.(f.writer.runId!);
    f.begin();
    return f;
  }

  /** The run new steps go to now (a restart moves it to a new linked run). */
  get runId(): string {
    return this.writer.runId ?? this.runs[this.runs.length - 1];
  }

  /** Every run this follow made, oldest first. */
  get runIds(): readonly string[] {
    return this.runs;
  }

  info(): FollowInfo {
    return {
      runId: this.runId,
      path: this.path,
      format: this.format ?? 'detecting',
      step: Number.isFinite(this.writer.highWater) ? this.writer.highWater : 0,
      steps: this.writer.stored,
      startedAt: this.startedAt,
      status: this.status,
    };
  }

  /** The run's name before any restart: the name asked for, or the source's (a TensorBoard file: its folder's). */
  private baseName(): string {
    return this.opts.name ?? (this.isDir ? basename(this.path) : sourceLabel(this.path, this.format));
  }

  private newWriter(notes: string[]): RunWriter {
    const base = this.baseName();
    const name = this.restarts === 0 ? base : `${base} (restart ${this.restarts + 1})`;
    return new RunWriter(this.store, {
      registry: this.registry,
      format: this.format ?? 'detecting',
      name,
      tags: [...(this.opts.tags ?? []), ...(this.restarts > 0 ? ['restart'] : [])],
      paths: [this.path],
      following: true,
      notes,
      onRecords: this.opts.onRecords,
      onAlert: this.opts.onAlert,
    });
  }

  private begin(): void {
    try {
      // Watch the folder (a file's own watch dies with a rename, and rotation is a rename).
      this.watcher = watch(this.isDir ? this.path : join(this.path, '..'), { persistent: false }, () => this.wake());
      this.watcher.on('error', () => {
        this.watcher?.close();
        this.watcher = null;
      });
    } catch {
      this.watcher = null; // polling alone
    }
    this.timer = setInterval(() => this.wake(), this.opts.pollMs ?? 500);
    this.wake();
  }

  /** Run one tick now, or right after the running one (ticks never overlap). */
  private wake(): void {
    if (this.stopping || this.status !== 'running') return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = (async () => {
      do {
        this.again = false;
        try {
          await this.tick();
        } catch (e) {
          await this.failWith(e instanceof Error ? e.message : String(e));
          return;
        }
      } while (this.again && this.status === 'running' && this.endReason === null);
    })().finally(() => {
      this.ticking = null;
      if (this.endReason !== null) void this.stop();
    });
  }

  private async tick(): Promise<void> {
    let got = 0;
    if (this.isDir) {
      for (const f of await this.eventFiles()) got += await this.readTail(f);
    } else {
      got = await this.readTail(this.path);
    }
    await this.settle();
    if (got > 0) {
      this.lastDataAt = Date.now();
      this.quietTicks = 0;
    } else if (++this.quietTicks === 2) {
      // Quiet for a while: steps still open (TensorBoard waiting for late tags, a text log's last step waiting
      // for its next line) are complete enough to show.
      for (const t of this.tails.values()) t.parser.flushPending?.();
      await this.settle();
    }
    if (this.opts.idleSeconds !== undefined && Date.now() - this.lastDataAt >= this.opts.idleSeconds * 1000) void this.stop();
    const formatSeconds = this.opts.formatSeconds ?? 600;
    if (!this.isDir && this.format === null && this.endReason === null && Date.now() - this.startedMs >= formatSeconds * 1000) {
      this.endReason = `no step was read from ${this.path} in the first ${formatSeconds} s of following: its content matches no known format (formats tried: ${this.registry.formats.join(', ')}); following stopped. If you know its format, follow it again with --format F`;
    }
  }

  /** Folder mode: the folder's event files, in name order (TensorBoard's names sort by time). */
  private async eventFiles(): Promise<string[]> {
    const out: string[] = [];
    const names = (await readdir(this.path, { withFileTypes: true }))
      .filter((d) => d.isFile() && !d.name.startsWith('.'))
      .map((d) => d.name)
      .sort();
    for (const n of names) {
      const p = join(this.path, n);
      if (this.tails.has(p)) {
        out.push(p);
        continue;
      }
      const size = await stat(p).then(
        (s) => s.size,
        () => -1,
      );
      if (size <= 0 || this.undecided.get(p) === size) continue;
      const head = await readHead(p);
      if (this.registry.detect(head)?.format === 'tensorboard') {
        this.undecided.delete(p);
        out.push(p);
      } else this.undecided.set(p, size);
    }
    return out;
  }

  private newTail(path: string, ino: number): Tail {
    const format = this.format!;
    const onStep = (s: SourceStep) => this.onStep(s);
    const empty = new Uint8Array(0);
    if (this.registry.isBinary(format))
      return {
        path,
        ino,
        pos: 0,
        head: empty,
        hash: createHash('sha256'),
        parser: this.registry.byteParser(format, onStep),
        splitter: null,
      };
    const parser = this.registry.lineParser(format, onStep);
    return {
      path,
      ino,
      pos: 0,
      head: empty,
      hash: createHash('sha256'),
      parser,
      splitter: new LineSplitter(this.tally.countLines((line) => parser.push(line))),
    };
  }

  /** End a tail's parser (its last pending step comes out) and keep what it skipped. */
  private closeTail(t: Tail): void {
    t.splitter?.end();
    t.parser.end();
    addCounts(this.parserSkipped, t.parser.skipped);
    this.meta = this.mergeMeta(t.parser.meta);
  }

  private mergeMeta(m: SourceMeta): SourceMeta {
    if (this.meta === null) return { ...m, notes: [...m.notes] };
    return {
      ...this.meta,
      framework: this.meta.framework === 'unknown' ? m.framework : this.meta.framework,
      config: this.meta.config ?? m.config,
      notes: [...new Set([...this.meta.notes, ...m.notes])],
    };
  }

  /** Read what was appended to one file since the last tick; reopen it from the start after truncation/rotation. */
  private async readTail(path: string): Promise<number> {
    let st;
    try {
      st = await stat(path);
    } catch (e) {
      // Rotated away and not created again yet, or a folder made unreadable for a moment: look again next tick.
      return this.trouble(path, e);
    }
    try {
      const n = await this.readTailOf(path, st);
      this.troubleSince = null;
      return n;
    } catch (e) {
      return this.trouble(path, e);
    }
  }

  /**
   * The followed file cannot be read now. Gone or unreadable for longer than `goneMs`: following ends, stopped, with
   * the reason (the steps read are kept); until then the next ticks try again. Any other error fails the follow.
   */
  private trouble(path: string, e: unknown): number {
    const kind = transient(e);
    if (kind === null) throw e;
    const now = Date.now();
    this.troubleSince ??= now;
    const limit = this.opts.goneMs ?? 10_000;
    if (now - this.troubleSince >= limit && this.endReason === null) {
      this.endReason =
        kind === 'gone'
          ? `${path} was deleted while it was followed (gone for ${(limit / 1000).toFixed(0)} s); the ${this.writer.stored} step(s) read until then are kept`
          : `${path} could not be read for ${(limit / 1000).toFixed(0)} s (${(e as NodeJS.ErrnoException).code}: permission denied); the ${this.writer.stored} step(s) read until then are kept`;
    }
    return 0;
  }

  private async readTailOf(path: string, st: Stats): Promise<number> {
    if (this.format === null) {
      if (st.size === 0) return 0;
      const head = await readHead(path);
      const d = this.registry.detect(head);
      if (!d) {
        if (head.length >= HEAD_BYTES)
          throw new Error(
            `${path} is in no known format (its first ${HEAD_BYTES} bytes match none of: ${this.registry.formats.join(', ')})`,
          );
        return 0; // too little yet to tell
      }
      const before = this.baseName();
      this.format = d.format;
      this.writer.setFormat(d.format);
      for (const w of this.retiring) w.writer.setFormat(d.format);
      // A file that was empty when following began turned out to be a TensorBoard event file: named by its folder.
      if (this.restarts === 0 && this.baseName() !== before && (await this.writer.rename(this.baseName())))
        this.opts.onRunChange?.(this.runId);
    }
    let t = this.tails.get(path);
    // Truncated (shrank), rotated (another inode), or rewritten in place and already past where we were (its
    // first bytes changed): all read again from the start.
    const rewritten =
      t !== undefined &&
      st.ino === t.ino &&
      st.size >= t.pos &&
      st.size !== t.pos &&
      t.head.length > 0 &&
      !(await this.startsWith(path, t.head));
    if (t && (st.ino !== t.ino || st.size < t.pos || rewritten) && !this.isDir && this.opts.format === undefined) {
      // Another file in its place: one in another format is not this run's continuation.
      const head = await readHead(path);
      const d = this.registry.detect(head);
      if (head.length === 0) return 0; // nothing in it yet to tell: look again next tick
      // Only a positive detection counts: the rest of a log emptied by copytruncate need not show its format.
      if (d !== null && d.format !== this.format) {
        this.endReason = `${path} was replaced by a file in another format (${d.format}; it was ${this.format}): following stopped, the ${this.writer.stored} step(s) read from the first file are kept; follow the new file to read it as a run of its own`;
        this.opts.onNotice?.(this.endReason);
        return 0;
      }
    }
    if (t && (st.ino !== t.ino || st.size < t.pos || rewritten)) {
      this.opts.onNotice?.(
        `${path} was ${st.ino !== t.ino ? 'replaced (rotated)' : rewritten ? 'rewritten' : 'truncated'}; reading it again from the start (steps already stored are not repeated)`,
      );
      this.closeTail(t);
      await this.settle();
      t = undefined;
    }
    if (!t) {
      t = this.newTail(path, st.ino);
      this.tails.set(path, t);
    }
    if (st.size <= t.pos) return 0;
    const fh = await open(path, 'r');
    let read = 0;
    try {
      const buf = new Uint8Array(Math.min(CHUNK_BYTES, st.size - t.pos));
      while (t.pos < st.size) {
        const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, st.size - t.pos), t.pos);
        if (bytesRead === 0) break;
        const chunk = buf.subarray(0, bytesRead);
        if (t.head.length < HEAD_CHECK && t.pos < HEAD_CHECK) {
          const more = chunk.subarray(0, HEAD_CHECK - t.pos);
          const h = new Uint8Array(t.head.length + more.length);
          h.set(t.head);
          h.set(more, t.head.length);
          t.head = h;
        }
        t.hash.update(chunk);
        t.pos += bytesRead;
        read += bytesRead;
        this.bytes += bytesRead;
        if (t.splitter) t.splitter.push(chunk);
        else (t.parser as ByteParser).push(chunk.slice());
        await this.settle();
      }
    } finally {
      await fh.close();
    }
    return read;
  }

  private async startsWith(path: string, head: Uint8Array): Promise<boolean> {
    const now = await readHead(path, head.length);
    return now.length === head.length && now.every((b, i) => b === head[i]);
  }

  /** Sync step sink: route, recognise replays and restarts, hand the step to the current writer. */
  private onStep(s: SourceStep): void {
    this.tally.steps++;
    if (this.sourceRun === null) this.sourceRun = s.run;
    if (s.run !== this.sourceRun) {
      this.skipped[SKIP_OTHER_RUN] = (this.skipped[SKIP_OTHER_RUN] ?? 0) + 1;
      return;
    }
    // A continued run: the file is read again from its start, and what the earlier follower stored is a replay.
    if (this.continuedThrough !== null) {
      if (s.step <= this.continuedThrough) {
        this.skipped[SKIP_REPLAYED] = (this.skipped[SKIP_REPLAYED] ?? 0) + 1;
        return;
      }
      this.continuedThrough = null;
    }
    const fp = fingerprint(s);
    if (s.step <= this.writer.highWater && Number.isSafeInteger(s.step)) {
      if (this.fingerprints.get(s.step) === fp) {
        this.skipped[SKIP_REPLAYED] = (this.skipped[SKIP_REPLAYED] ?? 0) + 1;
        return;
      }
      // The newest step again with other values: not a restart; the writer drops and counts it.
      if (s.step === this.writer.highWater) {
        this.writer.add(s);
        return;
      }
      // A restarted process: its steps go to a new linked run.
      const prevId = this.writer.runId;
      const from = this.writer.highWater;
      this.restarts++;
      this.retiring.push({
        writer: this.writer,
        notes: [
          `the source restarted at step ${s.step} after step ${from}; later steps are in the run "${this.baseName()} (restart ${this.restarts + 1})"`,
        ],
      });
      this.writer = this.newWriter([
        `restart ${this.restarts + 1}: the source process started again at step ${s.step}${prevId ? ` after run ${prevId} reached step ${from}` : ''}`,
      ]);
      this.fingerprints = new Fingerprints();
      this.opts.onNotice?.(
        `the source restarted at step ${s.step} (after step ${from}); continuing in a new run "(restart ${this.restarts + 1})"`,
      );
    }
    if (this.writer.add(s)) this.fingerprints.add(s.step, fp);
  }

  /** Store what the parsers produced: finish runs a restart ended, then flush the current one. */
  private async settle(): Promise<void> {
    while (this.retiring.length > 0) {
      const r = this.retiring.shift()!;
      await r.writer.finish({ meta: this.meta, sha256: [], bytes: this.bytes, parserSkipped: {}, notes: r.notes });
      if (r.writer.runId) this.opts.onRunChange?.(r.writer.runId);
    }
    const had = this.writer.runId;
    const meta = this.currentMeta();
    if (await this.writer.revealConfig(meta)) this.opts.onRunChange?.(this.writer.runId!);
    await this.writer.flush(meta);
    if (!had && this.writer.runId) {
      const prev = this.runs[this.runs.length - 1];
      this.runs.push(this.writer.runId);
      this.opts.onRunChange?.(this.writer.runId);
      if (prev !== undefined) this.opts.onRestart?.(this.writer.runId, prev);
    }
  }

  private currentMeta(): SourceMeta | null {
    let m = this.meta;
    for (const t of this.tails.values())
      m =
        m === null
          ? { ...t.parser.meta, notes: [...t.parser.meta.notes] }
          : {
              ...m,
              config: m.config ?? t.parser.meta.config,
              framework: m.framework === 'unknown' ? t.parser.meta.framework : m.framework,
            };
    return m;
  }

  private async failWith(message: string): Promise<void> {
    if (this.status !== 'running') return;
    this.status = 'failed';
    this.teardown();
    this.opts.onNotice?.(`following stopped: ${message}`);
    await this.writer.fail(message, this.currentMeta());
    this.opts.onRunChange?.(this.runId);
    this.resolveDone(this.info());
  }

  private teardown(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.watcher?.close();
    this.watcher = null;
  }

  /** Stop following: read what is left, flush the last step, mark the run completed (following false). */
  stop(): Promise<FollowInfo> {
    if (this.stopping) return this.stopping;
    if (this.status !== 'running') return Promise.resolve(this.info());
    this.stopping = (async () => {
      this.teardown();
      while (this.ticking) await this.ticking;
      if (this.status !== 'running') return this.info();
      try {
        const reason = this.endReason;
        if (reason === null) {
          if (this.isDir) for (const f of await this.eventFiles()) await this.readTail(f);
          else await this.readTail(this.path);
        }
        const sha: string[] = [];
        for (const t of this.tails.values()) {
          this.closeTail(t);
          sha.push(t.hash.digest('hex'));
        }
        await this.settle();
        const skipped = { ...this.parserSkipped };
        addCounts(skipped, this.skipped);
        // The copy kept with the run is the source as it is now (a truncated log's earlier part is not in it).
        // Nothing ever arrived (the file stayed empty, or its format never showed): the run says so, stopped.
        const empty = this.writer.stored === 0 && this.runs.length === 1;
        const ended =
          reason !== null
            ? { status: 'stopped' as const, error: reason }
            : empty
              ? {
                  status: 'stopped' as const,
                  error: `no step was read from ${this.path} while it was followed${this.format === null ? ' (its format never showed)' : ''}`,
                }
              : null;
        await this.writer.finish({
          meta: this.meta,
          sha256: sha,
          bytes: this.bytes,
          parserSkipped: skipped,
          // A replaced file is not the source these steps came from: no copy of it.
          copyFrom: reason === null ? [...this.tails.keys()] : [],
          copyRefused:
            this.format === null
              ? null
              : sourceCopyRefusal(this.opts.format !== undefined, this.registry.isBinary(this.format), this.tally),
          ...(ended ?? {}),
        });
        this.status = ended ? 'stopped' : 'completed';
      } catch (e) {
        this.status = 'running';
        await this.failWith(e instanceof Error ? e.message : String(e));
        return this.info();
      }
      const info = this.info();
      this.opts.onRunChange?.(this.runId);
      this.resolveDone(info);
      return info;
    })();
    return this.stopping;
  }
}
