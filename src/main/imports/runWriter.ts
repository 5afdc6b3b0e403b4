/**
 * One imported run being written: source steps in (the source's own keys), metric records out to the store.
 *
 * Shared by the batch importer (importLogs.ts) and live follow (follow.ts). `add` is synchronous because parsers
 * call their step sink from inside `push`; steps are buffered and `flush` (awaited after each chunk the caller
 * feeds) maps them onto the catalog, runs the collapse detector over them and appends them to the store, so
 * memory stays bounded by one chunk's steps whatever the file size.
 *
 * The store is append-only and charts need strictly increasing steps: a step at or below the last one taken is
 * dropped and counted in `skipped` (as 'repeated step' when equal, 'out-of-order step' when lower).
 */
import { copyFile, mkdir, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Alert, ImportSource, RunRecord } from '../../shared/api';
import type { MetricRecord } from '../../shared/metrics';
import { CollapseDetector, type AlertUpdate } from '../../core/stability/detector';
import { sourceRecipeOf } from '../../core/stability/hints';
import type { Framework, LogFormat, SourceMeta, SourceStep } from '../../core/formats/types';
import { metricTail } from '../store/metricTail';
import { METRICS_FILE } from '../store/runFiles';
import type { RunStore } from '../store/runStore';
import { UNKNOWN_BACKEND } from '../store/runStore';
import type { FormatRegistry } from './registry';
import { describeConfig } from './config';

export const SKIP_OUT_OF_ORDER = 'out-of-order step';
export const SKIP_REPEATED = 'repeated step';
export const SKIP_NON_INTEGER = 'non-integer step';
/** Where an imported run keeps a copy of its source log(s), so its bundle carries them (runs/<id>/source/). */
export const SOURCE_DIR = 'source';
/** Sources up to this size (all files of a run together) are copied into the run; larger ones are not. */
export const SOURCE_COPY_LIMIT_BYTES = 64 * 1024 * 1024;

/** A source file's name as a bundle entry: `<index>-<name>` with only portable characters. */
export function sourceEntryName(index: number, path: string): string {
  const name =
    basename(path)
      .replace(/[^A-Za-z0-9._=+-]+/g, '_')
      .slice(0, 120) || 'source';
  return `${index}-${name}`;
}

/**
 * What was read of a source, to judge whether it is a log worth keeping a copy of (a bundle carries the copy, so
 * a copy of an arbitrary file that happened to yield a step would export that file).
 */
export class SourceTally {
  /** Non-blank lines of text sources. */
  lines = 0;
  /** Steps the parsers produced. */
  steps = 0;

  /** Wrap a line sink: counts the non-blank lines it is given. */
  countLines(push: (line: string) => void): (line: string) => void {
    return (line) => {
      if (line.trim() !== '') this.lines++;
      push(line);
    };
  }
}

/** Smallest step-to-line share of a text log whose copy is kept (the real verl console logs: 1 in 16 at worst). */
export const SOURCE_COPY_MIN_STEP_SHARE = 1 / 50;

/**
 * Why no copy of the source is kept with the run, or null when it is a log: its format was detected from the
 * content (not forced), and for a text source at least 2 steps came out and at least 1 in 50 of its lines were
 * steps, so a file of other lines with a step-like line in it is never copied whole.
 */
export function sourceCopyRefusal(forced: boolean, binary: boolean, tally: SourceTally): string | null {
  if (forced)
    return 'its format was forced, not detected from the content: no copy of the source is kept with the run (its bundle does not carry it)';
  if (binary) return null;
  if (tally.steps < 2 || tally.steps < tally.lines * SOURCE_COPY_MIN_STEP_SHARE) {
    return `only ${tally.steps} of its ${tally.lines} lines are metric steps: it is kept as a run, but no copy of the file is kept with it (its bundle does not carry it)`;
  }
  return null;
}

export interface RunWriterOptions {
  readonly registry: FormatRegistry;
  /** The source's format; 'detecting' while live follow waits for enough of a new file to tell. */
  readonly format: LogFormat | 'detecting';
  readonly name: string;
  readonly tags: readonly string[];
  readonly paths: readonly string[];
  /** Live follow: the record says following, and alerts are stored (and reported) as they are raised. */
  readonly following: boolean;
  /** Extra notes for the record (e.g. "restart 2 of run …"). */
  readonly notes?: readonly string[];
  /** New metric records, after they are stored (follow publishes them as run.metrics). */
  readonly onRecords?: (runId: string, records: readonly MetricRecord[]) => void;
  /** Alerts raised or extended, after they are stored (follow publishes them as run.alert). */
  readonly onAlert?: (runId: string, alert: Alert, kind: 'raised' | 'updated') => void;
}

