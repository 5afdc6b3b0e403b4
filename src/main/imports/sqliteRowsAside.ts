/**
 * One read-only SQLite query run on a worker thread, its rows handed to the caller in batches, so SQLite's own
 * work (scanning, sorting, building the rows' text) runs beside the caller's instead of before it: the MLflow
 * import's query (trackers.ts MLFLOW_STEPS_SQL) is ~0.55 CPU s per million metric rows in SQLite alone, and the
 * import's mapping, detector and store writes took as long again on the same thread.
 *
 * The worker opens the database as openReadOnly does (readonly, fileMustExist, the busy timeout that waits out a
 * writer's lock), runs the statement with `.raw()` and posts a batch every `batchWeight` (summed from each row's
 * `weightColumn`, e.g. its metric rows). At most `ahead` batches wait unread: the worker blocks on a shared counter
 * until the caller has taken one, so memory stays bounded whatever the run's size. Rows are plain values (numbers,
 * strings, null), copied across by postMessage. Stopping early (a `return` or throw out of the loop) ends the
 * worker.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** The worker's body (CommonJS, evaluated: no file of its own to find in a bundled build). */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { modulePath, path, busyMs, sql, params, weightColumn, batchWeight, credits } = workerData;
const free = new Int32Array(credits);
function send(message) {
  while (Atomics.load(free, 0) <= 0) Atomics.wait(free, 0, 0);
  Atomics.sub(free, 0, 1);
  parentPort.postMessage(message);
}
let db;
try {
  const Database = require(modulePath);
  db = new Database(path, { readonly: true, fileMustExist: true, timeout: busyMs });
  db.pragma('cache_size = -2000');
  let batch = [];
  let weight = 0;
  for (const row of db.prepare(sql).raw(true).iterate(...params)) {
    batch.push(row);
    weight += weightColumn >= 0 ? row[weightColumn] : 1;
    if (weight >= batchWeight) {
      send({ rows: batch });
      batch = [];
      weight = 0;
    }
  }
  send({ rows: batch, done: true });
} catch (e) {
  parentPort.postMessage({ error: String(e && e.message ? e.message : e), code: e && e.code });
} finally {
  if (db) db.close();
}
`;

export interface RowsAsideOptions {
  /** Column whose values add up to a batch's weight (-1: each row weighs 1). */
  readonly weightColumn: number;
  /** A batch is posted once its rows weigh this much. */
  readonly batchWeight: number;
  /** Batches the worker may post before the caller has read them. */
  readonly ahead?: number;
  /** Busy timeout (ms) while a writer holds the database's lock, as openReadOnly's. */
  readonly busyMs?: number;
}

/** The rows of `sql` with `params` over the database at `path`, read on a worker thread, in batches. */
export async function* sqliteRowsAside(
  path: string,
  sql: string,
  params: readonly unknown[],
  opts: RowsAsideOptions,
): AsyncGenerator<unknown[][], void, undefined> {
  const credits = new SharedArrayBuffer(4);
  const free = new Int32Array(credits);
  free[0] = opts.ahead ?? 2;
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    // Its rows die young and are copied out: a small young generation keeps its heap (and the RSS) small. The old
    // generation's cap leaves room for batches of long keys (65,536 rows of MLflow's longest, 250 characters, ~20 MB).
    resourceLimits: { maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: 256 },
    workerData: {
      modulePath: createRequire(import.meta.url).resolve('better-sqlite3'),
      path,
      busyMs: opts.busyMs ?? 10_000,
      sql,
      params,
      weightColumn: opts.weightColumn,
      batchWeight: opts.batchWeight,
      credits,
    },
  });
  type Message = { rows?: unknown[][]; done?: boolean; error?: string; code?: string; exit?: number };
  const queue: Message[] = [];
  let wake: (() => void) | null = null;
  const push = (m: Message): void => {
    queue.push(m);
    wake?.();
    wake = null;
  };
  worker.on('message', push);
  worker.on('error', (e) => push({ error: e.message }));
  // Its messages all arrive before its exit: an exit read before `done` is a thread that stopped early.
  worker.on('exit', (code) => push({ exit: code }));
  try {
    for (;;) {
      if (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      const m = queue.shift() as Message;
      if (m.error !== undefined) throw Object.assign(new Error(`${path}: ${m.error}`), m.code ? { code: m.code } : {});
      if (m.exit !== undefined) throw new Error(`${path}: the SQLite reading thread stopped before the last rows (exit code ${m.exit})`);
      // The batch is ours now: the worker may read one more.
      Atomics.add(free, 0, 1);
      Atomics.notify(free, 0);
      if (m.rows && m.rows.length > 0) yield m.rows;
      if (m.done) return;
    }
  } finally {
    // Stopped early, the worker may be waiting for room: let it go on to its end, then end it.
    Atomics.store(free, 0, 1 << 30);
    Atomics.notify(free, 0);
    worker.removeAllListeners('exit');
    await worker.terminate();
  }
}
