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
 */
import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { RunRecord as RunRecordSchema, type Alert, type ApiInput, type ComputeBackendInfo, type RunRecord, type RunStatus, type RunSummary, type Series, type Trajectory } from '../../shared/api';
import type { MetricRecord } from '../../shared/metrics';
import { reportableNonFinite } from '../../core/stability/nonFinite';
import { appCommit, appVersion } from '../appInfo';
import { cleanStaleTemps, writeFileAtomic } from './atomic';
import { CatalogCorruptError, createCatalog, type CatalogData } from './catalog';
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
  readonly name?: string;
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
}

export type RunPatch = Partial<Omit<RunRecord, 'id' | 'createdAt' | 'alertCount' | 'worstSeverity'>>;

export interface SeriesOptions {
  readonly xAxis?: XAxisName;
  /** Downsample to at most this many points (LTTB; non-finite markers kept). Default: no downsampling. */
  readonly maxPoints?: number;
}

const X_KEY: Record<XAxisName, string | null> = { step: null, wall: 'perf/wall_s', tokens: 'perf/total_tokens' };
const SEVERITY_RANK = { info: 0, warning: 1, critical: 2 } as const;
/** Minimum seconds between run-record writes caused by metric appends alone (status changes write at once). */
const RECORD_WRITE_INTERVAL_MS = 2000;
const OWNER_FILE = '.owner';

export const UNKNOWN_BACKEND: ComputeBackendInfo = { training: 'unknown', rollout: 'unknown', detail: 'not recorded', available: [] };

interface MetricCache {
  offset: number;
  rows: MetricRecord[];
  keys: Set<string>;
}

function stamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '-');
}

