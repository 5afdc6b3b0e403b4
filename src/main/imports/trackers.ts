/**
 * Trackers' own stores as sources of lab runs: W&B run folders (`.wandb` transaction logs, several files of one
 * resumed run read as one), MLflow's file store (`mlruns/`) and SQLite store (`mlflow.db`), Trackio's SQLite
 * database. One `TrackerRun` per run the tracker knows; `importTrackerRuns` writes each as an imported lab run.
 *
 * Found by content, never by name: a file is a W&B log by its `:W&B` header, a database by SQLite's magic and then
 * its tables (MLflow: `runs` + `metrics.run_uuid`; Trackio: `metrics.metrics` JSON + `run_name`), an MLflow
 * file-store run by its meta.yaml's content (`run_id`, `experiment_id`, `lifecycle_stage`).
 *
 * Sources of truth for the layouts: wandb's wandb_internal.proto and datastore (core/formats/wandb*.ts); MLflow's
 * FileStore (mlflow/store/tracking/file_store.py: `metrics/<key>` lines `timestamp value step`, `params/<key>`,
 * `tags/<key>`, meta.yaml) and SqlAlchemyStore (mlflow/store/tracking/dbmodels/models.py: NaN stored as value 0
 * with is_nan = 1, ±inf clamped to ±sys.float_info.max); Trackio's SQLiteStorage (trackio/sqlite_storage.py:
 * metrics rows with a JSON `metrics` payload, NaN / ±inf as the strings "NaN" / "Infinity" / "-Infinity").
 * verl's MLflow logger writes `@` in metric keys as `_at_` (MLflow refuses `@`); it is turned back here.
 */
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import { crc32 } from 'node:zlib';
import { createWandbParser, SKIP_NO_STEP } from '../../core/formats/wandb';
import {
  isWandbConfigYaml,
  isWandbHistoryHead,
  parsePythonJson,
  wandbConfigFromYaml,
  wandbHistoryRow,
  wandbMetadata,
  wandbRunIdFromFolder,
  wandbSummaryValues,
} from '../../core/formats/wandbFiles';
import { RecordShapes } from '../../core/formats/recordShape';
import { MAX_RUN_KEYS, RecordLimitError } from '../../core/formats/steps';
import type { SourceMeta, SourceRunInfo, SourceStep, TrackerStoreFormat } from '../../core/formats/types';
import { CHUNK_BYTES, LineSplitter, listTree, readHead } from './files';
import { isSqlite, isSqliteError, openReadOnly, tablesOf, UnreadableDbError, type SqliteDb } from './sqliteReadOnly';
import { localRows, sqliteAside, type ProgramSource } from './sqliteRowsAside';

export type TrackerFormat = TrackerStoreFormat | 'wandb';

/** How a run's steps reach the importer: `add` per step (synchronous), then `afterChunk` is awaited. */
export interface StepFeed {
  add(s: SourceStep): void;
  afterChunk(meta: SourceMeta): Promise<void>;
  /**
   * The run's meta as it will be at its first steps (its config read): the importer may make the run's record
   * now, while the steps are still being read, instead of at the first `afterChunk`.
   */
  ready?(meta: SourceMeta): void;
  /**
   * Forget every step given so far: the run is read again from its start. A reader that streams steps before it
   * knows they are in order (the MLflow SQLite reader) does so only when the feed has this.
   */
  again?(): Promise<void>;
}

