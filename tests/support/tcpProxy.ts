/**
 * A plain TCP relay on 127.0.0.1 between the lab and a real server (the Ray head's dashboard), so a test can cut
 * the connection and bring it back: `drop()` destroys every open connection and stops listening (new connections
 * are refused, as for a head that went away), `restore()` listens on the same port again. Bytes are passed
 * through untouched, so the head answers every request itself; this is not a mock.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  readonly url: string;
  readonly port: number;
  /** Connections accepted so far. */
  connections(): number;
  /** Bytes relayed from the server to the client so far. */
  bytesDown(): number;
  drop(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let accepted = 0;
  let down = 0;
  const serve = (): Server =>
    createServer((client) => {
      accepted++;
      const upstream = connect(target.port, target.host);
      open.add(client);
      open.add(upstream);
      upstream.on('data', (d: Buffer) => (down += d.length));
      client.pipe(upstream);
      upstream.pipe(client);
      const end = () => {
        client.destroy();
        upstream.destroy();
        open.delete(client);
        open.delete(upstream);
      };
      client.on('error', end);
      upstream.on('error', end);
      client.on('close', end);
      upstream.on('close', end);
    });
  let server: Server | null = serve();
  const listen = (s: Server, port: number) =>
    new Promise<number>((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        const a = s.address();
        resolve(typeof a === 'object' && a ? a.port : port);
      });
    });
  const port = await listen(server, 0);
  const stopListening = async () => {
    const s = server;
    server = null;
    for (const sock of open) sock.destroy();
    open.clear();
    if (s) await new Promise<void>((r) => s.close(() => r()));
  };
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    connections: () => accepted,
    bytesDown: () => down,
    drop: stopListening,
    restore: async () => {
      if (server) return;
      server = serve();
      await listen(server, port);
    },
    close: stopListening,
  };
}
