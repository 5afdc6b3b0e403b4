import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localRows, sqliteAside, sqliteRowsAside } from './sqliteRowsAside';
import { openReadOnly } from './sqliteReadOnly';

// A plain table (not a tracker's format): what is tested is the reading thread, its batches and its errors.
const Database = createRequire(import.meta.url)('better-sqlite3') as new (p: string) => {
  exec(sql: string): void;
  prepare(sql: string): { run(...a: unknown[]): void };
  close(): void;
};
let dir: string;
let db: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'arl-rows-aside-'));
  db = join(dir, 't.db');
  const w = new Database(db);
  w.exec('CREATE TABLE t (id INTEGER, w INTEGER, s TEXT, x REAL)');
  const ins = w.prepare('INSERT INTO t VALUES (?, ?, ?, ?)');
  w.exec('BEGIN');
  for (let i = 0; i < 5000; i++) ins.run(i, 1 + (i % 3), `row ${i}`, i / 3);
  w.exec('COMMIT');
  w.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('sqliteRowsAside', () => {
  it('gives every row in order, in batches of the weight asked, values as SQLite holds them', async () => {
    const batches: unknown[][][] = [];
    for await (const b of sqliteRowsAside(db, 'SELECT id, w, s, x FROM t WHERE id >= ? ORDER BY id', [0], {
      weightColumn: 1,
      batchWeight: 1000,
      ahead: 1,
    }))
      batches.push(b);
    const rows = batches.flat();
    expect(rows.map((r) => r[0])).toEqual(Array.from({ length: 5000 }, (_, i) => i));
    expect(rows[7]).toEqual([7, 2, 'row 7', 7 / 3]);
    // Every batch but the last reaches the weight, and only just.
    for (const b of batches.slice(0, -1)) {
      const w = b.reduce((sum, r) => sum + (r[1] as number), 0);
      expect(w).toBeGreaterThanOrEqual(1000);
      expect(w - (b.at(-1)![1] as number)).toBeLessThan(1000);
    }
  });

  it('names the database and SQLite’s error, and stops cleanly when the caller stops early', async () => {
    await expect(async () => {
      for await (const _ of sqliteRowsAside(db, 'SELECT nope FROM t', [], { weightColumn: -1, batchWeight: 10 })) void _;
    }).rejects.toThrow(/t\.db: no such column: nope/);
    await expect(async () => {
      for await (const _ of sqliteRowsAside(join(dir, 'missing.db'), 'SELECT 1', [], { weightColumn: -1, batchWeight: 10 })) void _;
    }).rejects.toThrow(/missing\.db/);
    let seen = 0;
    for await (const b of sqliteRowsAside(db, 'SELECT id FROM t', [], { weightColumn: -1, batchWeight: 100, ahead: 1 })) {
      seen += b.length;
      if (seen >= 300) break;
    }
    expect(seen).toBe(300);
  });

  it('answers every query of one connection as the database was at the first, on the thread and on the caller’s', async () => {
    // WAL: a writer commits while the reader's transaction is open (a rollback journal would make it wait).
    const path = join(dir, 'wal.db');
    const w = new Database(path);
    w.exec('PRAGMA journal_mode = WAL; CREATE TABLE t (id INTEGER); INSERT INTO t VALUES (1), (2), (3)');
    const conn = openReadOnly(path);
    try {
      for (const src of [sqliteAside(path), localRows(conn)]) {
        try {
          const [[seen]] = await src.all('SELECT count(*) FROM t WHERE id > ?', [0]);
          w.exec(`INSERT INTO t VALUES (${(seen as number) + 1})`);
          expect(await src.all('SELECT count(*) FROM t', [])).toEqual([[seen]]);
          const batches: unknown[][][] = [];
          const queries = [
            { sql: 'SELECT id FROM t WHERE id <= $n ORDER BY id', params: [{ n: 2 }] },
            { sql: 'SELECT id FROM t WHERE id > $n AND id <= 3 ORDER BY id', params: [{ n: 2 }] },
          ];
          for await (const b of src.stream(queries, { weightColumn: -1, batchWeight: 2 })) batches.push(b);
          expect(batches).toEqual([[[1], [2]], [[3]]]);
        } finally {
          await src.close();
        }
      }
      // A connection opened after the insert sees it.
      const later = sqliteAside(path);
      expect(await later.all('SELECT count(*) FROM t', [])).toEqual([[5]]);
      await later.close();
    } finally {
      conn.close();
      w.close();
    }
  });

  it('runs a program of its own on the thread: its rows in batches, its marks in their place', async () => {
    const program = `
      const q = db.prepare('SELECT id, w FROM t WHERE id >= ? AND id < ? ORDER BY id').raw(true);
      return (function* () {
        yield* q.iterate(0, 5);
        yield 'half';
        if (args.fail) db.prepare('SELECT nope FROM t');
        yield* q.iterate(args.from, args.to);
      })();`;
    const src = sqliteAside(db, { program });
    try {
      const items = [];
      for await (const item of src.run({ from: 5, to: 8 }, { weightColumn: -1, batchWeight: 2 })) items.push(item);
      expect(items).toEqual([
        {
          rows: [
            [0, 1],
            [1, 2],
          ],
        },
        {
          rows: [
            [2, 3],
            [3, 1],
          ],
        },
        { rows: [[4, 2]] },
        { mark: 'half' },
        {
          rows: [
            [5, 3],
            [6, 1],
          ],
        },
        { rows: [[7, 2]] },
      ]);
      await expect(async () => {
        for await (const _ of src.run({ fail: true }, { weightColumn: -1, batchWeight: 2 })) void _;
      }).rejects.toThrow(/t\.db: no such column: nope/);
    } finally {
      await src.close();
    }
  });
});
