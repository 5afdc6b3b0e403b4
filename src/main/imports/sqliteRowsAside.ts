/**
 * Read-only SQLite queries run on a worker thread, their rows handed to the caller in batches, so SQLite's own
 * work (scanning, sorting, building the rows' text) runs beside the caller's instead of before it: the MLflow
 * import's queries (trackers.ts mlflowStepRows) are ~0.5 CPU s per million metric rows in SQLite alone, and the
 * import's mapping, detector and store writes take as long again on the caller's thread.
 *
 * The worker opens the database as openReadOnly does (readonly, fileMustExist, the busy timeout that waits out a
 * writer's lock) and keeps one read transaction open until it is closed, so every query asked of it sees the
 * database as the first one did (a writer's commits in between are not seen). `all` answers a small query whole;
 * `stream` runs statements one after the other with `.raw()` and posts a batch every `batchWeight` (summed from
 * each row's `weightColumn`, e.g. its metric rows). At most `ahead` batches wait unread: the worker blocks on a
 * shared counter until the caller has taken one, so memory stays bounded whatever the run's size. Rows are plain
 * values (numbers, strings, null), copied across by postMessage. Closing (also stopping a stream early) ends the
 * worker; better-sqlite3 closes its database when the thread ends.
 *
 * `localRows` answers the same calls on the caller's own connection (where no worker can start).
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { SqliteDb } from './sqliteReadOnly';

/** The worker's body (CommonJS, evaluated: no file of its own to find in a bundled build). */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { modulePath, path, busyMs, credits, program } = workerData;
const free = new Int32Array(credits);
const failure = (e) => ({ error: String(e && e.message ? e.message : e), code: e && e.code });
function send(message) {
  while (Atomics.load(free, 0) <= 0) Atomics.wait(free, 0, 0);
  Atomics.sub(free, 0, 1);
  parentPort.postMessage(message);
}
let db = null;
try {
  const Database = require(modulePath);
  db = new Database(path, { readonly: true, fileMustExist: true, timeout: busyMs });
  db.pragma('cache_size = -2000');
  db.exec('BEGIN');
} catch (e) {
  parentPort.postMessage(failure(e));
}
const run = program ? new Function('db', 'args', program) : null;
parentPort.on('message', (m) => {
  if (db === null) return;
  try {
    if (m.all) {
      parentPort.postMessage({ rows: db.prepare(m.sql).raw(true).all(...m.params), done: true });
      return;
    }
    let batch = [];
    let weight = 0;
    const flush = () => {
      if (batch.length > 0) send({ rows: batch, batch: true });
      batch = [];
      weight = 0;
    };
    const rows = m.args !== undefined ? [run(db, m.args)] : m.queries.map((q) => db.prepare(q.sql).raw(true).iterate(...q.params));
    for (const it of rows) {
      for (const row of it) {
        // A program yields rows (arrays) and marks (anything else), which go to the caller in their place.
        if (!Array.isArray(row)) {
          flush();
          send({ mark: row, batch: true });
          continue;
        }
        batch.push(row);
        weight += m.weightColumn >= 0 ? row[m.weightColumn] : 1;
        if (weight >= m.batchWeight) flush();
      }
    }
    send({ rows: batch, batch: true, done: true });
  } catch (e) {
    parentPort.postMessage(failure(e));
  }
});
`;

export interface RowsAsideOptions {
  /** Column whose values add up to a batch's weight (-1: each row weighs 1). */
  readonly weightColumn: number;
  /** A batch is posted once its rows weigh this much. */
  readonly batchWeight: number;
  /** Batches the worker may post before the caller has read them. */
  readonly ahead?: number;
}

export interface SqlQuery {
  readonly sql: string;
  readonly params: readonly unknown[];
}

/** Queries over one database, all seeing it as the first did. */
export interface RowsSource {
  /** Every row of a query (raw arrays): for small answers. */
  all(sql: string, params: readonly unknown[]): Promise<unknown[][]>;
  /** The rows of the queries, one after the other, in batches. */
  stream(queries: readonly SqlQuery[], opts: RowsAsideOptions): AsyncGenerator<unknown[][], void, undefined>;
  close(): Promise<void>;
}

/** What a program's run gives: a batch of its rows, or a mark it yielded between them. */
export type ProgramItem = { readonly rows: unknown[][] } | { readonly mark: unknown };

/** A reading thread that also runs a program of its own (sqliteAside's `program`). */
export interface ProgramSource extends RowsSource {
  /** The program's rows in batches and its marks in their place, for `args`. */
  run(args: unknown, opts: RowsAsideOptions): AsyncGenerator<ProgramItem, void, undefined>;
}

type Message = { rows?: unknown[][]; mark?: unknown; batch?: boolean; done?: boolean; error?: string; code?: string; exit?: number };

/**
 * A worker thread's read-only connection to the database at `path`. `program` is the body of a plain-JS function
 * of (db, args) evaluated on that thread and returning an iterator of rows (arrays) and marks: a read whose next
 * query depends on the last one's rows runs there without a round trip per query, `ahead` batches ahead.
 */
export function sqliteAside(path: string, opts: { ahead?: number; busyMs?: number; program: string }): ProgramSource;
export function sqliteAside(path: string, opts?: { ahead?: number; busyMs?: number }): RowsSource;
export function sqliteAside(path: string, opts: { ahead?: number; busyMs?: number; program?: string } = {}): ProgramSource {
  const credits = new SharedArrayBuffer(4);
  const free = new Int32Array(credits);
  const ahead = opts.ahead ?? 2;
  free[0] = ahead;
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    // Its rows die young and are copied out: a small young generation keeps its heap (and the RSS) small. The old
    // generation's cap leaves room for batches of long keys (65,536 rows of MLflow's longest, 250 characters, ~20 MB).
    resourceLimits: { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 256 },
    workerData: {
      modulePath: createRequire(import.meta.url).resolve('better-sqlite3'),
      path,
      busyMs: opts.busyMs ?? 10_000,
      credits,
      program: opts.program ?? null,
    },
  });
  const queue: Message[] = [];
  let wake: (() => void) | null = null;
  let closed = false;
  const push = (m: Message): void => {
    queue.push(m);
    wake?.();
    wake = null;
  };
  worker.on('message', push);
  worker.on('error', (e) => push({ error: e.message }));
  // Its messages all arrive before its exit: an exit read while an answer is awaited is a thread that stopped early.
  worker.on('exit', (code) => push({ exit: code }));
  const next = async (): Promise<Message> => {
    if (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
    const m = queue.shift() as Message;
    if (m.error !== undefined) throw Object.assign(new Error(`${path}: ${m.error}`), m.code ? { code: m.code } : {});
    if (m.exit !== undefined) throw new Error(`${path}: the SQLite reading thread stopped before the last rows (exit code ${m.exit})`);
    return m;
  };
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    // Stopped early, the worker may be waiting for room: let it go on, then end it.
    Atomics.store(free, 0, 1 << 30);
    Atomics.notify(free, 0);
    worker.removeAllListeners('exit');
    await worker.terminate();
  };
  async function* items(request: object, o: RowsAsideOptions): AsyncGenerator<ProgramItem, void, undefined> {
    Atomics.store(free, 0, o.ahead ?? ahead);
    worker.postMessage({ ...request, weightColumn: o.weightColumn, batchWeight: o.batchWeight });
    let ended = false;
    try {
      for (;;) {
        const m = await next();
        // The batch is ours now: the worker may read one more.
        Atomics.add(free, 0, 1);
        Atomics.notify(free, 0);
        if (m.mark !== undefined) yield { mark: m.mark };
        else if (m.rows && m.rows.length > 0) yield { rows: m.rows };
        if (m.done) {
          ended = true;
          return;
        }
      }
    } finally {
      // A stream left before its end leaves the worker reading on: it is of no further use.
      if (!ended) await close();
    }
  }
  return {
    async all(sql, params) {
      worker.postMessage({ all: true, sql, params });
      return (await next()).rows ?? [];
    },
    async *stream(queries, o) {
      for await (const item of items({ queries }, o)) if ('rows' in item) yield item.rows;
    },
    run(args, o) {
      if (opts.program === undefined) throw new Error('this reading thread was started without a program');
      return items({ args }, o);
    },
    close,
  };
}

/** The same calls on a connection of the caller's thread, in one read transaction until closed. */
export function localRows(db: SqliteDb): RowsSource {
  let open = false;
  const begin = (): void => {
    if (open) return;
    db.prepare('BEGIN').run();
    open = true;
  };
  return {
    async all(sql, params) {
      begin();
      return db
        .prepare(sql)
        .raw(true)
        .all(...params) as unknown[][];
    },
    async *stream(queries, o) {
      begin();
      let batch: unknown[][] = [];
      let weight = 0;
      for (const q of queries) {
        for (const row of db
          .prepare(q.sql)
          .raw(true)
          .iterate(...q.params) as IterableIterator<unknown[]>) {
          batch.push(row);
          weight += o.weightColumn >= 0 ? (row[o.weightColumn] as number) : 1;
          if (weight >= o.batchWeight) {
            yield batch;
            batch = [];
            weight = 0;
          }
        }
      }
      if (batch.length > 0) yield batch;
    },
    async close() {
      if (!open) return;
      open = false;
      db.prepare('COMMIT').run();
    },
  };
}

/** The rows of `sql` with `params` over the database at `path`, read on a worker thread, in batches. */
export async function* sqliteRowsAside(
  path: string,
  sql: string,
  params: readonly unknown[],
  opts: RowsAsideOptions & { busyMs?: number },
): AsyncGenerator<unknown[][], void, undefined> {
  const aside = sqliteAside(path, { ahead: opts.ahead, busyMs: opts.busyMs });
  try {
    yield* aside.stream([{ sql, params }], opts);
  } finally {
    await aside.close();
  }
}
