/**
 * Read-only SQLite for trackers' databases (MLflow's `mlflow.db`, Trackio's `<project>.db`), through
 * better-sqlite3 (major 12: the last that runs on Node 20).
 *
 * Opened `readonly` with `fileMustExist`, so the lab never creates, migrates or writes a tracker's database, and
 * with a busy timeout, so a read that meets the writer's lock waits for it instead of failing (Trackio writes in
 * WAL mode, where readers never block the writer; MLflow's default rollback journal locks briefly per commit).
 */
import { open } from 'node:fs/promises';
import { createRequire } from 'node:module';

/** The part of better-sqlite3's API this lab uses (the package ships no types). */
export interface SqliteStatement {
  all(...params: unknown[]): unknown[];
  get(...params: unknown[]): unknown;
  iterate(...params: unknown[]): IterableIterator<unknown>;
  run(...params: unknown[]): unknown;
  raw(on?: boolean): SqliteStatement;
}

export interface SqliteDb {
  prepare(sql: string): SqliteStatement;
  pragma(sql: string, opts?: { simple?: boolean }): unknown;
  close(): void;
}

type SqliteCtor = new (path: string, opts: { readonly: boolean; fileMustExist: boolean; timeout: number }) => SqliteDb;

let ctor: SqliteCtor | null = null;

/** The first 16 bytes of every SQLite 3 database file. */
export const SQLITE_MAGIC = 'SQLite format 3\u0000';

export function isSqlite(head: Uint8Array): boolean {
  if (head.length < 16) return false;
  for (let i = 0; i < 16; i++) if (head[i] !== SQLITE_MAGIC.charCodeAt(i)) return false;
  return true;
}

/** How long a read waits for a writer's lock before SQLite answers SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 10_000;

export function openReadOnly(path: string, busyMs = BUSY_TIMEOUT_MS): SqliteDb {
  if (ctor === null) {
    const require = createRequire(import.meta.url);
    try {
      ctor = require('better-sqlite3') as SqliteCtor;
    } catch (e) {
      // An optional dependency: npm ci goes on when its native build fails (no compiler, no Node headers).
      throw new Error(
        `reading ${path} needs the SQLite reader better-sqlite3, which is not installed or did not build here ` +
          `(${e instanceof Error ? e.message.split('\n')[0] : String(e)}); run \`bash scripts/setup.sh\` or \`npm rebuild better-sqlite3\` ` +
          '(it compiles with node-gyp: a C++ compiler and your Node headers, e.g. npm_config_nodedir=/usr)',
      );
    }
  }
  return new ctor(path, { readonly: true, fileMustExist: true, timeout: busyMs });
}

/** SQLite's own errors: better-sqlite3's SqliteError (and the reading thread's copy of one) carry SQLite's result code. */
export function isSqliteError(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_');
}

/**
 * A tracker's database that SQLite could not read (SQLITE_CORRUPT on a truncated or partly copied file,
 * SQLITE_NOTADB, …), naming the file: SQLite's own error names neither it nor what to do. `importedBefore`: the runs
 * an import stored before it met the file (they stay).
 */
export class UnreadableDbError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
    readonly importedBefore: readonly string[] = [],
    /** SQLite's result code (SQLITE_CORRUPT, SQLITE_BUSY, …), when it gave one. */
    readonly code: string | null = null,
  ) {
    super(`${path} could not be read as a SQLite database (${reason})`);
    this.name = 'UnreadableDbError';
  }

  /**
   * The file is whole but its writer holds it locked past the busy timeout (SQLITE_BUSY, SQLITE_LOCKED and their
   * extended codes): reading it again later works, so it is not to be reported as damaged.
   */
  get locked(): boolean {
    return this.code !== null && /^SQLITE_(BUSY|LOCKED)(_|$)/.test(this.code);
  }

  /** `e` (a SQLite error met reading `path`) as an UnreadableDbError; SQLite's message without the path the reading thread puts first. */
  static of(path: string, e: unknown, importedBefore: readonly string[] = []): UnreadableDbError {
    if (e instanceof UnreadableDbError) return new UnreadableDbError(e.path, e.reason, importedBefore, e.code);
    const first = String((e as Error).message ?? e).split('\n')[0];
    const code = (e as { code?: unknown } | null)?.code;
    return new UnreadableDbError(
      path,
      first.startsWith(`${path}: `) ? first.slice(path.length + 2) : first,
      importedBefore,
      typeof code === 'string' ? code : null,
    );
  }
}

/** Table name → its column names. */
export function tablesOf(db: SqliteDb): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const names = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
  for (const { name } of names) {
    const cols = db.prepare(`PRAGMA table_info("${name.replace(/"/g, '""')}")`).all() as { name: string }[];
    out.set(name, new Set(cols.map((c) => c.name)));
  }
  return out;
}

/** Whether `path` is a file starting with SQLite's header (by content, never by name); a folder or a missing file: false. */
export async function isSqliteDbFile(path: string): Promise<boolean> {
  const fh = await open(path, 'r').catch(() => null);
  if (!fh) return false;
  try {
    const buf = new Uint8Array(16);
    const { bytesRead } = await fh.read(buf, 0, 16, 0);
    return isSqlite(buf.subarray(0, bytesRead));
  } catch {
    return false; // a folder (EISDIR)
  } finally {
    await fh.close();
  }
}
