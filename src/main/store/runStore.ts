/**
 * The run database: `RunStore.open(dataDir)`.
 *
 * Layout under the data directory:
 *   runs.json                      lowdb catalog (index of every RunRecord; rebuilt from run dirs if lost)
 *   runs/<id>/run.json             the run's own record (authoritative; written before the catalog)
 *   runs/<id>/metrics.jsonl        one MetricRecord per line, append-only (non-finite values encoded)
 *   runs/<id>/trajectories.jsonl   one Trajectory per line, append-only
 *   runs/<id>/checkpoints/step-N/  checkpoint files + meta.json (the newest KEEP_CHECKPOINTS kept)
 *
 * Crash safety: records and the catalog are replaced atomically (temp + fsync + rename); streams are append-only
 * and a torn last line is ignored on read and cut off before the next append. A corrupt catalog or run.json is
 * moved aside intact (`<name>.corrupt-<timestamp>`), reported in `warnings`, and the store opens with what the
 * run directories still hold. Single writer per run: the process that trains a run appends its streams.
 *
 * Several processes (the app, CLI commands) may open one data directory at once. Every record or catalog
 * change is made holding the data directory's lock file (runs.json.lock, see fileLock.ts): under it the catalog
 * is re-read if another process changed it, the record is re-read from its run.json, the change is applied to
 * that, and both are written; so no process's update overwrites another's with an older copy. Lists re-read the
 * catalog whenever its file changed.
 */
import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import {
  RunRecord as RunRecordSchema,
  type Alert,
  type ApiInput,
  type ComputeBackendInfo,
  type ImportSource,
  type RunKind,
  type RunRecord,
  type RunStatus,
  type RunSummary,
  type Series,
  type Trajectory,
} from '../../shared/api';
import type { MetricRecord } from '../../shared/metrics';
import { reportableNonFinite } from '../../core/stability/nonFinite';
import { appCommit, appVersion } from '../platform/appInfo';
import { pidAlive, processStartTicks, WRITER_TAG, writerState, writerTag } from '../platform/process';
import { cleanStaleTemps, writeFileAtomic } from './atomic';
import { CATALOG_SCHEMA_VERSION, CatalogCorruptError, createCatalog, type CatalogData } from './catalog';
import { withFileLock, type LockOptions } from './fileLock';
import { isDiskFull } from './storageErrors';
import { storeFaults } from './faults';
import { detectedThroughOf } from '../../shared/detection';
import { importedSeed } from '../../shared/importedSeed';
import { configValues, type ConfigValue } from '../../shared/configValues';
import { decodeMetricRecord, indexJsonl, readJsonl, readLines, type LineRef } from './jsonl';
import { lttbIndices } from './lttb';
import { CHECKPOINTS_DIR, METRICS_FILE, RUN_FILE, RunFiles, TRAJECTORIES_FILE, type StoredCheckpoint } from './runFiles';
import { foldSummary, successOf } from './summary';
import type { Low } from 'lowdb';

export type RunQuery = NonNullable<ApiInput<'runs.list'>>;
export type XAxisName = 'step' | 'wall' | 'tokens';

export interface CreateRunInput {
  /** Optional explicit id (imports, tests); otherwise generated from time, env and preset. */
  readonly id?: string;
  /** Without one, the run is named `<nameLead> · seed <seed> · <short id>` (unique; see defaultRunName). */
  readonly name?: string;
  /** What a default name starts with; default `<preset> · <env>` (synthetic runs say their shape). */
  readonly nameLead?: string;
  readonly tags?: readonly string[];
  readonly preset: string;
  readonly env: string;
  readonly seed: number;
  /** The resolved, validated run config (engine schema), stored frozen. */
  readonly config: Record<string, unknown>;
  readonly totalSteps: number;
  readonly backend?: ComputeBackendInfo;
  readonly status?: RunStatus;
  readonly appVersion?: string;
  readonly appCommit?: string;
  /** 'imported' for runs made from an external training log (src/main/imports); default 'lab'. */
  readonly kind?: RunKind;
  /** Imported runs: the source log and what the importer made of it. */
  readonly source?: ImportSource;
}

export type RunPatch = Partial<Omit<RunRecord, 'id' | 'createdAt' | 'alertCount' | 'worstSeverity'>>;

export interface NoteOptions {
  /** The writer fed these records to the collapse detector (RunRecord.detectedThrough follows their last step). */
  readonly detected?: boolean;
}

export interface SeriesOptions {
  readonly xAxis?: XAxisName;
  /** Any logged key as x (its value at each step); wins over xAxis. */
  readonly xKey?: string;
  /** Downsample to at most this many points (LTTB; non-finite markers kept). Default: no downsampling. */
  readonly maxPoints?: number;
}

const X_KEY: Record<XAxisName, string | null> = { step: null, wall: 'perf/wall_s', tokens: 'perf/total_tokens' };
const SEVERITY_RANK = { info: 0, warning: 1, critical: 2 } as const;
/** Minimum seconds between run-record writes caused by metric appends alone (status changes write at once). */
const RECORD_WRITE_INTERVAL_MS = 2000;
const OWNER_FILE = '.owner';
/** Written by `arlarena stop` for a run another process trains; that process's session manager picks it up. */
const STOP_REQUEST_FILE = '.stop-request';

export const UNKNOWN_BACKEND: ComputeBackendInfo = { training: 'unknown', rollout: 'unknown', detail: 'not recorded', available: [] };

/** Record fields folded from metric records by this process and not yet written to run.json. */
type MetricFold = Pick<RunRecord, 'summary' | 'step' | 'wallSeconds' | 'etaSeconds' | 'detectedThrough'>;

export interface OpenOptions {
  /** Cross-process lock timing (tests shorten it). */
  readonly lock?: LockOptions;
}

interface MetricCache {
  offset: number;
  rows: MetricRecord[];
  /** The keys of rows[0, keysUpTo): collected only when asked for (metricKeys), not on every read. */
  keys: Set<string>;
  keysUpTo: number;
}

/** A deleted run's folder while it is being removed (renamed out of the runs first). */
const TRASH_PREFIX = '.deleted-';
/**
 * A run built beside the runs before it joins them (a bundle import): `.import-<writer>-<random>`, writer being
 * writerTag (its process's pid, start in ticks since boot and host), as every temp is named since 2026-12-05.
 */
const STAGE_PREFIX = '.import-';
const STAGE_NAME = new RegExp(`^\\.import-${WRITER_TAG}-[0-9a-f]+$`);
/**
 * A stage whose writer cannot be judged here — another host's (a data dir shared over the network or bind-mounted
 * into two containers, each with its own pids), or one named before stages named their process — is removed once
 * unchanged this long: no import takes an hour, and its folder changes with every file it writes.
 */
const STAGE_BY_AGE_MS = 3_600_000;