export interface TrackerRun {
  readonly format: TrackerFormat;
  /** The run's name for the lab: the tracker's run name (W&B display name, MLflow run name, Trackio run name). */
  readonly label: string;
  readonly info: SourceRunInfo;
  /** The files read (hashed for the duplicate check). */
  readonly files: readonly string[];
  /** Stream the run's steps in order; returns its meta (config, notes, summary) and what was skipped. */
  read(feed: StepFeed): Promise<{ meta: SourceMeta; skipped: Record<string, number> }>;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function bump(into: Record<string, number>, reason: string, n = 1): void {
  into[reason] = (into[reason] ?? 0) + n;
}

/** verl's MLflow adapter writes `@` as `_at_` (MLflow metric names may not hold `@`). */
export function unMlflowKey(key: string): string {
  return key.includes('_at_') ? key.split('_at_').join('@') : key;
}

/** A param / tag string as the value it most likely was (Python's str() of a number, bool, None, list). */
export function paramValue(s: string): unknown {
  if (s === 'True') return true;
  if (s === 'False') return false;
  if (s === 'None') return null;
  if (/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(s)) return Number(s);
  return s;
}

/** Flat `a/b/c` (verl's MLflow params) or `a.b.c` keys → a nested object. */
export function nestParams(flat: Readonly<Record<string, string>>, sepChar = '/'): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(flat)) {
    const parts = k.split(sepChar);
    let cur = out;
    for (let i = 0; i < parts.length - 1; i++) {
      const next = cur[parts[i]];
      if (!isObj(next)) cur[parts[i]] = {};
      cur = cur[parts[i]] as Record<string, unknown>;
    }
    cur[parts[parts.length - 1]] = paramValue(v);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------- W&B

interface WandbFile {
  readonly path: string;
  readonly runId: string;
  readonly startMs: number;
  readonly info: SourceRunInfo;
}

/** The run id and start time a `.wandb` file's head names (its run record is among the first records). */
async function wandbHead(path: string): Promise<WandbFile | null> {
  const parser = createWandbParser(() => undefined, { crc32 });
  parser.push(await readHead(path, 256 * 1024));
  const info = parser.runInfo;
  if (!info || !info.id) return null;
  return { path, runId: info.id, startMs: info.startTime ? Date.parse(info.startTime) : 0, info };
}

function wandbRun(files: WandbFile[], following: boolean): TrackerRun {
  // A resumed run: several files with one run id, read in the order they started (their run records say when).
  const ordered = [...files].sort((a, b) => a.startMs - b.startMs || (a.path < b.path ? -1 : 1));
  // Until the files are read, what the first one's run record says (the state is known only at the end).
  const { state: _unknown, ...first } = ordered[0].info;
  let info: SourceRunInfo = first;
  return {
    format: 'wandb',
    get label() {
      return info.name ?? info.id;
    },
    get info() {
      return info;
    },
    files: ordered.map((f) => f.path),
    async read(feed) {
      const skipped: Record<string, number> = {};
      const meta: SourceMeta = { framework: 'unknown', notes: [] };
      for (const [i, f] of ordered.entries()) {
        const last = i === ordered.length - 1;
        const parser = createWandbParser((s) => feed.add(s), { following: following && last, crc32 });
        for await (const chunk of createReadStream(f.path, { highWaterMark: CHUNK_BYTES }) as AsyncIterable<Buffer>) {
          parser.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length));
          await feed.afterChunk({ ...meta, ...(parser.meta.config ? { config: parser.meta.config } : {}) });
        }
        parser.end();
        for (const [k, n] of Object.entries(parser.skipped)) bump(skipped, k, n);
        // Later files of a resumed run carry its newest config and summary; the first names it.
        if (parser.meta.config) meta.config = parser.meta.config;
        if (parser.meta.finalMetrics) meta.finalMetrics = { ...meta.finalMetrics, ...parser.meta.finalMetrics };
        for (const n of parser.meta.notes)
          if (!meta.notes.includes(n) && (last || !n.startsWith('the W&B file ends without'))) meta.notes.push(n);
        const r = parser.meta.run;
        if (r)
          info =
            i === 0
              ? r
              : {
                  ...info,
                  ...r,
                  name: info.name ?? r.name,
                  startTime: info.startTime ?? r.startTime,
                  state: r.state,
                  ...(r.exitCode !== undefined ? { exitCode: r.exitCode } : {}),
                };
      }
      if (ordered.length > 1) meta.notes.push(`W&B run ${info.id} was resumed: ${ordered.length} transaction logs read in start order`);
      meta.run = info;
      return { meta, skipped };
    },
  };
}

// ---------------------------------------------------------------------------------------------------- MLflow

const MLFLOW_MAX = 1.7976931348623157e308;

/** MLflow's stored value back to what was logged: NaN from is_nan, ±inf from ±sys.float_info.max. */
export function mlflowValue(v: number, isNan: number | boolean): number {
  if (isNan) return Number.NaN;
  if (v >= MLFLOW_MAX) return Number.POSITIVE_INFINITY;
  if (v <= -MLFLOW_MAX) return Number.NEGATIVE_INFINITY;
  return v;
}

const MLFLOW_STATE: Record<string, SourceRunInfo['state']> = {
  FINISHED: 'finished',
  FAILED: 'failed',
  KILLED: 'killed',
  RUNNING: 'running',
  SCHEDULED: 'running',
};
/** The file store's meta.yaml writes RunStatus as its number (mlflow/entities/run_status.py). */
const MLFLOW_STATUS_NUM: Record<string, string> = { '1': 'RUNNING', '2': 'SCHEDULED', '3': 'FINISHED', '4': 'FAILED', '5': 'KILLED' };

/**
 * Groups (step, key, value) rows, ordered by step, into steps; the last value of a key within a step wins. A
 * step's keys leave in one order (first seen first) whatever order the database returned them in, so the mapping
 * table's plan cache (core/formats/mapping.ts) recognises consecutive steps.
 *
 * Each distinct key gets a slot once; a row only writes its slot's value and marks it present in the current step,
 * and a step is built once, in slot order, which is first-seen order. (Trackio's rows; MLflow's steps are grouped
 * in SQLite, MLFLOW_STEPS_SQL.)
 */
class StepGrouper {
  private step = Number.NaN;
  private open = false;
  private wall = 0;
  /** Row key → slot. */
  private readonly slots = new Map<string, number>();
  /** Slot → the key. */
  private readonly names: string[] = [];
  private vals = new Float64Array(64);
  /** The step generation each slot was last written in (present in this step when equal to `gen`). */
  private seen = new Int32Array(64);
  private gen = 0;
  private present = 0;
  constructor(private readonly feed: StepFeed) {}

  private slotOf(key: string): number {
    let i = this.slots.get(key);
    if (i !== undefined) return i;
    i = this.names.length;
    this.names.push(key);
    if (i >= this.vals.length) {
      const v = new Float64Array(this.vals.length * 2);
      v.set(this.vals);
      this.vals = v;
      const s = new Int32Array(this.seen.length * 2);
      s.set(this.seen);
      this.seen = s;
    }
    this.slots.set(key, i);
    return i;
  }