function newRunId(env: string, preset: string): string {
  const t = new Date().toISOString().slice(0, 19).replace(/[-:T]/g, '').replace(/^(\d{8})/, '$1-');
  const base = `${t}-${env}-${preset}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 52);
  return `${base}-${randomBytes(3).toString('hex')}`;
}

export function toSummary(r: RunRecord): RunSummary {
  return {
    id: r.id, name: r.name, tags: r.tags, env: r.env, preset: r.preset, seed: r.seed, status: r.status, step: r.step,
    totalSteps: r.totalSteps, createdAt: r.createdAt, updatedAt: r.updatedAt, summary: r.summary,
    alertCount: r.alertCount, worstSeverity: r.worstSeverity,
  };
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
  private trajIndex = new Map<string, { offset: number; refs: LineRef[] }>();
  private trajIndexing = new Map<string, Promise<void>>();
  private syncedMtime = new Map<string, number>();
  private lastRecordWrite = new Map<string, number>();
  private chain: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly dataDir: string,
    private readonly db: Low<CatalogData>,
  ) {}

  get runsDir(): string {
    return join(this.dataDir, 'runs');
  }

  get catalogFile(): string {
    return join(this.dataDir, 'runs.json');
  }

  runDir(id: string): string {
    return join(this.runsDir, id);
  }

  /** Open (creating if needed) the run database in `dataDir`. Never throws for a corrupt catalog: see `warnings`. */
  static async open(dataDir: string): Promise<RunStore> {
    await mkdir(join(dataDir, 'runs'), { recursive: true });
    const file = join(dataDir, 'runs.json');
    const store = new RunStore(dataDir, createCatalog(file));
    await cleanStaleTemps(dataDir);
    try {
      await store.db.read();
    } catch (e) {
      if (!(e instanceof CatalogCorruptError)) throw e;
      const aside = `${file}.corrupt-${stamp()}`;
      await rename(file, aside);
      store.warnings.push(`The run catalog could not be read (${e.reason}); it was moved aside intact to ${aside} and rebuilt from the run folders.`);
      store.db.data = { schemaVersion: 1, runs: {} };
    }
    for (const d of await readdir(join(dataDir, 'runs'), { withFileTypes: true }).catch(() => [])) {
      if (!d.isDirectory() || d.name.startsWith('.')) continue;
      await cleanStaleTemps(join(dataDir, 'runs', d.name));
      await cleanStaleTemps(join(dataDir, 'runs', d.name, CHECKPOINTS_DIR));
    }
    const before = JSON.stringify(Object.keys(store.db.data.runs).sort());
    await store.reconcile();
    if (JSON.stringify(Object.keys(store.db.data.runs).sort()) !== before || store.warnings.length > 0) await store.db.write();
    return store;
  }

  /** Serialise catalog mutations within this process. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.chain.then(fn);
    this.chain = p.catch(() => undefined);
    return p;
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
      if (res.success) parsed = res.data;
      else throw new Error(res.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).slice(0, 3).join('; '));
    } catch (e) {
      const aside = `${p}.corrupt-${stamp()}`;
      await rename(p, aside).catch(() => undefined);
      this.warnings.push(`Run ${id}: its record run.json was unreadable (${(e as Error).message}); moved aside to ${aside}.`);
      return undefined;
    }
    return parsed;
  }

  /** Bring the catalog in line with the run directories (new/changed run.json files, deleted dirs). */
  private async reconcile(): Promise<boolean> {
    let changed = false;
    let names: string[];
    try {
      names = (await readdir(this.runsDir, { withFileTypes: true })).filter((d) => d.isDirectory() && !d.name.startsWith('.')).map((d) => d.name);
    } catch {
      names = [];
    }
    const present = new Set(names);
    for (const id of Object.keys(this.db.data.runs)) {
      if (!present.has(id)) {
        delete this.db.data.runs[id];
        this.syncedMtime.delete(id);
        changed = true;
      }
    }
    for (const id of names) {
      let mtime: number;
      try {
        mtime = (await stat(join(this.runDir(id), RUN_FILE))).mtimeMs;
      } catch {
        if (!this.db.data.runs[id]) {
          if (!this.warnings.some((w) => w.includes(`Run ${id}:`))) this.warnings.push(`Run ${id}: folder has no run.json; it is not listed (its files are kept).`);
        }
        continue;
      }
      if (this.syncedMtime.get(id) === mtime) continue;
      const rec = await this.readRunJson(id);
      if (!rec) continue;
      this.syncedMtime.set(id, mtime);
      const cur = this.db.data.runs[id];
      if (!cur || cur.updatedAt < rec.updatedAt || JSON.stringify(cur) !== JSON.stringify(rec)) {
        if (!cur || cur.updatedAt <= rec.updatedAt) {
          this.db.data.runs[id] = rec;
          changed = true;
        }
      }
    }
    return changed;
  }

  // ------------------------------------------------------------------------------------------------------
  // Records
  // ------------------------------------------------------------------------------------------------------

  async createRun(input: CreateRunInput): Promise<RunRecord> {
    return this.exclusive(async () => {
      const id = input.id ?? newRunId(input.env, input.preset);
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) throw new Error(`run id "${id}" is not 1–64 letters, digits, "_" or "-"`);
      if (this.db.data.runs[id]) throw new Error(`a run with id "${id}" already exists`);
      const now = new Date().toISOString();
      const rec: RunRecord = withAlertStats({
        id,
        name: input.name ?? `${input.preset} · ${input.env} · seed ${input.seed}`,
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
        wallSeconds: 0,
        etaSeconds: null,
      });
      await RunFiles.ensureDir(this.runDir(id));
      await this.persist(rec);
      return rec;
    });
  }

  private async persist(rec: RunRecord): Promise<void> {
    await this.filesOf(rec.id).writeRecord(rec);
    try {
      this.syncedMtime.set(rec.id, (await stat(join(this.runDir(rec.id), RUN_FILE))).mtimeMs);
    } catch {
      // deleted concurrently
    }
    this.db.data.runs[rec.id] = rec;
    this.lastRecordWrite.set(rec.id, Date.now());
    await this.db.write();
  }

  /**
   * Resolve what a user typed (CLI): an exact id, else a unique id prefix, else a unique exact name.
   * Throws with the candidates when it is ambiguous or matches nothing.
   */
  async findRun(ref: string): Promise<RunRecord> {
    const exact = await this.getRun(ref);
    if (exact) return exact;
    const all = await this.listRuns();
    const byPrefix = all.filter((r) => r.id.startsWith(ref));
    const byName = all.filter((r) => r.name === ref);
    const hits = byPrefix.length > 0 ? byPrefix : byName;
    if (hits.length === 1) return (await this.getRun(hits[0].id))!;
    if (hits.length === 0) throw new Error(`no run matches "${ref}" (${all.length} runs in ${this.dataDir}; see \`arlarena runs\`)`);
    throw new Error(`"${ref}" matches ${hits.length} runs: ${hits.slice(0, 5).map((r) => r.id).join(', ')}${hits.length > 5 ? ', …' : ''}; type more of the id`);
  }

  /** This process's in-memory view of a record (no disk read; may lag another process's writes). */
  cached(id: string): RunRecord | undefined {
    return this.db.data.runs[id];
  }

  async getRun(id: string): Promise<RunRecord | undefined> {
    await this.chain;
    const cur = this.db.data.runs[id];
    // run.json is authoritative (another process may be training this run).
    try {
      const mtime = (await stat(join(this.runDir(id), RUN_FILE))).mtimeMs;
      if (cur && this.syncedMtime.get(id) === mtime) return cur;
    } catch {
      return undefined;
    }
    const rec = await this.readRunJson(id);
    return rec ?? cur;
  }

  async listRuns(q: RunQuery = {}): Promise<RunSummary[]> {
    await this.exclusive(async () => {
      if (await this.reconcile()) await this.db.write();
    });
    const search = q.search?.trim().toLowerCase();
    let runs = Object.values(this.db.data.runs).filter((r) => {
      if (q.status && !q.status.includes(r.status)) return false;
      if (q.env && r.env !== q.env) return false;
      if (q.preset && r.preset !== q.preset) return false;
      if (q.tag && !r.tags.includes(q.tag)) return false;
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

  /** Merge `patch` into the record (a function gets the current record). Writes run.json, then the catalog. */
  async updateRun(id: string, patch: RunPatch | ((r: RunRecord) => RunPatch)): Promise<RunRecord> {
    return this.exclusive(async () => {
      const cur = this.db.data.runs[id] ?? (await this.readRunJson(id));
      if (!cur) throw new Error(`no run with id "${id}"`);
      const p = typeof patch === 'function' ? patch(cur) : patch;
      const next = withAlertStats({ ...cur, ...p, id: cur.id, createdAt: cur.createdAt, updatedAt: new Date().toISOString() });
      await this.persist(next);
      return next;
    });
  }

  /** Replace or add alerts by id; an alert already acknowledged stays acknowledged. */
  async upsertAlerts(id: string, alerts: readonly Alert[]): Promise<RunRecord> {
    return this.updateRun(id, (r) => {
      const byId = new Map(r.alerts.map((a) => [a.id, a]));
      for (const a of alerts) byId.set(a.id, { ...a, acknowledged: a.acknowledged || (byId.get(a.id)?.acknowledged ?? false) });
      return { alerts: [...byId.values()].sort((a, b) => a.firstStep - b.firstStep) };
    });
  }

  async deleteRun(id: string): Promise<boolean> {
    return this.exclusive(async () => {
      const dir = this.runDir(id);
      const exists = await stat(dir).then(() => true, () => false);
      if (!exists && !this.db.data.runs[id]) return false;
      await this.files.get(id)?.close().catch(() => undefined);
      this.files.delete(id);
      this.metricCache.delete(id);
      this.trajIndex.delete(id);
      this.trajIndexing.delete(id);
      if (exists) {
        // Rename first: a half-deleted folder must never be mistaken for a run.
        const trash = join(this.runsDir, `.deleted-${id}-${stamp()}`);
        await rename(dir, trash);
        await rm(trash, { recursive: true, force: true });
      }
      delete this.db.data.runs[id];
      this.syncedMtime.delete(id);
      await this.db.write();
      return true;
    });
  }

  /**
   * Mark this process as the owner of an active run (runs/<id>/.owner holds the pid), so another process
   * starting up (the app while a CLI `train` runs) does not mistake the run for an interrupted one.
   */
  async claimRun(id: string, pid = process.pid): Promise<void> {
    await writeFileAtomic(join(this.runDir(id), OWNER_FILE), JSON.stringify({ pid, since: new Date().toISOString() }));
  }

  async releaseRun(id: string): Promise<void> {
    await rm(join(this.runDir(id), OWNER_FILE), { force: true });
  }

  /** True when another live process owns the run (see claimRun). */
  async ownedElsewhere(id: string): Promise<boolean> {
    let pid: number;
    try {
      pid = (JSON.parse(await readFile(join(this.runDir(id), OWNER_FILE), 'utf8')) as { pid: number }).pid;
    } catch {
      return false;
    }
    if (!Number.isInteger(pid) || pid === process.pid) return false;
    try {
      process.kill(pid, 0);
      return true;
    } catch (e) {
      // EPERM: alive but not ours to signal — still alive.
      return (e as NodeJS.ErrnoException).code === 'EPERM';
    }
  }

  /**
   * At start-up: runs left running/paused/queued by a process that died are marked interrupted (runs a live
   * process still owns are left alone). Returns the ids marked.
   */
  async markInterrupted(): Promise<string[]> {
    const active = Object.values(this.db.data.runs).filter((r) => r.status === 'running' || r.status === 'paused' || r.status === 'queued').map((r) => r.id);
    const ids: string[] = [];
    for (const id of active) if (!(await this.ownedElsewhere(id))) ids.push(id);
    for (const id of ids) {
      await this.updateRun(id, { status: 'interrupted', etaSeconds: null, error: 'The app or process stopped while this run was active; resume continues from its last checkpoint.' });
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
   * into the record, written at most every 2 s from here (call `flush` to write now).
   */
  async appendMetrics(id: string, records: readonly MetricRecord[]): Promise<void> {
    if (records.length === 0) return;
    await this.filesOf(id).appendMetrics(records);
    await this.noteMetrics(id, records);
  }

  /**
   * Fold metric records another writer already appended (a session worker) into the run record: step, wall
   * time, ETA, summary. The record is written at most every 2 s from here; `flush` writes it now.
   */
  async noteMetrics(id: string, records: readonly MetricRecord[]): Promise<void> {
    if (records.length === 0) return;
    const cur = this.db.data.runs[id];
    if (!cur) return;
    let summary = cur.summary;
    for (const r of records) summary = foldSummary(summary, r);
    const last = records[records.length - 1];
    const wall = last.values['perf/wall_s'];
    const wallSeconds = wall !== undefined && Number.isFinite(wall) ? wall : cur.wallSeconds;
    const eta = last.step > 0 && wallSeconds > 0 ? (wallSeconds / last.step) * Math.max(0, cur.totalSteps - last.step) : null;
    const next = { ...cur, summary, step: Math.max(cur.step, last.step), wallSeconds, etaSeconds: eta };
    this.db.data.runs[id] = next;
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

  /** fsync the run's streams and write its record (or every open run's). */
  async flush(id?: string): Promise<void> {
    const ids = id ? [id] : [...this.files.keys()];
    for (const i of ids) {
      await this.files.get(i)?.flush();
      if (this.db.data.runs[i]) await this.updateRun(i, {});
    }
  }

  async close(): Promise<void> {
    await this.flush();
    for (const f of this.files.values()) await f.close();
    this.files.clear();
    await this.chain;
  }

  /** All metric records of a run, in file order (cached; incremental reads pick up appends by other processes). */
  async readMetrics(id: string): Promise<MetricRecord[]> {
    return (await this.metricRows(id)).rows;
  }

  private async metricRows(id: string): Promise<MetricCache> {
    const file = join(this.runDir(id), METRICS_FILE);
    let cache = this.metricCache.get(id);
    let size = 0;
    try {
      size = (await stat(file)).size;
    } catch {
      size = 0;
    }
    if (!cache || size < cache.offset) cache = { offset: 0, rows: [], keys: new Set() };
    if (size > cache.offset) {
      const chunk = await readJsonl(file, cache.offset);
      for (const item of chunk.items) {
        const r = decodeMetricRecord(item);
        if (!r) continue;
        cache.rows.push(r);
        for (const k of Object.keys(r.values)) cache.keys.add(k);
      }
      cache.offset = chunk.offset;
    }
    this.metricCache.set(id, cache);
    return cache;
  }

  async metricKeys(id: string): Promise<string[]> {
    return [...(await this.metricRows(id)).keys].sort();
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
      const size = await stat(file).then((st) => st.size, () => 0);
      if (!cur || size < cur.offset) cur = { offset: 0, refs: [] };
      if (size > cur.offset) {
        const more = await indexJsonl(file, cur.offset);
        cur.refs.push(...more.refs);
        cur.offset = more.offset;
      }
      this.trajIndex.set(id, cur);
      return cur;
    });
    this.trajIndexing.set(id, extend.then(() => undefined, () => undefined));
    const idx = await extend;
    const steps = [...new Set(idx.refs.map((r) => r.step))].sort((a, b) => a - b);
    const step = opts.step ?? steps[steps.length - 1];
    if (step === undefined) return { steps, trajectories: [] };
    const wanted = idx.refs.filter((r) => r.step === step).slice(0, opts.limit ?? 50);
    return { steps, trajectories: (await readLines(file, wanted)) as Trajectory[] };
  }
}

export function buildSeries(runId: string, key: string, rows: readonly MetricRecord[], opts: SeriesOptions = {}): Series {
  const xKey = X_KEY[opts.xAxis ?? 'step'];
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
  const keepNull = nullIdx.length <= max / 2 ? nullIdx : lttbIndices(nullIdx.map((i) => px[i]), nullIdx.map(() => 0), Math.floor(max / 2)).map((j) => nullIdx[j]);
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