/**
 * What a killed process left beside the runs (an open's sweep): a deleted run's folder whose removal a kill cut
 * short, and a bundle import's stage whose process is gone. Both held a whole run's files, checkpoints included,
 * and stayed for good. A stage named by its writer (STAGE_NAME) is judged by it exactly, whatever its age and the
 * wall clock (writerState), another host's by its age. Names older versions wrote keep their rule:
 * `.import-<pid>-<start>-<random>` and `.import-<pid>-<random>` by this host's pids — a process holding the pid that
 * did not start at the start, or started after the folder's last change, is not its importer (pids are handed out
 * again after a session's end) — and `.import-<random>` by its age.
 */
async function sweepAside(dir: string): Promise<void> {
  const name = basename(dir);
  let gone = name.startsWith(TRASH_PREFIX);
  if (!gone && name.startsWith(STAGE_PREFIX)) {
    const changed = await stat(dir).then(
      (st) => st.mtimeMs,
      () => null,
    );
    const tagged = STAGE_NAME.exec(name);
    // older versions' names: the start in the name is exact; the last change is not after a step of the wall clock (pidAlive)
    const pid = /^\.import-(\d+)-(?:(\d+)-)?[0-9a-f]+$/.exec(name);
    const state = tagged && changed !== null ? writerState(tagged[1]!, tagged[2], tagged[3]!, changed) : null;
    if (changed !== null)
      gone =
        state !== null
          ? state === 'gone' || (state === 'elsewhere' && Date.now() - changed > STAGE_BY_AGE_MS)
          : pid
            ? !pidAlive(Number(pid[1]), changed, pid[2] !== undefined ? Number(pid[2]) : null)
            : /^\.import-[0-9a-f]+$/.test(name) && Date.now() - changed > STAGE_BY_AGE_MS;
  }
  if (gone) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
}

function stamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '-');
}