  add(step: number, key: string, value: number, tsMs: number): void {
    if (step !== this.step || !this.open) {
      this.flush();
      this.step = step;
      this.open = true;
      this.gen++;
      this.present = 0;
      this.wall = 0;
    }
    const i = this.slotOf(key);
    if (this.seen[i] !== this.gen) {
      this.seen[i] = this.gen;
      this.present++;
    }
    this.vals[i] = value;
    if (tsMs > this.wall) this.wall = tsMs;
  }

  flush(): void {
    if (!this.open) return;
    this.open = false;
    const values: Record<string, number> = {};
    const gen = this.gen;
    let left = this.present;
    for (let i = 0; left > 0 && i < this.names.length; i++) {
      if (this.seen[i] !== gen) continue;
      values[this.names[i]] = this.vals[i];
      left--;
    }
    this.feed.add({ run: '', step: this.step, values, ...(this.wall > 0 ? { wallTime: this.wall / 1000 } : {}) });
  }
}

/**
 * A run's metric rows as one row per step, grouped by SQLite itself: the step, its latest timestamp (ms), its
 * values as a JSON object of key → value (null for MLflow's is_nan rows), how many rows it had and its first
 * rowid. Iterating a million rows one by one through better-sqlite3 cost ~1 CPU s, most of it making a JS array
 * per row; SQLite builds a step's object in C and JSON.parse makes it in one call (MlflowSteps finishes the values).
 *
 * Rows reach json_group_object in the subquery's order, step then timestamp then rowid (the ORDER BY satisfies the
 * outer GROUP BY, so SQLite keeps it), and JSON.parse keeps the last of a key written twice: a value logged twice
 * at one step keeps its latest, MLflow's own "latest metric" rule (step, then timestamp), and of two at the same
 * millisecond the one written later. SQLite writes a REAL in JSON with the digits that read back as the same
 * double (17 significant at most), so values stay exact (mlflowSqliteExact.integration.test.ts, on values MLflow's
 * client logged).
 */
function mlflowStepsSql(where: string, extra = ''): string {
  return `SELECT step, max(timestamp), json_group_object(key, CASE WHEN is_nan THEN NULL ELSE value END), count(*), min(rowid)${extra}
FROM (SELECT rowid, step, timestamp, key, value, is_nan FROM metrics WHERE ${where} ORDER BY step, timestamp, rowid)
GROUP BY step ORDER BY step`;
}

/** The whole run in one query: SQLite sorts all its rows before the first step comes out. */
const MLFLOW_STEPS_SQL = mlflowStepsSql('run_uuid = $run');

/**
 * A run's first and last rowid: seeks in index_metrics_run_uuid, which holds run_uuid then rowid (a query of its own
 * each: SQLite seeks for a lone min() or max(), and scans the run's index for min() and max() together).
 */
const MLFLOW_ROWIDS_SQL = `SELECT (SELECT min(rowid) FROM metrics WHERE run_uuid = $run), (SELECT max(rowid) FROM metrics WHERE run_uuid = $run)`;

/**
 * The next chunk of a run in rowid order: its rows after rowid `after`, up to the one `skip` rows on (or the run's
 * `last`), with the rows after `lo` up to `after` of step `since` and above (a step the previous chunk held back).
 * Each step row also carries the chunk's last rowid. The rowid range is a seek in index_metrics_run_uuid.
 */
const MLFLOW_CHUNK_SQL = `WITH b(hi) AS (SELECT coalesce((SELECT rowid FROM metrics WHERE run_uuid = $run AND rowid > $after ORDER BY rowid LIMIT 1 OFFSET $skip), $last))
${mlflowStepsSql('run_uuid = $run AND rowid > $lo AND rowid <= (SELECT hi FROM b) AND (rowid > $after OR step >= $since)', ', (SELECT hi FROM b)')}`;

/** Metric rows in each chunk of a run read in rowid order (the first chunks fewer: MLFLOW_FIRST_CHUNK_ROWS). */
export const MLFLOW_CHUNK_ROWS = 16_384;
const MLFLOW_FIRST_CHUNK_ROWS = 4_096;

/** A step row: step, latest timestamp, values as JSON, metric rows, first rowid (and for a chunk, its last rowid). */
type StepRow = [number, number | null, string, number, number, number?];

/**
 * A run's step rows in order, read on the reading thread (plain JS, evaluated there: `db` is its connection, `args`
 * { run, chunkRows, firstRows, chunked }). MLflow appends rows as they are logged, so a run's rowid order is nearly
 * its step order: it is read in chunks of rows in rowid order (firstRows, doubling up to chunkRows), each sorted
 * and grouped by SQLite, so the first steps come out after one chunk's sort instead of the whole run's, and the
 * thread runs on ahead of the caller's mapping and writes. A chunk's last step may go on in the next chunk: it is
 * held back and read again with it, from its first row (a step alone in its chunk doubles the next one's size, so
 * a run logged all at one step is read about twice, not once per chunk). The steps come out in the order and with
 * the values of the single query only while every chunk's steps are above those already given: when a chunk holds
 * one at or below (rows logged out of order, a resumed run logging steps again), the mark 'again' says the steps
 * given so far are wrong, and the single query gives the run from its start (same transaction, same rows). Rowids
 * and steps JS cannot hold exactly, or `chunked` false (a caller that cannot take steps back), read the single query.
 */
