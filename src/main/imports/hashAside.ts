/**
 * SHA-256 of source files on a worker thread, while the main thread reads and stores their runs: a tracker's
 * store is read whole to hash it (280 MB for a million MLflow metric rows), and doing that on the thread that
 * also parses, maps and writes added its whole time to the import's. One worker per import, files hashed in the
 * order asked, each at most once; `close` ends the worker. Same digest as files.ts `sha256File`.
 */
import { Worker } from 'node:worker_threads';

/** The worker's body (CommonJS, evaluated: no file of its own to find in a bundled build). */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const { closeSync, openSync, readSync } = require('node:fs');
// One buffer read into again and again: a stream's fresh 1 MB buffer per read cost ~0.09 CPU s more for the
// 280 MB of a million MLflow metric rows (new pages to fault in and free), and held up to its GC's pace of them.
const buf = Buffer.allocUnsafe(1 << 20);
parentPort.on('message', ({ id, path }) => {
  let fd = -1;
  try {
    fd = openSync(path, 'r');
    const hash = createHash('sha256');
    for (let n; (n = readSync(fd, buf, 0, buf.length, null)) > 0; ) hash.update(n === buf.length ? buf : buf.subarray(0, n));
    parentPort.postMessage({ id, hex: hash.digest('hex') });
  } catch (e) {
    parentPort.postMessage({ id, error: String(e && e.message ? e.message : e), code: e && e.code });
  } finally {
    if (fd >= 0) closeSync(fd);
  }
});
`;

export class HashAside {
  private worker: Worker | null = null;
  private readonly digests = new Map<string, Promise<string>>();
  private readonly waiting = new Map<number, { resolve: (hex: string) => void; reject: (e: Error) => void }>();
  private next = 1;

  private start(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(WORKER_SOURCE, { eval: true });
    w.on('message', (m: { id: number; hex?: string; error?: string; code?: string }) => {
      const p = this.waiting.get(m.id);
      if (!p) return;
      this.waiting.delete(m.id);
      // Idle, the worker does not keep the process alive (a CLI import exits when its work is done); busy, it does.
      if (this.waiting.size === 0) w.unref();
      if (m.hex !== undefined) p.resolve(m.hex);
      else p.reject(Object.assign(new Error(m.error ?? 'hashing failed'), m.code ? { code: m.code } : {}));
    });
    w.on('error', (e) => this.failAll(e));
    w.on('exit', () => {
      this.worker = null;
      this.failAll(new Error('the hashing worker stopped'));
    });
    this.worker = w;
    return w;
  }

  private failAll(e: Error): void {
    for (const p of this.waiting.values()) p.reject(e);
    this.waiting.clear();
  }

  /** The file's SHA-256 (hex); asked twice, hashed once. */
  sha256(path: string): Promise<string> {
    let d = this.digests.get(path);
    if (d === undefined) {
      const id = this.next++;
      d = new Promise<string>((resolve, reject) => this.waiting.set(id, { resolve, reject }));
      // A rejection nobody awaited yet must not crash the process: it is seen where the digest is awaited.
      d.catch(() => undefined);
      this.digests.set(path, d);
      const w = this.start();
      w.ref();
      w.postMessage({ id, path });
    }
    return d;
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    if (w) await w.terminate();
  }
}