export class RunWriter {
  private run: RunRecord | null = null;
  private buffer: SourceStep[] = [];
  private detector: CollapseDetector | null = null;
  private framework: Framework | null = null;
  private readonly keyMap: Record<string, string> = {};
  /** Key maps already merged into keyMap: the mapper hands out one object per key set, so most steps skip it. */
  private seenKeyMaps = new WeakSet<object>();
  /** Steps dropped or merged here, by reason (the parser's own skips are added at finish). */
  readonly skipped: Record<string, number> = {};
  /** The highest step taken (buffered or stored): later steps must exceed it. */
  highWater = -Infinity;
  firstStep: number | null = null;
  /** Metric records stored. */
  stored = 0;
  private creating: Promise<RunRecord> | null = null;
  private format: LogFormat | 'detecting';
  private name: string;

  constructor(
    private readonly store: RunStore,
    private readonly opts: RunWriterOptions,
  ) {
    this.format = opts.format;
    this.name = opts.name;
  }

  /** Follow: the format became known once the file held enough to detect it. */
  setFormat(format: LogFormat): void {
    this.format = format;
  }

  /** The run's name, once the source shows a better one (follow: a TensorBoard file's folder). True when the record changed. */
  async rename(name: string): Promise<boolean> {
    this.name = name;
    if (!this.run || this.run.name === name) return false;
    this.run = await this.store.updateRun(this.run.id, { name });
    return true;
  }

  get runId(): string | null {
    return this.run?.id ?? null;
  }

  private bump(reason: string): void {
    this.skipped[reason] = (this.skipped[reason] ?? 0) + 1;
  }

  /** Take one source step (synchronous: called from a parser's sink). Returns whether it was kept. */
  add(s: SourceStep): boolean {
    if (!Number.isSafeInteger(s.step)) {
      this.bump(SKIP_NON_INTEGER);
      return false;
    }
    // Parsers already merge the records of one step; what is left at or below the mark is dropped, never merged
    // into a stored record (the store is append-only, and merging only what is still buffered would make the
    // outcome depend on chunk boundaries).
    if (s.step <= this.highWater) {
      this.bump(s.step === this.highWater ? SKIP_REPEATED : SKIP_OUT_OF_ORDER);
      return false;
    }
    this.highWater = s.step;
    if (this.firstStep === null) this.firstStep = s.step;
    this.buffer.push(s);
    return true;
  }

  /** Create the run record now (follow: before any step arrives, so the UI has a run to show). */
  async ensureRun(meta: SourceMeta | null): Promise<RunRecord> {
    if (this.run) return this.run;
    this.creating ??= (async () => {
      const cfg = describeConfig(meta?.config);
      const source: ImportSource = {
        format: this.format,
        framework: meta?.framework ?? 'unknown',
        paths: [...this.opts.paths],
        sha256: [],
        bytes: 0,
        importedAt: new Date().toISOString(),
        keyMap: {},
        skipped: {},
        following: this.opts.following,
        notes: [...(this.opts.notes ?? []), ...(this.opts.following ? [] : ['importing: not complete until this note is gone'])],
      };
      const rec = await this.store.createRun({
        kind: 'imported',
        name: this.name,
        tags: this.opts.tags,
        preset: cfg.preset,
        env: cfg.env,
        seed: cfg.seed,
        config: cfg.config,
        totalSteps: 0,
        backend: { ...UNKNOWN_BACKEND, detail: 'imported from an external training log' },
        // Created queued (another process leaves a queued run without an owner alone), claimed, then running
        // until finish: a crash mid-import leaves a run that any later process marks interrupted (its owner is
        // gone), never one that looks complete.
        status: 'queued',
        source,
      });
      await this.store.claimRun(rec.id);
      const running = await this.store.updateRun(rec.id, { status: 'running', startedAt: rec.createdAt });
      this.run = running;
      return running;
    })();
    return this.creating;
  }

  /** Notes of a run taken over from a killed follower (its own, and that it was continued). */
  private readonly attachNotes: string[] = [];
  /** Alerts a run taken over from a killed follower already held. */
  private priorAlerts: Alert[] = [];