export const MLFLOW_STEPS_PROGRAM = `
const { run, chunkRows, firstRows, chunked } = args;
const exact = (v) => typeof v === 'number' && Number.isSafeInteger(v);
return (function* () {
  const whole = db.prepare(${JSON.stringify(MLFLOW_STEPS_SQL)}).raw(true);
  const [first, last] = db.prepare(${JSON.stringify(MLFLOW_ROWIDS_SQL)}).raw(true).get({ run });
  if (!chunked || !exact(first) || !exact(last) || first <= Number.MIN_SAFE_INTEGER) {
    yield* whole.iterate({ run });
    return;
  }
  const chunk = db.prepare(${JSON.stringify(MLFLOW_CHUNK_SQL)}).raw(true);
  let rows = Math.min(chunkRows, firstRows);
  let given = -Infinity;
  let lo = first - 1;
  let after = first - 1;
  let since = null;
  for (;;) {
    const got = chunk.all({ run, lo, after, since, skip: rows - 1, last });
    // The first step is the chunk's lowest (with the held step's rows): at or below one given, the order is broken.
    if (got.length === 0 || !got.every((r) => exact(r[0])) || got[0][0] <= given) {
      if (given !== -Infinity) yield 'again';
      yield* whole.iterate({ run });
      return;
    }
    const hi = got[0][5];
    if (hi >= last) {
      yield* got;
      return;
    }
    const held = got[got.length - 1];
    for (let i = 0; i < got.length - 1; i++) yield got[i];
    if (got.length > 1) given = got[got.length - 2][0];
    rows = got.length === 1 ? rows * 2 : Math.min(chunkRows, rows * 2);
    lo = held[4] - 1;
    after = hi;
    since = held[0];
  }
})();
`;

/**
 * Finishes MLFLOW_STEPS_SQL's step objects in place: null (is_nan) and ±DBL_MAX back to NaN and ±inf
 * (mlflowValue), and verl's `_at_` back to `@` (unMlflowKey; the object is then rebuilt with the keys in their
 * order, a later one renamed onto an earlier key winning). Whether a step's keys need renaming is worked out
 * again only when its keys differ from the previous step's.
 */
class MlflowSteps {
  private lastKeys: string[] = [];
  private lastRenamed: string[] | null = null;
  private readonly shapes = new RecordShapes();
  /** Whether any key was renamed. */
  renamed = false;

  finish(values: Record<string, number | null>): Record<string, number> {
    for (const k in values) {
      const v = values[k];
      if (v === null || v >= MLFLOW_MAX || v <= -MLFLOW_MAX) values[k] = mlflowValue(v ?? 0, v === null);
    }
    let i = 0;
    let same = true;
    for (const k in values)
      if (k !== this.lastKeys[i++]) {
        same = false;
        break;
      }
    if (!same || i !== this.lastKeys.length) {
      this.lastKeys = Object.keys(values);
      this.lastRenamed = this.lastKeys.some((k) => k.includes('_at_')) ? this.lastKeys.map(unMlflowKey) : null;
    }
    const names = this.lastRenamed;
    if (names === null) return values as Record<string, number>;
    this.renamed = true;
    const out = { ...this.shapes.get([...new Set(names)]) };
    this.lastKeys.forEach((k, j) => (out[names[j]] = values[k] as number));
    return out;
  }
}

/** A reading thread running MLFLOW_STEPS_PROGRAM, or null where none can start (mlflowStepRows then reads here). */
function startAside(path: string): ProgramSource | null {
  try {
    return sqliteAside(path, { program: MLFLOW_STEPS_PROGRAM, ahead: 4 });
  } catch {
    return null;
  }
}

/** Each batch of step rows the reading thread posts holds about one chunk's (a flush's worth of steps). */
const MLFLOW_BATCH_ROWS = 16_384;

/**
 * A run's step rows (MLFLOW_STEPS_PROGRAM) in batches to `take`, SQLite's work on a thread of its own (`aside`,
 * sqliteRowsAside.ts) beside the mapping, detector and store writes on this one; `again` when the steps given were
 * out of order and come again from the start. Where that thread cannot start or fails before the first steps
 * come, the single query on this thread's `db`. Closes `aside`.
 */
export async function mlflowStepRows(
  db: SqliteDb,
  aside: ProgramSource | null,
  runId: string,
  take: (rows: StepRow[]) => Promise<void>,
  opts: { chunkRows?: number; again?: () => Promise<void> } = {},
): Promise<void> {
  const batches = { weightColumn: 3, batchWeight: MLFLOW_BATCH_ROWS };
  let got = false;
  try {
    if (aside === null) throw new Error('no reading thread');
    const args = { run: runId, chunkRows: opts.chunkRows ?? MLFLOW_CHUNK_ROWS, firstRows: MLFLOW_FIRST_CHUNK_ROWS, chunked: !!opts.again };
    for await (const item of aside.run(args, batches)) {
      got = true;
      if ('rows' in item) await take(item.rows as StepRow[]);
      else if (item.mark === 'again') await opts.again?.();
    }
    return;
  } catch (e) {
    if (got) throw e;
  } finally {
    await aside?.close();
  }
  const local = localRows(db);
  try {
    for await (const rows of local.stream([{ sql: MLFLOW_STEPS_SQL, params: [{ run: runId }] }], batches)) await take(rows as StepRow[]);
  } finally {
    await local.close();
  }
}