function newRunId(env: string, preset: string): string {
  const t = new Date()
    .toISOString()
    .slice(0, 19)
    .replace(/[-:T]/g, '')
    .replace(/^(\d{8})/, '$1-');
  const base = `${t}-${env}-${preset}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 52);
  return `${base}-${randomBytes(3).toString('hex')}`;
}

/**
 * A new run's default name: what it is, its seed and the last 6 characters of its id (the random part of a
 * generated id), so runs of one preset and env tell apart in tables and legends (three
 * "synthetic calm (300 steps)" made Compare key two rows alike). The whole id when that name is taken.
 * Stored runs keep their names.
 */
export function defaultRunName(lead: string, seed: number, id: string, taken: (name: string) => boolean): string {
  const short = `${lead} · seed ${seed} · ${id.slice(-6)}`;
  return taken(short) ? `${lead} · seed ${seed} · ${id}` : short;
}

/** `current` with `found` replacing or adding alerts by id, sorted by first step; acknowledgements are kept. */
function mergeAlerts(current: readonly Alert[], found: readonly Alert[]): Alert[] {
  const byId = new Map(current.map((a) => [a.id, a]));
  for (const a of found) byId.set(a.id, { ...a, acknowledged: a.acknowledged || (byId.get(a.id)?.acknowledged ?? false) });
  return [...byId.values()].sort((a, b) => a.firstStep - b.firstStep);
}

export function toSummary(r: RunRecord): RunSummary {
  return {
    id: r.id,
    kind: r.kind ?? 'lab',
    name: r.name,
    tags: r.tags,
    env: r.env,
    preset: r.preset,
    seed: r.seed,
    status: r.status,
    step: r.step,
    totalSteps: r.totalSteps,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    summary: r.summary,
    alertCount: r.alertCount,
    worstSeverity: r.worstSeverity,
    etaSeconds: r.etaSeconds,
    valTemperature: valTemperatureOf(r.config),
    detectedThrough: detectedThroughOf(r),
    seedKnown: r.kind !== 'imported' || importedSeed(r.config) !== null,
    ...(r.notes ? { notes: r.notes } : {}),
    configValues: configValuesOf(r.config),
  };
}

/**
 * Config values by path, computed once per config object: a record keeps its config object until the config
 * changes, so the store watch's listRuns every 1.5 s does not flatten every run's config again.
 */
const configValuesCache = new WeakMap<object, Record<string, ConfigValue>>();
function configValuesOf(config: Record<string, unknown>): Record<string, ConfigValue> {
  let v = configValuesCache.get(config);
  if (!v) configValuesCache.set(config, (v = configValues(config)));
  return v;
}

/** training.valTemperature of a lab run's frozen config, or null when the config has none. */
function valTemperatureOf(config: Record<string, unknown>): number | null {
  const t = (config.training as { valTemperature?: unknown } | undefined)?.valTemperature;
  return typeof t === 'number' && Number.isFinite(t) ? t : null;
}

/** A file version's identity for cheap change checks: atomic writes replace the inode (see refreshCatalog for its limit). */
function fileStamp(st: Stats): string {
  return `${st.ino}:${st.size}:${st.mtimeMs}`;
}

function withAlertStats(r: RunRecord): RunRecord {
  let worst: RunRecord['worstSeverity'] = null;
  for (const a of r.alerts) if (worst === null || SEVERITY_RANK[a.severity] > SEVERITY_RANK[worst]) worst = a.severity;
  return { ...r, alertCount: r.alerts.length, worstSeverity: worst };
}

export class RunStore {
  /** Problems met while opening (corrupt files moved aside, runs that could not be recovered). */
  readonly warnings: string[] = [];
  private files = new Map<string, RunFiles>();
  private metricCache = new Map<string, MetricCache>();
  /** Per run, the end of its chain of metric reads (metricRows). */
  private metricReads = new Map<string, Promise<void>>();
  private trajIndex = new Map<string, { offset: number; refs: LineRef[] }>();
  private trajIndexing = new Map<string, Promise<void>>();
  /** Per run: the run.json version last read or written here, and the catalog entry's updatedAt it gave. */
  private synced = new Map<string, { stamp: string; updatedAt: string }>();
  /** The runs.json version this process's catalog matches (null: not read from, or written to, a file yet). */
  private catalogStamp: string | null = null;
  private folds = new Map<string, MetricFold>();
  private lastRecordWrite = new Map<string, number>();
  private chain: Promise<unknown> = Promise.resolve();
  private diskFullNoted = false;

  private constructor(
    readonly dataDir: string,
    private readonly db: Low<CatalogData>,
    private readonly lockOptions: LockOptions,
  ) {}

  get runsDir(): string {
    return join(this.dataDir, 'runs');
  }

  /** A new folder beside the runs to build one in before it joins them (a bundle import); see sweepAside. */
  newStageDir(): string {
    return join(this.runsDir, `${STAGE_PREFIX}${writerTag()}-${randomBytes(6).toString('hex')}`);
  }

  get catalogFile(): string {
    return join(this.dataDir, 'runs.json');
  }

  /** Held by whichever process is changing the catalog or a run record (see fileLock.ts). */
  get lockFile(): string {
    return join(this.dataDir, 'runs.json.lock');
  }

  runDir(id: string): string {
    return join(this.runsDir, id);
  }

  /** Open (creating if needed) the run database in `dataDir`. Never throws for a corrupt catalog: see `warnings`. */
  static async open(dataDir: string, opts: OpenOptions = {}): Promise<RunStore> {
    await mkdir(join(dataDir, 'runs'), { recursive: true });
    const store = new RunStore(dataDir, createCatalog(join(dataDir, 'runs.json')), opts.lock ?? {});
    await cleanStaleTemps(dataDir);
    for (const d of await readdir(join(dataDir, 'runs'), { withFileTypes: true }).catch(() => [])) {
      if (d.isDirectory() && d.name.startsWith('.')) await sweepAside(join(dataDir, 'runs', d.name));
      if (!d.isDirectory() || d.name.startsWith('.')) continue;
      await cleanStaleTemps(join(dataDir, 'runs', d.name));
      await cleanStaleTemps(join(dataDir, 'runs', d.name, CHECKPOINTS_DIR));
    }
    await store.exclusive(async () => {
      if (await store.syncFromDisk({ repair: false, warnOrphans: true })) await store.repairWrite();
    });
    return store;
  }

  /**
   * Bring the catalog file up to date after a read found it behind. Reading needs no write: on a full disk the
   * catalog read is used as it is and a warning says why it was not rewritten.
   */
  private async repairWrite(): Promise<void> {
    try {
      await this.locked(async (dirty) => (dirty ? this.writeCatalog() : undefined));
    } catch (e) {
      if (!isDiskFull(e)) throw e;
      this.noteDiskFull();
    }
  }

  /**
   * True once a write this store needed for reading (the catalog's repair, marking a dead process's run
   * interrupted) met a full disk: records may then say what no process is doing any more (a run left running).
   */
  get diskFull(): boolean {
    return this.diskFullNoted;
  }

  private noteDiskFull(): void {
    this.diskFullNoted = true;
    const w = `the disk holding the data folder ${this.dataDir} is full: runs are shown as they are on disk, and nothing can be changed until space is freed`;
    if (!this.warnings.includes(w)) this.warnings.push(w);
  }

  /** Serialise catalog mutations within this process. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.chain.then(fn);
    this.chain = p.catch(() => undefined);
    return p;
  }

  /**
   * Run `fn` holding the data directory's lock, after bringing this process's catalog up to date with the disk
   * (`dirty`: the catalog file must be rewritten even if `fn` changes nothing). Call inside `exclusive`.
   */
  private locked<T>(fn: (dirty: boolean) => Promise<T>): Promise<T> {
    return withFileLock(this.lockFile, async () => fn(await this.syncFromDisk({ repair: true, warnOrphans: false })), this.lockOptions);
  }

  /** A catalog or record change: in-process queue, then the cross-process lock. */
  private mutate<T>(fn: () => Promise<T>): Promise<T> {
    return this.exclusive(() => this.locked(() => fn()));
  }

  /**
   * Re-read runs.json, then reconcile with the run folders. Under the lock (`repair`) the catalog is always
   * re-read and a corrupt one is moved aside and rebuilt; without the lock it is re-read only if its file
   * changed, and a corrupt one only reports that a (locked) write is due. Returns whether the catalog file
   * should be rewritten.
   */
  private async syncFromDisk(opts: { repair: boolean; warnOrphans: boolean }): Promise<boolean> {
    let dirty = false;
    try {
      if (await this.refreshCatalog(opts.repair)) dirty = true;
    } catch (e) {
      if (!(e instanceof CatalogCorruptError)) throw e;
      if (!opts.repair) return true;
      const aside = `${this.catalogFile}.corrupt-${stamp()}`;
      await rename(this.catalogFile, aside);
      this.warnings.push(
        `The run catalog could not be read (${e.reason}); it was moved aside intact to ${aside} and rebuilt from the run folders.`,
      );
      this.db.data = { schemaVersion: CATALOG_SCHEMA_VERSION, runs: {} };
      this.catalogStamp = null;
      this.synced.clear();
      dirty = true;
    }
    if (await this.reconcile(opts.warnOrphans, opts.repair)) dirty = true;
    return dirty;
  }

  /**
   * Re-read runs.json (`force`), or only if its stamp changed. The stamp can miss a change (an inode reused
   * within one file-system clock tick at the same size), so writers always re-read: a missed change may delay
   * what a list shows, never lose an update.
   */
  private async refreshCatalog(force: boolean): Promise<boolean> {
    let st: Stats;
    try {
      st = await stat(this.catalogFile);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      this.catalogStamp = null;
      return false;
    }
    const version = fileStamp(st);
    if (!force && version === this.catalogStamp) return false;
    await this.db.read();
    const dropped = this.dropBadEntries();
    // Metric folds not yet written to run.json stay in this process's view.
    for (const [id, fold] of this.folds) if (this.db.data.runs[id]) this.db.data.runs[id] = { ...this.db.data.runs[id], ...fold };
    // Stamped before reading: a replacement in between only causes one more re-read, never a missed one.
    this.catalogStamp = version;
    return dropped;
  }

  /**
   * Entry by entry: a catalog entry that is not a run record (valid JSON holding `"RUN": 5`, a record for
   * another id) is dropped from this process's view, so reconcile rebuilds it from the run's run.json. Returns
   * whether any was dropped (the catalog file must then be rewritten).
   */
  private dropBadEntries(): boolean {
    let dropped = false;
    for (const [id, entry] of Object.entries(this.db.data.runs)) {
      const res = RunRecordSchema.safeParse(entry);
      const reason = !res.success
        ? res.error.issues
            .slice(0, 2)
            .map((i) => `${i.path.join('.') || '(entry)'}: ${i.message}`)
            .join('; ')
        : res.data.id !== id
          ? `it holds run ${res.data.id}`
          : null;
      if (reason === null) continue;
      delete this.db.data.runs[id];
      this.synced.delete(id);
      dropped = true;
      const w = `The catalog entry for run ${id} was not a run record (${reason}); it was dropped and the run is listed from runs/${id}/run.json if that exists.`;
      if (!this.warnings.includes(w)) this.warnings.push(w);
    }
    return dropped;
  }

  /** Write the catalog (under the lock) and remember its version, so our own write is not re-read. */
  private async writeCatalog(): Promise<void> {
    await this.db.write();
    this.catalogStamp = await stat(this.catalogFile).then(fileStamp, () => null);
  }

  private withFold(r: RunRecord): RunRecord {
    const f = this.folds.get(r.id);
    return f ? { ...r, ...f } : r;
  }

  private async readRunJson(id: string): Promise<RunRecord | undefined> {
    const p = join(this.runDir(id), RUN_FILE);
    let text: string;
    try {
      text = await readFile(p, 'utf8');
    } catch {
      return undefined;
    }
    let parsed: RunRecord | undefined;
    try {
      const res = RunRecordSchema.safeParse(JSON.parse(text));
      // Records written before imports existed have no kind: they are lab runs.
      if (res.success) parsed = { ...res.data, kind: res.data.kind ?? 'lab' };
      else
        throw new Error(
          res.error.issues
            .map((i) => `${i.path.join('.')}: ${i.message}`)
            .slice(0, 3)
            .join('; '),
        );
    } catch (e) {
      const aside = `${p}.corrupt-${stamp()}`;
      await rename(p, aside).catch(() => undefined);
      this.warnings.push(`Run ${id}: its record run.json was unreadable (${(e as Error).message}); moved aside to ${aside}.`);
      return undefined;
    }
    return parsed;
  }

  /**
   * Bring the catalog in line with the run directories (new/changed run.json files, deleted dirs). `warnOrphans`:
   * report run folders without a run.json (at open; later such a folder is most likely a run being created).
   */
  private async reconcile(warnOrphans: boolean, repair: boolean): Promise<boolean> {
    let changed = false;
    let names: string[];
    try {
      names = (await readdir(this.runsDir, { withFileTypes: true }))
        .filter((d) => d.isDirectory() && !d.name.startsWith('.'))
        .map((d) => d.name);
    } catch {
      names = [];
    }
    const present = new Set(names);
    for (const id of Object.keys(this.db.data.runs)) {
      if (!present.has(id)) {
        delete this.db.data.runs[id];
        this.synced.delete(id);
        this.folds.delete(id);
        changed = true;
      }
    }
    for (const id of names) {
      let version: string;
      try {
        version = fileStamp(await stat(join(this.runDir(id), RUN_FILE)));
      } catch {
        const recovered = await this.recoverRecord(id, repair);
        if (recovered !== 'orphan') {
          if (recovered === 'rebuilt' || recovered === 'needs-lock') changed = true;
          continue;
        }
        if (warnOrphans && !this.db.data.runs[id]) {
          if (!this.warnings.some((w) => w.includes(`Run ${id}:`)))
            this.warnings.push(`Run ${id}: folder has no run.json; it is not listed (its files are kept).`);
        }
        continue;
      }
      const seen = this.synced.get(id);
      if (seen && seen.stamp === version && seen.updatedAt === this.db.data.runs[id]?.updatedAt) continue;
      const rec = await this.readRunJson(id);
      if (!rec) {
        // Unreadable: readRunJson moved it aside; rebuild now (under the lock) or ask for a locked pass.
        const recovered = await this.recoverRecord(id, repair);
        if (recovered === 'rebuilt' || recovered === 'needs-lock') changed = true;
        continue;
      }
      const cur = this.db.data.runs[id];
      // run.json is written before the catalog, so it is never older than the catalog's entry.
      if (!cur || cur.updatedAt <= rec.updatedAt) {
        const next = this.withFold(rec);
        if (!cur || JSON.stringify(cur) !== JSON.stringify(next)) {
          this.db.data.runs[id] = next;
          changed = true;
        }
      }
      this.synced.set(id, { stamp: version, updatedAt: this.db.data.runs[id].updatedAt });
    }
    return changed;
  }

  /**
   * A run folder whose run.json is missing or was moved aside as unreadable (`run.json.corrupt-*`). Under the
   * lock (`repair`) the record is rebuilt: from the catalog entry when there is a valid one, else from the metric
   * stream as a `failed` record tagged `damaged` whose error says what happened — listed, openable, deletable.
   * Without the lock nothing is written ('needs-lock': the caller's locked pass does it). A folder with neither a
   * catalog entry nor a set-aside run.json is an 'orphan' (most likely a run being created right now), kept and
   * named — unless it holds only what createRun makes before the record: that creation was cut short by a kill
   * (createRun holds the lock throughout, so under the lock none is under way), and it is 'removed'.
   */
  private async recoverRecord(id: string, repair: boolean): Promise<'rebuilt' | 'needs-lock' | 'orphan' | 'removed'> {
    const cur = this.db.data.runs[id];
    const names = await readdir(this.runDir(id)).catch(() => [] as string[]);
    const asides = names.filter((n) => n.startsWith(`${RUN_FILE}.corrupt-`)).sort();
    if (!cur && asides.length === 0) {
      if (!(await this.unbornRun(id, names))) return 'orphan';
      if (!repair) return 'needs-lock';
      const trash = join(this.runsDir, `${TRASH_PREFIX}${id}-${stamp()}`);
      try {
        await rename(this.runDir(id), trash);
      } catch {
        return 'orphan'; // read-only or busy: named as before
      }
      await rm(trash, { recursive: true, force: true }).catch(() => undefined);
      return 'removed';
    }
    if (!repair) return 'needs-lock';
    // Re-check under the lock: another process may have rebuilt it meanwhile.
    if (
      await stat(join(this.runDir(id), RUN_FILE)).then(
        () => true,
        () => false,
      )
    )
      return 'orphan';
    const aside = asides.length > 0 ? join(this.runDir(id), asides[asides.length - 1]) : null;
    let rec: RunRecord;
    let how: string;
    if (cur) {
      rec = cur;
      how = 'rebuilt from the catalog';
    } else {
      const metrics = await this.filesOf(id)
        .readMetrics()
        .catch(() => [] as MetricRecord[]);
      let summary: RunRecord['summary'] = {};
      for (const r of metrics) summary = foldSummary(summary, r);
      const last = metrics[metrics.length - 1];
      const wall = last?.values['perf/wall_s'];
      const now = new Date().toISOString();
      rec = withAlertStats({
        id,
        name: `damaged run ${id}`,
        tags: ['damaged'],
        env: 'unknown',
        preset: 'unknown',
        seed: 0,
        status: 'failed',
        step: last?.step ?? 0,
        totalSteps: last?.step ?? 0,
        createdAt: now,
        updatedAt: now,
        summary,
        alertCount: 0,
        worstSeverity: null,
        config: {},
        appVersion: 'unknown',
        appCommit: 'unknown',
        backend: UNKNOWN_BACKEND,
        startedAt: null,
        finishedAt: null,
        error:
          `run.json was unreadable and no catalog entry was left to rebuild it from; it was moved aside${aside ? ` to ${aside}` : ''}. ` +
          `This record was rebuilt from metrics.jsonl (${metrics.length} records): config, seed and alerts are unknown. Delete the run, or put a good run.json back by hand.`,
        alerts: [],
        wallSeconds: wall !== undefined && Number.isFinite(wall) ? wall : 0,
        etaSeconds: null,
      });
      how = `rebuilt from its metric stream (${metrics.length} records) and marked damaged`;
    }
    await this.filesOf(id).writeRecord(rec);
    this.db.data.runs[id] = this.withFold(rec);
    this.synced.set(id, { stamp: fileStamp(await stat(join(this.runDir(id), RUN_FILE))), updatedAt: rec.updatedAt });
    this.warnings.push(`Run ${id}: its record run.json was missing or unreadable; ${how}.`);
    return 'rebuilt';
  }

  /**
   * Whether run folder `id` (its entries `names`) holds only what createRun makes before the run's record is in
   * place — the two stream files, empty (RunFiles.ensureDir), and at most the record's temp file — so nothing was
   * ever trained or imported into it: a kill in createRun (a session's end SIGKILLing the app or a study as it
   * starts a run) left it, and its creator never learnt its id.
   */
  private async unbornRun(id: string, names: readonly string[]): Promise<boolean> {
    const dir = this.runDir(id);
    for (const n of names) {
      if (n === METRICS_FILE || n === TRAJECTORIES_FILE) {
        const st = await stat(join(dir, n)).catch(() => null);
        if (!st?.isFile() || st.size > 0) return false;
      } else if (!(n.startsWith(`.${RUN_FILE}.`) && n.endsWith('.tmp'))) return false;
    }
    return names.length > 0;
  }

  // ------------------------------------------------------------------------------------------------------
  // Records
  // ------------------------------------------------------------------------------------------------------

  async createRun(input: CreateRunInput): Promise<RunRecord> {
    return this.mutate(async () => {
      const id = input.id ?? newRunId(input.env, input.preset);
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) throw new Error(`run id "${id}" is not 1–64 letters, digits, "_" or "-"`);
      const onDisk = await stat(join(this.runDir(id), RUN_FILE)).then(
        () => true,
        () => false,
      );
      if (this.db.data.runs[id] || onDisk) throw new Error(`a run with id "${id}" already exists`);
      const now = new Date().toISOString();
      const rec: RunRecord = withAlertStats({
        id,
        kind: input.kind ?? 'lab',
        name: input.name ?? defaultRunName(input.nameLead ?? `${input.preset} · ${input.env}`, input.seed, id, (n) => this.nameTaken(n)),
        tags: [...(input.tags ?? [])],
        env: input.env,
        preset: input.preset,
        seed: input.seed,
        status: input.status ?? 'queued',
        step: 0,
        totalSteps: input.totalSteps,
        createdAt: now,
        updatedAt: now,
        summary: {},
        alertCount: 0,
        worstSeverity: null,
        config: input.config,
        appVersion: input.appVersion ?? appVersion(),
        appCommit: input.appCommit ?? appCommit(),
        backend: input.backend ?? UNKNOWN_BACKEND,
        startedAt: null,
        finishedAt: null,
        error: null,
        alerts: [],
        detectedThrough: null,
        wallSeconds: 0,
        etaSeconds: null,
        ...(input.source ? { source: input.source } : {}),
      });
      await RunFiles.ensureDir(this.runDir(id));
      await this.persist(rec);
      return rec;
    });
  }

  private nameTaken(name: string): boolean {
    return Object.values(this.db.data.runs).some((r) => r.name === name);
  }

  /** Under the lock: write run.json, then the catalog. */
  private async persist(rec: RunRecord): Promise<void> {
    await this.filesOf(rec.id).writeRecord(rec);
    try {
      this.synced.set(rec.id, { stamp: fileStamp(await stat(join(this.runDir(rec.id), RUN_FILE))), updatedAt: rec.updatedAt });
    } catch {
      // deleted concurrently
    }
    this.db.data.runs[rec.id] = this.withFold(rec);
    this.lastRecordWrite.set(rec.id, Date.now());
    await this.writeCatalog();
  }

  /**
   * Resolve what a user typed (CLI): an exact id, else a unique id prefix, else a unique id ending (the short id
   * the app shows everywhere is the id's last 6 characters, shared/shortId.ts), else a unique exact name.
   * Throws with the candidates when it is ambiguous or matches nothing.
   */
  async findRun(ref: string): Promise<RunRecord> {
    const exact = await this.getRun(ref);
    if (exact) return exact;
    const all = await this.listRuns();
    const byPrefix = all.filter((r) => r.id.startsWith(ref));
    // At least 4 characters: a shorter ending (a digit, "-1") matches runs by accident, not by intent.
    const bySuffix = ref.length >= 4 ? all.filter((r) => r.id.endsWith(ref)) : [];
    const byName = all.filter((r) => r.name === ref);
    const hits = byPrefix.length > 0 ? byPrefix : bySuffix.length > 0 ? bySuffix : byName;
    if (hits.length === 1) {
      const rec = await this.getRun(hits[0].id);
      if (!rec)
        throw new Error(
          `run ${hits[0].id} is listed but its record cannot be read now (another process may be repairing or deleting it); retry, or see \`arlarena runs\``,
        );
      return rec;
    }
    if (hits.length === 0) throw new Error(`no run matches "${ref}" (${all.length} runs in ${this.dataDir}; see \`arlarena runs\`)`);
    throw new Error(
      `"${ref}" matches ${hits.length} runs: ${hits
        .slice(0, 5)
        .map((r) => r.id)
        .join(', ')}${hits.length > 5 ? ', …' : ''}; type more of the id`,
    );
  }

  /** This process's in-memory view of a record (no disk read; may lag another process's writes). */
  cached(id: string): RunRecord | undefined {
    return this.db.data.runs[id];
  }

  async getRun(id: string): Promise<RunRecord | undefined> {
    await this.chain;
    const cur = this.db.data.runs[id];
    // run.json is authoritative (another process may be training this run, or have tagged it).
    try {
      const version = fileStamp(await stat(join(this.runDir(id), RUN_FILE)));
      const seen = this.synced.get(id);
      if (cur && seen?.stamp === version && seen.updatedAt === cur.updatedAt) return cur;
    } catch {
      return undefined;
    }
    const rec = await this.readRunJson(id);
    return rec ? this.withFold(rec) : cur;
  }

  /**
   * The version of what listRuns reads, in two stats: every record change writes run.json and then the catalog
   * (persist), and creating, importing or deleting a run changes the runs folder, so while this is unchanged a
   * listRuns would find nothing new. The store watch compares it instead of listing (which stats every run.json)
   * every tick. What it cannot see — a writer killed between its run.json and its catalog write — a full listRuns
   * finds (the watch makes one every few polls).
   */
  async changeVersion(): Promise<string> {
    const [catalog, runs] = await Promise.all([
      stat(this.catalogFile).then(fileStamp, () => 'none'),
      stat(this.runsDir).then(fileStamp, () => 'none'),
    ]);
    return `${catalog}|${runs}`;
  }

  async listRuns(q: RunQuery = {}): Promise<RunSummary[]> {
    // Other processes' changes: re-read the catalog if its file changed, and any changed run.json. Only when that
    // finds the catalog file out of date (a writer killed between run.json and runs.json) is it rewritten.
    await this.exclusive(async () => {
      if (await this.syncFromDisk({ repair: false, warnOrphans: false })) await this.repairWrite();
    });
    const search = q.search?.trim().toLowerCase();
    let runs = Object.values(this.db.data.runs).filter((r) => {
      if (q.status && !q.status.includes(r.status)) return false;
      if (q.env && r.env !== q.env) return false;
      if (q.preset && r.preset !== q.preset) return false;
      if (q.tag && !r.tags.includes(q.tag)) return false;
      if (q.kind && (r.kind ?? 'lab') !== q.kind) return false;
      if (search) {
        const hay = [r.id, r.name, r.env, r.preset, ...r.tags].join(' ').toLowerCase();
        if (!search.split(/\s+/).every((w) => hay.includes(w))) return false;
      }
      return true;
    });
    const sortBy = q.sortBy ?? 'createdAt';
    const dir = (q.sortDir ?? (sortBy === 'name' ? 'asc' : 'desc')) === 'asc' ? 1 : -1;
    const keyOf = (r: RunRecord): string | number =>
      sortBy === 'name' ? r.name.toLowerCase() : sortBy === 'step' ? r.step : sortBy === 'success' ? successOf(r.summary) : r[sortBy];
    runs = runs.sort((a, b) => {
      const ka = keyOf(a);
      const kb = keyOf(b);
      if (ka < kb) return -dir;
      if (ka > kb) return dir;
      return a.id < b.id ? -1 : 1;
    });
    return runs.map(toSummary);
  }

  /**
   * Merge `patch` into the record (a function gets the current record). Under the lock, the current record is
   * the run's run.json as it is on disk now (another process may have changed it), plus this process's pending
   * metric fold; writes run.json, then the catalog.
   */
  async updateRun(id: string, patch: RunPatch | ((r: RunRecord) => RunPatch)): Promise<RunRecord> {
    return this.mutate(async () => {
      const disk = await this.readRunJson(id);
      const exists =
        disk !== undefined ||
        (await stat(this.runDir(id)).then(
          () => true,
          () => false,
        ));
      const cached = this.db.data.runs[id];
      if (!exists || (!disk && !cached)) throw new Error(`no run with id "${id}"`);
      const fold = this.folds.get(id);
      const cur = this.withFold(disk ?? cached);
      const p = typeof patch === 'function' ? patch(cur) : patch;
      const next = withAlertStats({ ...cur, ...p, id: cur.id, createdAt: cur.createdAt, updatedAt: new Date().toISOString() });
      // The fold is in `next` now; one folded while this write is in flight stays pending.
      if (fold !== undefined && this.folds.get(id) === fold) this.folds.delete(id);
      try {
        await this.persist(next);
      } catch (e) {
        if (fold !== undefined && !this.folds.has(id)) this.folds.set(id, fold);
        throw e;
      }
      return next;
    });
  }

  /**
   * Move runs built in another data directory (an import built aside, src/main/imports) into this one, all or
   * none, under the lock: `refuse` first sees every run the catalog holds now (synced with the disk) and may
   * name runs that already hold the same thing (then nothing moves and those are returned); else each run folder
   * is renamed into runs/ (same file system: the caller builds inside this data directory) and its record enters
   * the catalog. A kill before the rename leaves nothing here; after it, whole runs.
   */
  async adoptRuns(
    built: ReadonlyArray<{ dir: string; record: RunRecord }>,
    refuse?: (runs: readonly RunRecord[]) => string[],
  ): Promise<{ adopted: string[]; heldBy: string[] }> {
    return this.mutate(async () => {
      const heldBy = refuse ? refuse(Object.values(this.db.data.runs)) : [];
      if (heldBy.length > 0) return { adopted: [], heldBy };
      for (const { record } of built) {
        const onDisk = await stat(this.runDir(record.id)).then(
          () => true,
          () => false,
        );
        if (this.db.data.runs[record.id] || onDisk) throw new Error(`a run with id "${record.id}" already exists`);
      }
      for (const { dir, record } of built) {
        await rename(dir, this.runDir(record.id));
        await this.persist(record);
      }
      return { adopted: built.map((b) => b.record.id), heldBy: [] };
    });
  }

  /** Replace or add alerts by id; an alert already acknowledged stays acknowledged. */
  async upsertAlerts(id: string, alerts: readonly Alert[]): Promise<RunRecord> {
    return this.updateRun(id, (r) => ({ alerts: mergeAlerts(r.alerts, alerts) }));
  }

  /**
   * A detector pass over the run's stored metrics (runs.detect with save, `arlarena check --save`): its alerts
   * merged as upsertAlerts does, and the record's detectedThrough moved to `through`, the last step it read (null:
   * the run has no metrics yet, nothing was checked).
   */
  async recordDetection(id: string, alerts: readonly Alert[], through: number | null): Promise<RunRecord> {
    return this.updateRun(id, (r) => ({
      alerts: mergeAlerts(r.alerts, alerts),
      ...(through === null ? {} : { detectedThrough: Math.max(r.detectedThrough ?? -1, through) }),
    }));
  }

  async deleteRun(id: string): Promise<boolean> {
    return this.mutate(async () => {
      const dir = this.runDir(id);
      const exists = await stat(dir).then(
        () => true,
        () => false,
      );
      if (!exists && !this.db.data.runs[id]) return false;
      await this.files
        .get(id)
        ?.close()
        .catch(() => undefined);
      this.files.delete(id);
      this.metricCache.delete(id);
      this.metricReads.delete(id);
      this.trajIndex.delete(id);
      this.trajIndexing.delete(id);
      if (exists) {
        // Rename first: a half-deleted folder must never be mistaken for a run (and a kill before the removal
        // ends leaves it to the next open's sweep).
        const trash = join(this.runsDir, `${TRASH_PREFIX}${id}-${stamp()}`);
        await rename(dir, trash);
        storeFaults().at('delete-trash');
        await rm(trash, { recursive: true, force: true });
      }
      delete this.db.data.runs[id];
      this.synced.delete(id);
      this.folds.delete(id);
      await this.writeCatalog();
      return true;
    });
  }

  /**
   * Mark this process as the owner of an active run (runs/<id>/.owner holds the pid), so another process
   * starting up (the app while a CLI `train` runs) does not mistake the run for an interrupted one.
   */
  async claimRun(id: string, pid = process.pid): Promise<void> {
    // `start`: the process's start in ticks since boot, its identity whatever the wall clock does (pidAlive)
    const start = processStartTicks(pid);
    await writeFileAtomic(
      join(this.runDir(id), OWNER_FILE),
      JSON.stringify({ pid, since: new Date().toISOString(), ...(start !== null ? { start } : {}) }),
    );
  }

  /**
   * Claim the run (claimRun) unless another live process holds it, judged and written under the data dir's lock:
   * checked first and claimed after, two processes resuming one run at once both passed the check and both claimed
   * it (the later claim overwrote the earlier), so both trained it. Returns null once claimed, or the holder's pid.
   * The owner file is read once: the holder's releaseRun removes it without the lock, and a second read that found
   * it gone returned null — "claimed" — with no claim written, so the run trained here with no owner file.
   */
  async claimRunIfFree(id: string): Promise<number | null> {
    return this.mutate(async () => {
      const owner = await this.ownerOf(id);
      if (owner && owner.alive && owner.pid !== process.pid) return owner.pid;
      await this.claimRun(id);
      return null;
    });
  }

  async releaseRun(id: string): Promise<void> {
    await rm(join(this.runDir(id), OWNER_FILE), { force: true });
  }

  /** The process that claimed the run (see claimRun), whether it is still alive, or null when none did. */
  async ownerOf(id: string): Promise<{ pid: number; alive: boolean } | null> {
    let owner: { pid: number; since?: string; start?: number };
    try {
      owner = JSON.parse(await readFile(join(this.runDir(id), OWNER_FILE), 'utf8')) as { pid: number; since?: string; start?: number };
    } catch {
      return null;
    }
    const { pid } = owner;
    if (!Number.isInteger(pid) || pid <= 0) return null;
    // This process's own pid is judged by its start time too: after a session's end killed every process, the
    // next session's pids start low again, so a claim naming this pid may be a dead predecessor's (the CLI then
    // refused to resume it as "running in another process" and never marked it interrupted).
    return { pid, alive: pidAlive(pid, owner.since, owner.start) };
  }

  /**
   * Any process (a CLI command, not only the app at start-up): runs left running or paused by a process that is
   * gone are marked interrupted, as the data directory's lock already treats a dead holder. A run whose owner
   * file names a dead pid, or a running/paused run with no owner file, is dead; a queued run without an owner may
   * be waiting in a live app's queue and is left alone. Returns the runs marked, with the dead pid if known.
   */
  async markDeadOwners(): Promise<Array<{ id: string; pid: number | null }>> {
    await this.listRuns();
    const out: Array<{ id: string; pid: number | null }> = [];
    for (const r of Object.values(this.db.data.runs)) {
      if (r.status !== 'running' && r.status !== 'paused' && r.status !== 'queued') continue;
      const owner = await this.ownerOf(r.id);
      if (owner?.alive) continue;
      if (!owner && r.status === 'queued') continue;
      out.push({ id: r.id, pid: owner?.pid ?? null });
    }
    const marked: typeof out = [];
    for (const { id, pid } of out) {
      const resumable = (await this.checkpointSteps(id).catch(() => [] as number[])).length > 0;
      try {
        await this.updateRun(id, (r) => ({
          status: 'interrupted',
          etaSeconds: null,
          error:
            r.kind === 'imported'
              ? `The process that imported or followed this run${pid ? ` (pid ${pid})` : ''} is gone before it finished: it holds the steps read until then; import the log again for the rest.`
              : resumable
                ? `The process that trained this run${pid ? ` (pid ${pid})` : ''} is gone; \`arlarena resume ${id}\` continues from its last checkpoint.`
                : `The process that trained this run${pid ? ` (pid ${pid})` : ''} is gone before its first checkpoint: there is nothing to resume from; \`arlarena resume ${id}\` trains it again from the start.`,
        }));
      } catch (e) {
        // Reading needs no write: on a full disk the run is shown as it was, and a warning says why.
        if (!isDiskFull(e)) throw e;
        this.noteDiskFull();
        break;
      }
      await this.releaseRun(id).catch(() => undefined);
      marked.push({ id, pid });
    }
    return marked;
  }

  /** Ask the live process that trains `id` to stop it (see takeStopRequest). */
  async requestStop(id: string): Promise<void> {
    await writeFileAtomic(join(this.runDir(id), STOP_REQUEST_FILE), JSON.stringify({ pid: process.pid, at: new Date().toISOString() }));
  }

  /** True (and the request is consumed) when `arlarena stop` asked for this run to stop. */
  async takeStopRequest(id: string): Promise<boolean> {
    try {
      await rm(join(this.runDir(id), STOP_REQUEST_FILE));
      return true;
    } catch {
      return false;
    }
  }

  /** True when another live process owns the run (see claimRun). */
  async ownedElsewhere(id: string): Promise<boolean> {
    let owner: { pid: number; since?: string; start?: number };
    try {
      owner = JSON.parse(await readFile(join(this.runDir(id), OWNER_FILE), 'utf8')) as { pid: number; since?: string; start?: number };
    } catch {
      return false;
    }
    return Number.isInteger(owner.pid) && owner.pid !== process.pid && pidAlive(owner.pid, owner.since, owner.start);
  }

  /**
   * At start-up: runs left running/paused/queued by a process that died are marked interrupted (runs a live
   * process still owns are left alone). Returns the ids marked.
   */
  async markInterrupted(): Promise<string[]> {
    const active = Object.values(this.db.data.runs)
      .filter((r) => r.status === 'running' || r.status === 'paused' || r.status === 'queued')
      .map((r) => r.id);
    const ids: string[] = [];
    for (const id of active) if (!(await this.ownedElsewhere(id))) ids.push(id);
    for (const id of ids) {
      await this.updateRun(id, (r) => ({
        status: 'interrupted',
        etaSeconds: null,
        error:
          r.kind === 'imported'
            ? 'The app or process stopped while this run was being imported or followed; it holds the steps read until then (import the log again for the rest).'
            : 'The app or process stopped while this run was active; resume continues from its last checkpoint.',
      }));
    }
    return ids;
  }

  // ------------------------------------------------------------------------------------------------------
  // Streams
  // ------------------------------------------------------------------------------------------------------

  filesOf(id: string): RunFiles {
    let f = this.files.get(id);
    if (!f) {
      f = new RunFiles(this.runDir(id));
      this.files.set(id, f);
    }
    return f;
  }

  /**
   * Append metric records (this process must be the run's single writer). Folds step, wall time, ETA and summary
   * into the record, written at most every 2 s from here (call `flush` to write now). `detected`: the writer has
   * fed these records to the collapse detector, so the record's detectedThrough follows them.
   */
  async appendMetrics(id: string, records: readonly MetricRecord[], opts: NoteOptions = {}): Promise<void> {
    if (records.length === 0) return;
    await this.filesOf(id).appendMetrics(records);
    await this.noteMetrics(id, records, opts);
  }

  /**
   * Fold metric records another writer already appended (a session worker) into the run record: step, wall
   * time, ETA, summary, and with `detected` the detector's progress. The record is written at most every 2 s
   * from here; `flush` writes it now.
   */
  async noteMetrics(id: string, records: readonly MetricRecord[], opts: NoteOptions = {}): Promise<void> {
    if (records.length === 0) return;
    const cur = this.db.data.runs[id];
    if (!cur) return;
    let summary = cur.summary;
    for (const r of records) summary = foldSummary(summary, r);
    const last = records[records.length - 1];
    const wall = last.values['perf/wall_s'];
    const wallSeconds = wall !== undefined && Number.isFinite(wall) ? wall : cur.wallSeconds;
    const eta = last.step > 0 && wallSeconds > 0 ? (wallSeconds / last.step) * Math.max(0, cur.totalSteps - last.step) : null;
    const fold: MetricFold = { summary, step: Math.max(cur.step, last.step), wallSeconds, etaSeconds: eta };
    if (opts.detected) fold.detectedThrough = Math.max(cur.detectedThrough ?? -1, last.step);
    this.folds.set(id, fold);
    this.db.data.runs[id] = { ...cur, ...fold };
    if (Date.now() - (this.lastRecordWrite.get(id) ?? 0) >= RECORD_WRITE_INTERVAL_MS) await this.updateRun(id, {});
  }

  async appendTrajectories(id: string, trajs: readonly Trajectory[]): Promise<void> {
    await this.filesOf(id).appendTrajectories(trajs);
  }

  async saveCheckpoint(id: string, c: StoredCheckpoint): Promise<void> {
    await this.filesOf(id).saveCheckpoint(c);
  }

  async loadLatestCheckpoint(id: string): Promise<StoredCheckpoint | undefined> {
    return this.filesOf(id).loadLatestCheckpoint();
  }

  /** The checkpoint saved at `step`, if it is still kept (the last KEEP_CHECKPOINTS are). */
  async loadCheckpointAt(id: string, step: number): Promise<StoredCheckpoint | undefined> {
    return this.filesOf(id).loadCheckpoint(step);
  }

  async checkpointSteps(id: string): Promise<number[]> {
    return this.filesOf(id).checkpointSteps();
  }

  /** fsync the run's streams and write its record if metrics were folded into it since (or every open run's). */
  async flush(id?: string): Promise<void> {
    const ids = id ? [id] : [...new Set([...this.files.keys(), ...this.folds.keys()])];
    for (const i of ids) {
      await this.files.get(i)?.flush();
      if (this.folds.has(i)) await this.updateRun(i, {});
    }
  }

  /** Flush, then close every open stream (also when the flush fails, so no file handle is left to the GC). */
  async close(): Promise<void> {
    const failures: unknown[] = [];
    await this.flush().catch((e: unknown) => failures.push(e));
    const files = [...this.files.values()];
    this.files.clear();
    for (const r of await Promise.allSettled(files.map((f) => f.close()))) if (r.status === 'rejected') failures.push(r.reason);
    await this.chain;
    if (failures.length > 0) throw failures[0];
  }

  /** All metric records of a run, in file order (cached; incremental reads pick up appends by other processes). */
  async readMetrics(id: string): Promise<MetricRecord[]> {
    return (await this.metricRows(id)).rows;
  }

  private metricRows(id: string): Promise<MetricCache> {
    // Reads of one run are chained: two that extend its cache from the same offset would both append the lines
    // found there (a live run's view asking for two things at once).
    const read = (this.metricReads.get(id) ?? Promise.resolve()).then(async () => {
      const file = join(this.runDir(id), METRICS_FILE);
      let cache = this.metricCache.get(id);
      const size = await stat(file).then(
        (st) => st.size,
        () => 0,
      );
      if (!cache || size < cache.offset) cache = { offset: 0, rows: [], keys: new Set(), keysUpTo: 0 };
      if (size > cache.offset) {
        const chunk = await readJsonl(file, cache.offset);
        for (const item of chunk.items) {
          const r = decodeMetricRecord(item);
          if (r) cache.rows.push(r);
        }
        cache.offset = chunk.offset;
      }
      this.metricCache.set(id, cache);
      return cache;
    });
    this.metricReads.set(
      id,
      read.then(
        () => undefined,
        () => undefined,
      ),
    );
    return read;
  }

  async metricKeys(id: string): Promise<string[]> {
    const cache = await this.metricRows(id);
    for (; cache.keysUpTo < cache.rows.length; cache.keysUpTo++) {
      for (const k in cache.rows[cache.keysUpTo].values) cache.keys.add(k);
    }
    return [...cache.keys].sort();
  }

  /** One metric as a chart series (x by step, wall seconds or tokens), LTTB-downsampled with non-finite markers kept. */
  async series(id: string, key: string, opts: SeriesOptions = {}): Promise<Series> {
    const { rows } = await this.metricRows(id);
    return buildSeries(id, key, rows, opts);
  }

  /** Stored trajectories: the steps that have any, and those at `step` (default: the latest such step). */
  async trajectories(id: string, opts: { step?: number; limit?: number } = {}): Promise<{ steps: number[]; trajectories: Trajectory[] }> {
    // An index of (step, byte range) per line, extended incrementally: long runs hold many trajectories and a
    // viewer asks for one step at a time, so only that step's lines are read and parsed.
    const file = join(this.runDir(id), TRAJECTORIES_FILE);
    // Index extensions of one run are chained: two concurrent callers must not both append the same lines.
    const extend = (this.trajIndexing.get(id) ?? Promise.resolve()).then(async () => {
      let cur = this.trajIndex.get(id);
      const size = await stat(file).then(
        (st) => st.size,
        () => 0,
      );
      if (!cur || size < cur.offset) cur = { offset: 0, refs: [] };
      if (size > cur.offset) {
        const more = await indexJsonl(file, cur.offset);
        cur.refs.push(...more.refs);
        cur.offset = more.offset;
      }
      this.trajIndex.set(id, cur);
      return cur;
    });
    this.trajIndexing.set(
      id,
      extend.then(
        () => undefined,
        () => undefined,
      ),
    );
    const idx = await extend;
    const steps = [...new Set(idx.refs.map((r) => r.step))].sort((a, b) => a - b);
    const step = opts.step ?? steps[steps.length - 1];
    if (step === undefined) return { steps, trajectories: [] };
    const wanted = idx.refs.filter((r) => r.step === step).slice(0, opts.limit ?? 50);
    return { steps, trajectories: (await readLines(file, wanted)) as Trajectory[] };
  }
}