  /**
   * Follow: take over a run a killed follower of the same file left (interrupted, steps stored): it is running and
   * followed again, new steps continue it. Returns the last step it holds (the earlier steps are replays to skip).
   */
  async attach(rec: RunRecord): Promise<number | null> {
    const tail = await metricTail(join(this.store.runDir(rec.id), METRICS_FILE), []);
    const last = tail.last?.step ?? null;
    await this.store.claimRun(rec.id);
    this.priorAlerts = [...rec.alerts];
    this.attachNotes.push(
      ...((rec.source?.notes ?? []) as string[]),
      `following continued${last !== null ? ` after step ${last}` : ''} when the log was followed again (the earlier follower had stopped)`,
    );
    this.run = await this.store.updateRun(rec.id, (cur) => ({
      status: 'running',
      error: null,
      finishedAt: null,
      source: { ...(cur.source as ImportSource), following: true, notes: [...this.attachNotes] },
    }));
    this.creating = Promise.resolve(this.run);
    if (last !== null) this.highWater = last;
    this.stored = tail.records;
    return last;
  }

  /**
   * A followed log's config, onto its run as soon as the log has printed it (verl prints it before its first
   * step), not only when following ends. True when the record changed.
   */
  async revealConfig(meta: SourceMeta | null): Promise<boolean> {
    if (!this.opts.following || this.configRevealed || !this.run || !meta?.config || Object.keys(meta.config).length === 0) return false;
    this.configRevealed = true;
    const cfg = describeConfig(meta.config);
    this.run = await this.store.updateRun(this.run.id, { config: cfg.config, preset: cfg.preset, env: cfg.env, seed: cfg.seed });
    return true;
  }

  private configRevealed = false;

  /** Map, detect and store what is buffered. `meta` is the parser's meta (framework, config) so far. */
  async flush(meta: SourceMeta | null): Promise<void> {
    if (this.buffer.length === 0) return;
    const steps = this.buffer;
    this.buffer = [];
    const run = await this.ensureRun(meta);
    if (this.framework === null || this.framework === 'unknown') {
      const fromMeta = meta?.framework && meta.framework !== 'unknown' ? meta.framework : null;
      this.framework = fromMeta ?? this.opts.registry.guessFramework(Object.keys(steps[0].values));
    }
    // Hints in the source framework's terms (verl's / TRL's setting names), from the config the log echoed.
    this.detector ??= new CollapseDetector(run.id, undefined, sourceRecipeOf(run.config, this.framework));
    const records: MetricRecord[] = [];
    // Each alert's latest update of the chunk; its text is built only for that one (AlertUpdate.alert).
    const changed = new Map<string, { update: AlertUpdate; kind: 'raised' | 'updated' }>();
    for (const s of steps) {
      const m = this.opts.registry.map(s.values, this.framework);
      if (!this.seenKeyMaps.has(m.keyMap)) {
        this.seenKeyMaps.add(m.keyMap);
        for (const [k, src] of Object.entries(m.keyMap)) if (!(k in this.keyMap)) this.keyMap[k] = src;
      }
      const rec: MetricRecord = { step: s.step, values: m.values };
      records.push(rec);
      for (const u of this.detector.feed(rec)) {
        const prev = changed.get(u.id);
        changed.set(u.id, { update: u, kind: prev?.kind === 'raised' ? 'raised' : u.kind });
      }
    }
    await this.store.appendMetrics(run.id, records, { detected: true });
    this.stored += records.length;
    this.opts.onRecords?.(run.id, records);
    if (this.opts.following && changed.size > 0) {
      const rec = await this.store.upsertAlerts(
        run.id,
        [...changed.values()].map((c) => c.update.alert),
      );
      const storedById = new Map(rec.alerts.map((a) => [a.id, a]));
      for (const c of changed.values()) this.opts.onAlert?.(run.id, storedById.get(c.update.id) ?? c.update.alert, c.kind);
    } else {
      for (const c of changed.values()) this.opts.onAlert?.(run.id, c.update.alert, c.kind);
    }
  }