function mlflowSqliteRuns(path: string, db: SqliteDb, chunkRows: number): TrackerRun[] {
  const rows = db
    .prepare(
      `SELECT r.run_uuid AS id, r.name AS name, r.status AS status, r.start_time AS start, r.lifecycle_stage AS stage, e.name AS exp
     FROM runs r LEFT JOIN experiments e ON e.experiment_id = r.experiment_id ORDER BY r.start_time, r.run_uuid`,
    )
    .all() as { id: string; name: string | null; status: string | null; start: number | null; stage: string | null; exp: string | null }[];
  return rows
    .filter((r) => r.stage !== 'deleted')
    .map((r) => {
      const info: SourceRunInfo = {
        tracker: 'mlflow',
        id: r.id,
        ...(r.name ? { name: r.name } : {}),
        ...(r.exp ? { project: r.exp } : {}),
        ...(r.start ? { startTime: new Date(r.start).toISOString() } : {}),
        state: MLFLOW_STATE[r.status ?? ''] ?? 'running',
      };
      return {
        format: 'mlflow-sqlite' as const,
        label: r.name ?? r.id,
        info,
        files: [path],
        async read(feed: StepFeed) {
          const db2 = openReadOnly(path);
          // The reading thread starts now: it is ready by the time the params and tags are read.
          const aside = startAside(path);
          const skipped: Record<string, number> = {};
          const meta: SourceMeta = { framework: 'unknown', notes: [], run: info };
          try {
            const params: Record<string, string> = {};
            for (const p of db2.prepare('SELECT key, value FROM params WHERE run_uuid = ?').all(r.id) as { key: string; value: string }[])
              params[p.key] = p.value;
            if (Object.keys(params).length > 0) meta.config = nestParams(params);
            const tags = db2.prepare("SELECT key, value FROM tags WHERE run_uuid = ? AND key NOT LIKE 'mlflow.%'").all(r.id) as {
              key: string;
              value: string | null;
            }[];
            if (tags.length > 0) meta.notes.push(`MLflow tags: ${tags.map((t) => `${t.key}=${t.value ?? ''}`).join(', ')}`);
            if (db2.prepare('SELECT 1 FROM metrics WHERE run_uuid = ? LIMIT 1').get(r.id) !== undefined) feed.ready?.(meta);
            let steps = new MlflowSteps();
            const again = feed.again;
            await mlflowStepRows(
              db2,
              aside,
              r.id,
              async (rows) => {
                for (const [step, wallMs, json] of rows) {
                  const values = steps.finish(JSON.parse(json) as Record<string, number | null>);
                  feed.add({ run: '', step, values, ...(wallMs !== null && wallMs > 0 ? { wallTime: wallMs / 1000 } : {}) });
                }
                await feed.afterChunk(meta);
              },
              {
                chunkRows,
                ...(again
                  ? {
                      again: async () => {
                        steps = new MlflowSteps();
                        await again();
                      },
                    }
                  : {}),
              },
            );
            await feed.afterChunk(meta);
            if (steps.renamed) meta.notes.push('metric keys written by verl with "_at_" for "@" were read back with "@"');
          } finally {
            await aside?.close();
            db2.close();
          }
          return { meta, skipped };
        },
      };
    });
}

/** A meta.yaml's top-level `key: value` lines (MLflow writes flat scalars; quoted strings unquoted). */
export function flatYaml(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*):\s?(.*)$/.exec(line);
    if (!m) continue;
    let v = m[2].trim();
    if ((v.startsWith("'") && v.endsWith("'")) || (v.startsWith('"') && v.endsWith('"'))) v = v.slice(1, -1).replace(/''/g, "'");
    out[m[1]] = v;
  }
  return out;
}

export function isMlflowRunMeta(text: string): boolean {
  const y = flatYaml(text);
  return 'run_id' in y && 'experiment_id' in y && 'lifecycle_stage' in y;
}

/** MLflow's file store writes Python's float repr: `nan`, `inf`, `-inf`. */
function fileStoreValue(s: string): number {
  if (s === 'nan') return Number.NaN;
  if (s === 'inf') return Number.POSITIVE_INFINITY;
  if (s === '-inf') return Number.NEGATIVE_INFINITY;
  return Number(s);
}

async function filesUnder(dir: string): Promise<string[]> {
  try {
    return await listTree(dir);
  } catch {
    return [];
  }
}

