/**
 * A local HTTP server playing a remote's dashboard (Ray's) for the tests that need no Ray to run, or one that
 * misbehaves as Ray never does: listening on a free port of 127.0.0.1 from before the file's (or describe's) first
 * test until after its last. Its open connections are cut before it closes, since an answer that never ends would
 * keep close() waiting.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';

export interface StandInServer {
  /** `http://127.0.0.1:PORT` (no trailing slash), once the tests run. */
  readonly base: string;
}

/** Registers the hooks (call it at a file's or a describe's top level). */
export function standInServer(handler: RequestListener): StandInServer {
  let server: Server | null = null;
  let base = '';
  beforeAll(async () => {
    const s = createServer(handler);
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    server = s;
    base = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    const s = server;
    if (!s) return;
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  });
  return {
    get base() {
      return base;
    },
  };
}