export function buildSeries(runId: string, key: string, rows: readonly MetricRecord[], opts: SeriesOptions = {}): Series {
  const xKey = opts.xKey ?? X_KEY[opts.xAxis ?? 'step'];
  const px: number[] = [];
  const py: Array<number | null> = [];
  const ps: number[] = [];
  const nonFinite: Series['nonFinite'] = [];
  let seenFinite = false;
  for (const r of rows) {
    const v = r.values[key];
    if (v === undefined) continue;
    const x = xKey === null ? r.step : r.values[xKey];
    if (x === undefined || !Number.isFinite(x)) continue;
    if (Number.isFinite(v)) {
      seenFinite = true;
      px.push(x);
      py.push(v);
      ps.push(r.step);
      continue;
    }
    const kind = reportableNonFinite(key, v, seenFinite);
    if (kind === null) continue;
    nonFinite.push({ step: r.step, value: kind });
    px.push(x);
    py.push(null);
    ps.push(r.step);
  }
  const total = px.length;
  const max = opts.maxPoints;
  if (max === undefined || total <= max) return { runId, key, x: px, y: py, steps: ps, nonFinite, totalPoints: total };
  // Non-finite markers are always kept (up to half the budget); LTTB picks the finite points.
  const nullIdx: number[] = [];
  const finIdx: number[] = [];
  for (let i = 0; i < total; i++) (py[i] === null ? nullIdx : finIdx).push(i);
  const keepNull =
    nullIdx.length <= max / 2
      ? nullIdx
      : lttbIndices(
          nullIdx.map((i) => px[i]),
          nullIdx.map(() => 0),
          Math.floor(max / 2),
        ).map((j) => nullIdx[j]);
  const budget = max - keepNull.length;
  const fx = finIdx.map((i) => px[i]);
  const fy = finIdx.map((i) => py[i] as number);
  const keepFin = lttbIndices(fx, fy, budget).map((j) => finIdx[j]);
  const keep = [...keepNull, ...keepFin].sort((a, b) => a - b);
  return {
    runId,
    key,
    x: keep.map((i) => px[i]),
    y: keep.map((i) => py[i]),
    steps: keep.map((i) => ps[i]),
    nonFinite,
    totalPoints: total,
  };
}