async function mlflowFileRun(metaPath: string): Promise<TrackerRun | null> {
  const y = flatYaml(await readFile(metaPath, 'utf8'));
  if (y.lifecycle_stage === 'deleted') return null;
  const dir = dirname(metaPath);
  let exp: string | undefined;
  try {
    exp = flatYaml(await readFile(join(dirname(dir), 'meta.yaml'), 'utf8')).name;
  } catch {
    exp = undefined;
  }
  const status = MLFLOW_STATUS_NUM[y.status] ?? y.status;
  const start = Number(y.start_time);
  const info: SourceRunInfo = {
    tracker: 'mlflow',
    id: y.run_id,
    ...(y.run_name ? { name: y.run_name } : {}),
    ...(exp ? { project: exp } : {}),
    ...(start > 0 ? { startTime: new Date(start).toISOString() } : {}),
    state: MLFLOW_STATE[status] ?? 'running',
  };
  const metricFiles = await filesUnder(join(dir, 'metrics'));
  return {
    format: 'mlflow-file',
    label: y.run_name || y.run_id,
    info,
    files: [metaPath, ...metricFiles],
    async read(feed) {
      const skipped: Record<string, number> = {};
      const meta: SourceMeta = { framework: 'unknown', notes: [], run: info };
      const params: Record<string, string> = {};
      const pdir = join(dir, 'params');
      for (const f of await filesUnder(pdir)) params[relative(pdir, f).split(sep).join('/')] = await readFile(f, 'utf8');
      if (Object.keys(params).length > 0) meta.config = nestParams(params);
      // Each metric is its own file: read them all, then merge by step (a run's metrics fit in memory as numbers).
      const bySteps = new Map<number, { values: Record<string, number>; wall: number }>();
      let fixed = false;
      const mdir = join(dir, 'metrics');
      for (const f of metricFiles) {
        const raw = relative(mdir, f).split(sep).join('/');
        const key = unMlflowKey(raw);
        if (key !== raw) fixed = true;
        const lines = (await readFile(f, 'utf8')).split('\n');
        // MLflow's FileStore appends "timestamp value step\n" per value: a last line without its newline is a write
        // cut short (a copy of a store being written, a full disk). Its first fields ("1733… 0.") would read as
        // MLflow's legacy step-less line, a made-up value at step 0.
        const torn = lines.pop()!;
        if (torn.trim() !== '') bump(skipped, 'torn MLflow metric line at the end of a file (no newline: a write cut short)');
        for (const line of lines) {
          if (line.trim() === '') continue;
          const [ts, v, st] = line.trim().split(/\s+/);
          const step = st === undefined ? 0 : Number(st);
          const value = fileStoreValue(v ?? '');
          if (!Number.isSafeInteger(step) || (Number.isNaN(value) && v !== 'nan')) {
            bump(skipped, 'MLflow metric line that is not "timestamp value step"');
            continue;
          }
          let s = bySteps.get(step);
          if (!s) bySteps.set(step, (s = { values: {}, wall: 0 }));
          s.values[key] = value;
          s.wall = Math.max(s.wall, Number(ts) || 0);
        }
      }
      for (const step of [...bySteps.keys()].sort((a, b) => a - b)) {
        const s = bySteps.get(step)!;
        feed.add({ run: '', step, values: s.values, ...(s.wall > 0 ? { wallTime: s.wall / 1000 } : {}) });
      }
      await feed.afterChunk(meta);
      if (fixed) meta.notes.push('metric keys written by verl with "_at_" for "@" were read back with "@"');
      return { meta, skipped };
    },
  };
}

// ---------------------------------------------------------------------------------------------------- Trackio

/** Trackio's JSON payload values: numbers, and NaN / ±inf written as strings. */
export function trackioNumbers(o: Record<string, unknown>, out: Record<string, number>, prefix = ''): void {
  for (const [k, v] of Object.entries(o)) {
    const key = prefix ? `${prefix}/${k}` : k;
    if (typeof v === 'number') out[key] = v;
    else if (v === 'NaN') out[key] = Number.NaN;
    else if (v === 'Infinity') out[key] = Number.POSITIVE_INFINITY;
    else if (v === '-Infinity') out[key] = Number.NEGATIVE_INFINITY;
    else if (isObj(v) && typeof v._type !== 'string') trackioNumbers(v, out, key);
  }
}

function trackioRuns(path: string, db: SqliteDb, tables: Map<string, Set<string>>): TrackerRun[] {
  const cols = tables.get('metrics')!;
  const byId = cols.has('run_id');
  const project = basename(path).replace(/\.db$/, '');
  const runs = db
    .prepare(
      byId
        ? 'SELECT run_id AS id, run_name AS name, MIN(id) AS first, MIN(timestamp) AS start FROM metrics GROUP BY run_id ORDER BY first'
        : 'SELECT run_name AS id, run_name AS name, MIN(id) AS first, MIN(timestamp) AS start FROM metrics GROUP BY run_name ORDER BY first',
    )
    .all() as { id: string; name: string; start: string }[];
  const hasConfigs = tables.has('configs');
  const cfgById = hasConfigs && tables.get('configs')!.has('run_id');
  return runs.map((r) => {
    const info: SourceRunInfo = { tracker: 'trackio', id: r.id, name: r.name, project, ...(r.start ? { startTime: r.start } : {}) };
    return {
      format: 'trackio' as const,
      label: r.name,
      info,
      files: [path],
      async read(feed: StepFeed) {
        const db2 = openReadOnly(path);
        const skipped: Record<string, number> = {};
        const meta: SourceMeta = { framework: 'unknown', notes: [`Trackio project ${project}`], run: info };
        try {
          if (hasConfigs) {
            const c = db2
              .prepare(cfgById ? 'SELECT config FROM configs WHERE run_id = ?' : 'SELECT config FROM configs WHERE run_name = ?')
              .get(r.id) as { config: string } | undefined;
            if (c) {
              try {
                const o = JSON.parse(c.config) as unknown;
                if (isObj(o)) meta.config = Object.fromEntries(Object.entries(o).filter(([k]) => !k.startsWith('_')));
              } catch {
                bump(skipped, 'Trackio config that is not JSON');
              }
            }
          }
          const g = new StepGrouper(feed);
          const it = db2
            .prepare(`SELECT step, metrics, timestamp FROM metrics WHERE ${byId ? 'run_id' : 'run_name'} = ? ORDER BY step, id`)
            .raw(true)
            .iterate(r.id) as IterableIterator<[number, string, string]>;
          for (const [step, json, ts] of it) {
            let o: unknown;
            try {
              o = JSON.parse(json);
            } catch {
              bump(skipped, 'Trackio metrics row that is not JSON');
              continue;
            }
            if (!isObj(o)) continue;
            const vals: Record<string, number> = {};
            trackioNumbers(o, vals);
            const ms = Date.parse(ts);
            for (const [k, v] of Object.entries(vals)) g.add(step, k, v, Number.isNaN(ms) ? 0 : ms);
          }
          g.flush();
          await feed.afterChunk(meta);
        } finally {
          db2.close();
        }
        return { meta, skipped };
      },
    };
  });
}

