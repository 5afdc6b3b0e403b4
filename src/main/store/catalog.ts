/**
 * The run catalog: one lowdb JSON document (runs.json) indexing every run's record.
 *
 * The catalog is an index: each run directory also holds its own run.json, written first, so a catalog that is
 * lost, stale (another process wrote a run) or corrupt is rebuilt from the run directories. Writes go through
 * `DurableJsonFile`, a lowdb adapter that writes temp + fsync + rename (see atomic.ts) and coalesces bursts:
 * while one write is in flight, only the newest pending document is written next.
 */
import { readFile } from 'node:fs/promises';
import { Low, type Adapter } from 'lowdb';
import type { RunRecord } from '../../shared/api';
import { writeFileAtomic } from './atomic';

export const CATALOG_SCHEMA_VERSION = 1;

export interface CatalogData {
  schemaVersion: number;
  runs: Record<string, RunRecord>;
}

export class CatalogCorruptError extends Error {
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`the run catalog ${file} is unreadable (${reason})`);
    this.name = 'CatalogCorruptError';
  }
}

export class DurableJsonFile implements Adapter<CatalogData> {
  private inFlight: Promise<void> | null = null;
  private pending: { data: string; waiters: Array<{ resolve: () => void; reject: (e: unknown) => void }> } | null = null;

  constructor(readonly file: string) {}

  async read(): Promise<CatalogData | null> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw new CatalogCorruptError(this.file, (e as Error).message);
    }
    let obj: unknown;
    try {
      obj = JSON.parse(text);
    } catch (e) {
      throw new CatalogCorruptError(this.file, `not valid JSON: ${(e as Error).message}`);
    }
    if (!obj || typeof obj !== 'object' || typeof (obj as CatalogData).runs !== 'object' || (obj as CatalogData).runs === null) {
      throw new CatalogCorruptError(this.file, 'no "runs" object');
    }
    const version = (obj as CatalogData).schemaVersion;
    if (version !== CATALOG_SCHEMA_VERSION) {
      throw new CatalogCorruptError(this.file, `schema version ${String(version)}, this app reads ${CATALOG_SCHEMA_VERSION}`);
    }
    return obj as CatalogData;
  }

  write(data: CatalogData): Promise<void> {
    const text = JSON.stringify(data);
    if (!this.inFlight) {
      this.inFlight = this.run(text);
      return this.inFlight;
    }
    return new Promise<void>((resolve, reject) => {
      if (!this.pending) this.pending = { data: text, waiters: [] };
      this.pending.data = text;
      this.pending.waiters.push({ resolve, reject });
    });
  }

  private async run(text: string): Promise<void> {
    try {
      await writeFileAtomic(this.file, text);
    } finally {
      const next = this.pending;
      this.pending = null;
      if (next) {
        this.inFlight = this.run(next.data);
        this.inFlight.then(
          () => next.waiters.forEach((w) => w.resolve()),
          (e) => next.waiters.forEach((w) => w.reject(e)),
        );
      } else {
        this.inFlight = null;
      }
    }
  }
}

export function createCatalog(file: string): Low<CatalogData> {
  return new Low<CatalogData>(new DurableJsonFile(file), { schemaVersion: CATALOG_SCHEMA_VERSION, runs: {} });
}