  /**
   * Write the final record: completed, the source's hashes and sizes, what was skipped, the config the log
   * revealed, the detector's alerts. Returns the record, or null when no step ever arrived (no run was made).
   */
  async finish(f: {
    meta: SourceMeta | null;
    sha256: readonly string[];
    bytes: number;
    parserSkipped: Readonly<Record<string, number>>;
    notes?: readonly string[];
    status?: 'completed' | 'stopped';
    /** Why the run ended without what it was for (e.g. a follow that never read a step). */
    error?: string;
    /** The files read (same order as the recorded paths), copied into the run when small enough. */
    copyFrom?: readonly string[];
    /** Why no copy is kept although copyFrom names the files (sourceCopyRefusal). */
    copyRefused?: string | null;
  }): Promise<RunRecord | null> {
    await this.flush(f.meta);
    if (!this.run) return null;
    const id = this.run.id;
    const copied = f.copyFrom && !f.copyRefused ? await this.copySources(id, f.copyFrom) : null;
    const skipped: Record<string, number> = { ...f.parserSkipped };
    for (const [k, n] of Object.entries(this.skipped)) skipped[k] = (skipped[k] ?? 0) + n;
    const cfg = describeConfig(f.meta?.config);
    const notes = [...(this.opts.notes ?? []), ...this.attachNotes, ...(f.meta?.notes ?? []), ...(f.notes ?? [])];
    if (copied === false)
      notes.push(
        `the source is over ${SOURCE_COPY_LIMIT_BYTES / 1024 / 1024} MB: no copy is kept with the run, so its bundle does not carry it`,
      );
    if (copied === 'gone')
      notes.push('the source file was gone when the run ended: no copy is kept with the run, so its bundle does not carry it');
    if (f.copyFrom && f.copyRefused) notes.push(f.copyRefused);
    const dropped = (this.skipped[SKIP_OUT_OF_ORDER] ?? 0) + (this.skipped[SKIP_REPEATED] ?? 0);
    if (dropped > 0) notes.push(`${dropped} step(s) at or below an earlier step were dropped (the store keeps steps strictly increasing)`);
    const alerts = this.detector?.alerts() ?? [];
    await this.store.flush(id);
    const rec = await this.store.updateRun(id, (cur) => {
      const acked = new Set(cur.alerts.filter((a) => a.acknowledged).map((a) => a.id));
      return {
        status: f.status ?? 'completed',
        ...(f.error ? { error: f.error } : {}),
        finishedAt: new Date().toISOString(),
        step: Number.isFinite(this.highWater) ? this.highWater : 0,
        totalSteps: Number.isFinite(this.highWater) ? this.highWater : 0,
        etaSeconds: null,
        preset: cfg.preset,
        env: cfg.env,
        seed: cfg.seed,
        config: cfg.config,
        // A continued run keeps what the earlier follower's detector raised (this detector saw only the new steps).
        alerts: [
          ...this.priorAlerts.filter((p) => !alerts.some((a) => a.id === p.id)),
          ...alerts.map((a) => ({ ...a, acknowledged: acked.has(a.id) })),
        ],
        source: {
          ...(cur.source as ImportSource),
          format: this.format,
          framework: this.framework ?? f.meta?.framework ?? 'unknown',
          sha256: [...f.sha256],
          bytes: f.bytes,
          keyMap: { ...this.keyMap },
          skipped,
          following: false,
          notes,
        },
      };
    });
    await this.store.releaseRun(id);
    return rec;
  }

  /**
   * Copy the source files into runs/<id>/source/ (true), or not when over the limit (false) or when a file is
   * gone (a followed log deleted before following stopped: 'gone'; its steps are stored all the same).
   */
  private async copySources(id: string, from: readonly string[]): Promise<boolean | 'gone'> {
    const isGone = (e: unknown) => ['ENOENT', 'EACCES', 'EPERM'].includes((e as NodeJS.ErrnoException).code ?? '');
    let total = 0;
    try {
      for (const p of from) total += (await stat(p)).size;
    } catch (e) {
      if (isGone(e)) return 'gone';
      throw e;
    }
    if (total > SOURCE_COPY_LIMIT_BYTES) return false;
    const dir = join(this.store.runDir(id), SOURCE_DIR);
    await mkdir(dir, { recursive: true });
    // Named by what the record shows (an upload's own file name), or by the file itself when a folder was followed.
    const names = from.length === this.opts.paths.length ? this.opts.paths : from;
    try {
      for (const [i, p] of from.entries()) await copyFile(p, join(dir, sourceEntryName(i, names[i])));
    } catch (e) {
      if (!isGone(e)) throw e;
      await rm(dir, { recursive: true, force: true });
      return 'gone';
    }
    return true;
  }

  /** Follow failed (unreadable source, no known format): the run stays, marked failed with the reason. */
  async fail(error: string, meta: SourceMeta | null): Promise<void> {
    if (this.creating) await this.creating.catch(() => undefined);
    if (!this.run) return;
    const id = this.run.id;
    await this.store.flush(id).catch(() => undefined);
    await this.store.updateRun(id, (cur) => ({
      status: 'failed',
      error,
      finishedAt: new Date().toISOString(),
      etaSeconds: null,
      alerts: this.detector ? this.detector.alerts() : cur.alerts,
      source: {
        ...(cur.source as ImportSource),
        format: this.format,
        framework: this.framework ?? meta?.framework ?? 'unknown',
        keyMap: { ...this.keyMap },
        following: false,
      },
    }));
    await this.store.releaseRun(id);
  }

  /** A failed import: remove the half-written run so nothing looks imported. */
  async abort(): Promise<void> {
    if (this.creating) await this.creating.catch(() => undefined);
    if (!this.run) return;
    await this.store.deleteRun(this.run.id).catch(() => undefined);
    this.run = null;
  }
}