// ---------------------------------------------------------------------------------------------------- W&B before 0.10

const SKIP_OLD_LINE = 'W&B history line that is not a JSON object';

/** A run folder an older W&B client left: its history file, its config.yaml, and (when there) summary and metadata. */
async function wandbFilesRun(dir: string, history: string, config: string): Promise<TrackerRun> {
  const summaryPath = join(dir, 'wandb-summary.json');
  const metadataPath = join(dir, 'wandb-metadata.json');
  const readJson = async (p: string): Promise<unknown> => {
    try {
      return parsePythonJson(await readFile(p, 'utf8'));
    } catch {
      return undefined;
    }
  };
  const summary = await readJson(summaryPath);
  const metaJson = await readJson(metadataPath);
  const md = wandbMetadata(metaJson);
  const id = wandbRunIdFromFolder(basename(dir)) ?? basename(dir);
  const started = md.startedAt ? Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(md.startedAt) ? md.startedAt : `${md.startedAt}Z`) : Number.NaN;
  const STATES: Record<string, SourceRunInfo['state']> = {
    finished: 'finished',
    failed: 'failed',
    crashed: 'crashed',
    killed: 'killed',
    running: 'running',
  };
  const state = md.state ? STATES[md.state] : undefined;
  const info: SourceRunInfo = {
    tracker: 'wandb',
    id,
    ...(md.name ? { name: md.name } : {}),
    ...(md.project ? { project: md.project } : {}),
    ...(Number.isFinite(started) ? { startTime: new Date(started).toISOString() } : {}),
    ...(state ? { state } : {}),
    ...(md.exitcode !== undefined ? { exitCode: md.exitcode } : {}),
  };
  const files = [history, config, ...(summary !== undefined ? [summaryPath] : []), ...(metaJson !== undefined ? [metadataPath] : [])];
  return {
    format: 'wandb-files',
    label: info.name ?? id,
    info,
    files,
    async read(feed) {
      const skipped: Record<string, number> = {};
      const meta: SourceMeta = {
        framework: 'unknown',
        notes: ["read from an older W&B client's run folder (wandb-history.jsonl and config.yaml; it has no .wandb file)"],
        run: info,
      };
      try {
        const cfg = wandbConfigFromYaml(await readFile(config, 'utf8'));
        if (Object.keys(cfg).length > 0) meta.config = cfg;
      } catch (e) {
        bump(skipped, 'W&B config.yaml that could not be read');
        meta.notes.push(`its config.yaml could not be read (${e instanceof Error ? e.message : String(e)}); imported without a config`);
      }
      if (isObj(summary)) {
        try {
          const final = wandbSummaryValues(summary);
          if (Object.keys(final).length > 0) meta.finalMetrics = final;
        } catch (e) {
          if (!(e instanceof RecordLimitError)) throw e;
          meta.notes.push(`its wandb-summary.json was left out (${e.reason})`);
        }
      }
      // Non-numeric keys, named in the notes: the first MAX_RUN_KEYS, as a run's numeric keys are bounded.
      const ignored = new Set<string>();
      let ignoredPast = false;
      const onIgnored = (k: string): void => {
        if (ignored.size < MAX_RUN_KEYS) ignored.add(k);
        else if (!ignored.has(k)) ignoredPast = true;
      };
      const onLine = (line: string): void => {
        if (line.trim() === '') return;
        let o: unknown;
        try {
          o = parsePythonJson(line);
        } catch {
          bump(skipped, SKIP_OLD_LINE);
          return;
        }
        if (!isObj(o)) {
          bump(skipped, SKIP_OLD_LINE);
          return;
        }
        let row;
        try {
          row = wandbHistoryRow(o, onIgnored);
        } catch (e) {
          // A row past the record bounds (nesting, values) is one bad line, as in a JSONL log.
          if (!(e instanceof RecordLimitError)) throw e;
          bump(skipped, e.reason);
          return;
        }
        if (row === null) {
          bump(skipped, SKIP_NO_STEP);
          return;
        }
        feed.add({ run: '', step: row.step, values: row.values, ...(row.wallTime !== undefined ? { wallTime: row.wallTime } : {}) });
      };
      const lines = new LineSplitter(onLine);
      for await (const chunk of createReadStream(history, { highWaterMark: CHUNK_BYTES }) as AsyncIterable<Buffer>) {
        lines.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length));
        await feed.afterChunk(meta);
      }
      lines.end();
      await feed.afterChunk(meta);
      if (ignored.size > 0) {
        const keys = [...ignored];
        meta.notes.push(
          `${ignoredPast ? `more than ${keys.length}` : keys.length} non-numeric history key(s) ignored (strings, lists, booleans, media): ${keys.slice(0, 5).join(', ')}${keys.length > 5 ? ', …' : ''}`,
        );
      }
      return { meta, skipped };
    },
  };
}
// ---------------------------------------------------------------------------------------------------- finding runs

/** What a SQLite database is, from its tables. */
export function sqliteKind(tables: Map<string, Set<string>>): 'mlflow-sqlite' | 'trackio' | null {
  const metrics = tables.get('metrics');
  if (tables.has('runs') && tables.has('experiments') && metrics?.has('run_uuid')) return 'mlflow-sqlite';
  if (metrics?.has('metrics') && metrics.has('run_name') && metrics.has('step')) return 'trackio';
  return null;
}

function sqliteRuns(path: string, mlflowChunkRows: number): TrackerRun[] | null {
  try {
    const db = openReadOnly(path);
    try {
      const tables = tablesOf(db);
      const kind = sqliteKind(tables);
      if (kind === 'mlflow-sqlite') return mlflowSqliteRuns(path, db, mlflowChunkRows);
      if (kind === 'trackio') return trackioRuns(path, db, tables);
      return null;
    } finally {
      db.close();
    }
  } catch (e) {
    // A truncated or damaged copy fails here, at its first page read ("database disk image is malformed").
    if (isSqliteError(e)) throw UnreadableDbError.of(path, e);
    throw e;
  }
}

export interface TrackerScan {
  readonly runs: TrackerRun[];
  /** Files looked at that belong to no tracker run (logs, configs, media). */
  readonly others: string[];
}

/**
 * Every tracker run under `path` (a file or a folder), found by content. A W&B run id seen in several `.wandb`
 * files is one resumed run. Returns null runs when nothing tracker-shaped is there.
 */
export async function scanTrackers(
  path: string,
  opts: {
    following?: boolean;
    /** Metric rows per chunk of an MLflow SQLite run (MLFLOW_STEPS_PROGRAM); tests make it small. */
    mlflowChunkRows?: number;
  } = {},
): Promise<TrackerScan> {
  const st = await stat(path);
  const isDir = st.isDirectory();
  const files = isDir ? await listTree(path) : [path];
  const wandb = new Map<string, WandbFile[]>();
  const runs: TrackerRun[] = [];
  const others: string[] = [];
  // An older W&B client's run folder (no .wandb file): its history and config.yaml, found by content, by folder.
  const oldHistory = new Map<string, string>();
  const oldConfig = new Map<string, string>();
  for (const f of files) {
    let head = await readHead(f, 4096);
    if (head.length >= 7 && head[0] === 0x3a && head[1] === 0x57 && head[2] === 0x26 && head[3] === 0x42) {
      const w = await wandbHead(f);
      if (!w) {
        others.push(f);
        continue;
      }
      const list = wandb.get(w.runId) ?? [];
      list.push(w);
      wandb.set(w.runId, list);
      continue;
    }
    if (isSqlite(head)) {
      const r = sqliteRuns(f, opts.mlflowChunkRows ?? MLFLOW_CHUNK_ROWS);
      if (r) runs.push(...r);
      else others.push(f);
      continue;
    }
    // A W&B history row with 100 metrics is a few KB: read on to its first line's end.
    if (isDir && head.length === 4096 && head[0] === 0x7b && !head.includes(0x0a)) head = await readHead(f, 256 * 1024);
    const text = new TextDecoder().decode(head);
    if (isMlflowRunMeta(text)) {
      const r = await mlflowFileRun(f);
      if (r) runs.push(r);
      continue;
    }
    if (isDir) {
      const d = dirname(f);
      // Two history-shaped files in one folder (a history and a one-line summary): W&B's own name tells.
      if (isWandbHistoryHead(text)) {
        if (!oldHistory.has(d) || basename(f) === 'wandb-history.jsonl' || basename(oldHistory.get(d)!) === 'wandb-summary.json')
          oldHistory.set(d, f);
      } else if (isWandbConfigYaml(text)) oldConfig.set(d, f);
    }
    others.push(f);
  }
  // MLflow file-store runs own their metric / param / tag files.
  const owned = new Set(runs.filter((r) => r.format === 'mlflow-file').map((r) => dirname(r.files[0]) + sep));
  const wandbDirs = new Set([...wandb.values()].flatMap((l) => l.map((w) => dirname(w.path))));
  for (const [d, history] of oldHistory) {
    const config = oldConfig.get(d);
    // A modern run folder keeps its config.yaml and summary (which has `_step` too) in files/ below its .wandb
    // file: that run is the .wandb file's. A summary alone is no history.
    const underModern = [...wandbDirs].some((w) => d === w || d.startsWith(w + sep));
    if (!config || underModern || basename(history) === 'wandb-summary.json') continue;
    runs.push(await wandbFilesRun(d, history, config));
    owned.add(d + sep);
  }
  const rest = others.filter((f) => ![...owned].some((d) => f.startsWith(d)));
  for (const list of wandb.values()) runs.push(wandbRun(list, opts.following ?? false));
  return { runs, others: rest };
}

/** One line per tracker with its run count, e.g. `wandb: 3 runs, mlflow-sqlite: 2 runs`. */
export function trackerCounts(runs: readonly TrackerRun[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of runs) out[r.format] = (out[r.format] ?? 0) + 1;
  return out;
}
