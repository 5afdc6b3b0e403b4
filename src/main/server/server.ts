/**
 * Browser mode: the same main-side services behind HTTP + WebSocket on 127.0.0.1, for headless workstations and
 * the end-to-end tests.
 *
 *   POST /api/call                 {"method": "runs.list", "input": {…}} → a Result (JSON), always
 *   GET  /api/events  (WebSocket)  {"type":"subscribe","event":"run.metrics"} → {"type":"event",…}
 *   GET  /api/download/<id>        a file a handler published (e.g. an exported bundle)
 *   GET  /…                        the built renderer (out/renderer), with a strict CSP
 *
 * Every API request carries this launch's random token: header `X-ArlArena-Token` (or `Authorization: Bearer`),
 * or the WebSocket subprotocol `token.<token>` — never in a URL: a download link is `/api/download/<id>`, which
 * the page fetches with the header (the token was in its query string). The page gets it from the URL printed
 * at start (`#token=…`: a fragment never reaches the server or its logs). Requests without it → 401, a Host
 * header that is not ours → 403 (DNS rebinding), an API request with a foreign Origin → 403, malformed JSON or
 * an argument nested deeper than 64 levels → VALIDATION, a body over the limit → 413.
 * No request can crash the process: every path ends in a response.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { basename, extname, join, normalize, resolve, sep } from 'node:path';
import { WebSocketServer, type WebSocket } from 'ws';
import { isApiEvent, type ApiEventName } from '../../shared/api';
import { err, type ApiError, type Result } from '../../shared/result';
import type { EventBus } from '../app/events';
import type { Router } from '../api/router';
import { MAX_UPLOAD_BYTES } from '../api/handlers/imports';
import { defaultThrottleMs } from '../api/throttle';
import type { CallContext } from '../api/types';
import { rendererCsp } from './csp';

export const TOKEN_HEADER = 'x-arlarena-token';
export const WS_PATH = '/api/events';
export const CALL_PATH = '/api/call';
const WS_PROTOCOL = 'arlarena';
const MAX_WS_BUFFERED_BYTES = 16 * 1024 * 1024;
/** imports.file's upload limit as base64 in a JSON body, plus room for the rest of the call. */
export const DEFAULT_MAX_BODY_BYTES = Math.ceil(MAX_UPLOAD_BYTES / 3) * 4 + 1024 * 1024;

export interface ServerOptions {
  readonly router: Router;
  readonly bus: EventBus;
  /** Built renderer (out/renderer); null or missing → a page saying how to build it. */
  readonly staticDir: string | null;
  readonly host?: string;
  /** 0 or absent → a random free port. */
  readonly port?: number;
  /** Fixed token for tests; default: 32 random bytes, new per launch. */
  readonly token?: string;
  /**
   * Largest accepted request body (default: the largest upload imports.file takes, as base64, plus 1 MiB —
   * bundle imports and uploads are the big calls). Larger → 413.
   */
  readonly maxBodyBytes?: number;
  /**
   * A body past this size (default 8 MiB) is a large request: only `maxLargeRequests` (default 1) are read and
   * handled at once, each costing a few times its size in memory; another arriving meanwhile → 503 + Retry-After.
   */
  readonly largeBodyBytes?: number;
  readonly maxLargeRequests?: number;
  /**
   * Folders whose files API calls may name by path (imports.path, follow.start): `arlarena serve --allow-dir DIR`.
   * None by default: a page then imports only what the user uploads.
   */
  readonly allowDirs?: readonly string[];
  readonly log?: (message: string) => void;
}

export interface RunningServer {
  /** What a browser opens: origin + `#token=…`. */
  readonly url: string;
  readonly origin: string;
  readonly host: string;
  readonly port: number;
  readonly token: string;
  close(): Promise<void>;
}

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * A built asset whose name carries its content hash (Vite's `assets/<name>-<hash>.<ext>`): its bytes never change
 * under that name, so the browser may keep it for good. That lets a page opened again (a Compare link in a new
 * tab) take the app's and ECharts' scripts from the cache without a request, and lets Chromium use its compiled
 * code cache for them, which it does only for scripts served from the HTTP cache. Everything else (index.html,
 * the API) is fetched afresh.
 */
const HASHED_ASSET = /^\/assets\/[^/]+-[A-Za-z0-9_-]{8}\.(?:js|mjs|css|wasm|woff2?|png|svg)$/;
export const IMMUTABLE_CACHE = 'public, max-age=31536000, immutable';

function sameToken(given: string | undefined | null, token: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function tokenFromRequest(req: IncomingMessage): string | undefined {
  const header = req.headers[TOKEN_HEADER];
  if (typeof header === 'string') return header;
  const auth = req.headers.authorization;
  if (auth?.startsWith('Bearer ')) return auth.slice(7).trim();
  return undefined;
}

function isLoopback(host: string): boolean {
  return host === '127.0.0.1' || host === 'localhost' || host === '::1' || host.startsWith('127.');
}

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  const token = options.token ?? randomBytes(32).toString('base64url');
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const largeBody = options.largeBodyBytes ?? 8 * 1024 * 1024;
  const maxLarge = options.maxLargeRequests ?? 1;
  let largeInFlight = 0;
  const log = options.log ?? ((m: string) => console.error(`[serve] ${m}`));
  const staticRoot = options.staticDir && existsSync(join(options.staticDir, 'index.html')) ? resolve(options.staticDir) : null;
  const csp = rendererCsp();
  const downloads = new Map<string, { path: string; fileName: string }>();
  let port = 0;

  const allowedHosts = () => {
    const names = new Set([host, '127.0.0.1', 'localhost', '[::1]']);
    return new Set([...names].map((h) => `${h.includes(':') && !h.startsWith('[') ? `[${h}]` : h}:${port}`));
  };

  const baseHeaders = (res: ServerResponse) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
    res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
  };

  const sendJson = (res: ServerResponse, status: number, body: Result<unknown>, closeAfter = false) => {
    if (res.headersSent) return;
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(text),
      'Cache-Control': 'no-store',
      ...(closeAfter ? { Connection: 'close' } : {}),
    });
    res.end(text);
  };

  const sendError = (
    res: ServerResponse,
    status: number,
    code: ApiError['code'],
    message: string,
    extra: { field?: string; hint?: string } = {},
    closeAfter = false,
  ) => sendJson(res, status, err(code, message, extra), closeAfter);

  const publishDownload = (filePath: string, fileName: string): string => {
    const id = randomBytes(16).toString('base64url');
    downloads.set(id, { path: filePath, fileName });
    return `/api/download/${id}`;
  };
  const ctx: CallContext = { transport: 'browser', publishDownload, importRoots: [...(options.allowDirs ?? [])] };

  /**
   * Reads a body up to the limit; resolves null after answering 413 (too large) or 503 (a large body while
   * `maxLarge` others are in flight) itself. `release` frees the large-request slot the body took, if any; the
   * caller calls it once the answer is sent (parsing and handling a large call cost memory too).
   */
  const readBody = (req: IncomingMessage, res: ServerResponse): Promise<{ body: Buffer; release: () => void } | null> =>
    new Promise((resolveBody) => {
      let holdsSlot = false;
      const release = () => {
        if (holdsSlot) largeInFlight--;
        holdsSlot = false;
      };
      const refuse = (status: 413 | 503) => {
        release();
        if (status === 413)
          sendError(
            res,
            413,
            'VALIDATION',
            `request body is larger than the ${maxBody}-byte limit`,
            { field: '(body)', hint: 'send less data per call' },
            true,
          );
        else {
          res.setHeader('Retry-After', '5');
          sendError(
            res,
            503,
            'UNAVAILABLE',
            `another large request (over ${largeBody} bytes) is being handled; send this one again when it is done`,
            { field: '(body)', hint: 'send large uploads one at a time' },
            true,
          );
        }
        res.on('finish', () => req.socket.destroy());
        resolveBody(null);
      };
      const takeSlot = (): boolean => {
        if (holdsSlot) return true;
        if (largeInFlight >= maxLarge) return false;
        largeInFlight++;
        holdsSlot = true;
        return true;
      };
      const declared = Number(req.headers['content-length']);
      if (Number.isFinite(declared) && declared > maxBody) return refuse(413);
      if (Number.isFinite(declared) && declared > largeBody && !takeSlot()) return refuse(503);
      const chunks: Buffer[] = [];
      let size = 0;
      let done = false;
      req.on('data', (chunk: Buffer) => {
        if (done) return;
        size += chunk.length;
        if (size > maxBody || (size > largeBody && !takeSlot())) {
          done = true;
          chunks.length = 0;
          refuse(size > maxBody ? 413 : 503);
          return;
        }
        chunks.push(chunk);
      });
      req.on('end', () => {
        if (!done) {
          done = true;
          const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
          chunks.length = 0;
          resolveBody({ body, release });
        }
      });
      req.on('error', () => {
        if (!done) {
          done = true;
          release();
          resolveBody(null);
        }
      });
      req.on('close', () => {
        if (!done) {
          done = true;
          release();
          resolveBody(null);
        }
      });
    });

  const handleCall = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST');
      return sendError(res, 405, 'VALIDATION', `${CALL_PATH} takes POST, not ${req.method}`, { field: '(method)' });
    }
    if (!sameToken(tokenFromRequest(req), token)) {
      req.resume();
      return sendError(res, 401, 'UNAUTHORIZED', 'this request does not carry the launch token', {
        hint: `open the URL printed by "arlarena serve" (it ends in #token=…), or send the ${TOKEN_HEADER} header`,
      });
    }
    const type = String(req.headers['content-type'] ?? '');
    if (!type.toLowerCase().startsWith('application/json')) {
      req.resume();
      return sendError(res, 415, 'VALIDATION', `${CALL_PATH} takes application/json, not "${type || 'no content type'}"`, {
        field: '(content-type)',
      });
    }
    const read = await readBody(req, res);
    if (read === null) return;
    try {
      let parsed: unknown;
      try {
        parsed = JSON.parse(read.body.toString('utf8'));
      } catch (e) {
        return sendError(res, 400, 'VALIDATION', `the request body is not valid JSON (${(e as Error).message})`, {
          field: '(body)',
          hint: 'send {"method": "area.verb", "input": {…}}',
        });
      }
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
        return sendError(res, 400, 'VALIDATION', 'the request body must be a JSON object {"method", "input"}', { field: '(body)' });
      }
      const { method, input } = parsed as { method?: unknown; input?: unknown };
      if (method === undefined)
        return sendError(res, 400, 'VALIDATION', 'the request names no method', {
          field: 'method',
          hint: 'send {"method": "area.verb", "input": {…}}',
        });
      const result = await options.router.call(method, input, ctx);
      sendJson(res, 200, result);
    } finally {
      read.release();
    }
  };

  const handleDownload = (req: IncomingMessage, res: ServerResponse, url: URL) => {
    // The token only in a header: a URL ends up in the browser's history and downloads list.
    if (!sameToken(tokenFromRequest(req), token)) {
      return sendError(
        res,
        401,
        'UNAUTHORIZED',
        `a download needs the launch token in the ${TOKEN_HEADER} header (a token in the URL is not accepted)`,
        { hint: "use the Download link in the app, or send the header (curl -H 'X-ArlArena-Token: …')" },
      );
    }
    const entry = downloads.get(url.pathname.slice('/api/download/'.length));
    if (!entry || !existsSync(entry.path)) return sendError(res, 404, 'NOT_FOUND', 'no such download (links last while the server runs)');
    const size = statSync(entry.path).size;
    res.writeHead(200, {
      'Content-Type': 'application/octet-stream',
      'Content-Length': size,
      'Content-Disposition': `attachment; filename="${basename(entry.fileName).replace(/["\\\r\n]/g, '_')}"`,
      'Cache-Control': 'no-store',
    });
    createReadStream(entry.path)
      .on('error', () => res.destroy())
      .pipe(res);
  };

  const handleStatic = (req: IncomingMessage, res: ServerResponse, url: URL) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return sendError(res, 405, 'VALIDATION', `${req.method} is not allowed here`);
    }
    if (!staticRoot) {
      const text = 'ARLArena Lab: the renderer is not built. Run "npm run build" (or "arlarena serve" without --no-build).\n';
      res.writeHead(503, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
      return res.end(req.method === 'HEAD' ? undefined : text);
    }
    let rel: string;
    try {
      rel = decodeURIComponent(url.pathname);
    } catch {
      return sendError(res, 400, 'VALIDATION', 'malformed path');
    }
    if (rel.includes('\0')) return sendError(res, 400, 'VALIDATION', 'malformed path');
    let file = normalize(join(staticRoot, rel));
    if (file !== staticRoot && !file.startsWith(staticRoot + sep)) return sendError(res, 404, 'NOT_FOUND', 'not found');
    let stat = existsSync(file) ? statSync(file) : null;
    if (stat?.isDirectory()) {
      file = join(file, 'index.html');
      stat = existsSync(file) ? statSync(file) : null;
    }
    if (!stat && extname(rel) === '') {
      // Client-side routes fall back to the app shell.
      file = join(staticRoot, 'index.html');
      stat = statSync(file);
    }
    if (!stat || !stat.isFile()) return sendError(res, 404, 'NOT_FOUND', `not found: ${url.pathname}`);
    res.writeHead(200, {
      'Content-Type': MIME[extname(file).toLowerCase()] ?? 'application/octet-stream',
      'Content-Length': stat.size,
      'Content-Security-Policy': csp,
      'Cache-Control': HASHED_ASSET.test(rel) ? IMMUTABLE_CACHE : 'no-cache',
    });
    if (req.method === 'HEAD') return res.end();
    createReadStream(file)
      .on('error', () => res.destroy())
      .pipe(res);
  };

  const server = createServer((req, res) => {
    try {
      baseHeaders(res);
      if (!allowedHosts().has(String(req.headers.host ?? '').toLowerCase())) {
        req.resume();
        return sendError(res, 403, 'UNAUTHORIZED', `unexpected Host header "${String(req.headers.host ?? '')}"`, {
          hint: `open http://${host}:${port}/`,
        });
      }
      const url = new URL(req.url ?? '/', 'http://localhost');
      // A page on another site may make the browser send requests here (with no token they fail, but a stolen or
      // guessed one must not work from there): API calls and downloads from a foreign Origin are refused, as the
      // WebSocket does. No Origin (the CLI, curl) and our own origin pass.
      const origin = req.headers.origin;
      if (
        url.pathname.startsWith('/api/') &&
        origin !== undefined &&
        !allowedHosts().has(origin.replace(/^https?:\/\//, '').toLowerCase())
      ) {
        req.resume();
        return sendError(res, 403, 'UNAUTHORIZED', `requests from the origin "${origin}" are not accepted`, {
          hint: `open http://${host}:${port}/ itself`,
        });
      }
      if (url.pathname === CALL_PATH) {
        handleCall(req, res).catch((e: unknown) => {
          log(`call failed: ${(e as Error).stack ?? String(e)}`);
          sendError(res, 500, 'INTERNAL', 'the server failed to answer this call');
        });
        return;
      }
      if (url.pathname.startsWith('/api/download/')) return handleDownload(req, res, url);
      if (url.pathname.startsWith('/api/')) {
        req.resume();
        return sendError(res, 404, 'NOT_FOUND', `no API endpoint ${url.pathname}; calls go to POST ${CALL_PATH}`);
      }
      return handleStatic(req, res, url);
    } catch (e) {
      log(`request failed: ${(e as Error).stack ?? String(e)}`);
      if (!res.headersSent) sendError(res, 500, 'INTERNAL', 'the server failed to answer this request');
      else res.destroy();
    }
  });
  server.on('clientError', (_e, socket: Socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });
  server.requestTimeout = 120_000;

  // --- WebSocket: live events --------------------------------------------------------------------------
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: 64 * 1024,
    handleProtocols: (protocols) => (protocols.has(WS_PROTOCOL) ? WS_PROTOCOL : false),
  });

  server.on('upgrade', (req, socket, head) => {
    const refuse = (status: number, text: string) => {
      socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    };
    try {
      socket.on('error', () => socket.destroy());
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (url.pathname !== WS_PATH) return refuse(404, 'Not Found');
      if (!allowedHosts().has(String(req.headers.host ?? '').toLowerCase())) return refuse(403, 'Forbidden');
      const origin = req.headers.origin;
      if (origin && !allowedHosts().has(origin.replace(/^https?:\/\//, '').toLowerCase())) return refuse(403, 'Forbidden');
      const offered = String(req.headers['sec-websocket-protocol'] ?? '')
        .split(',')
        .map((p) => p.trim());
      // The token only in the subprotocol: one in the URL would land in logs and history, so it is refused even
      // when it is right.
      if (url.search !== '') return refuse(400, 'Bad Request');
      const given = offered.find((p) => p.startsWith('token.'))?.slice('token.'.length);
      if (!sameToken(given, token)) return refuse(401, 'Unauthorized');
      if (!offered.includes(WS_PROTOCOL)) return refuse(400, 'Bad Request');
      wss.handleUpgrade(req, socket, head, (ws) => onConnection(ws));
    } catch (e) {
      log(`upgrade failed: ${(e as Error).message}`);
      socket.destroy();
    }
  });

  const onConnection = (ws: WebSocket) => {
    const subs = new Map<ApiEventName, () => void>();
    const send = (message: unknown) => {
      if (ws.readyState !== ws.OPEN) return;
      // A page that stopped reading (frozen tab) must not grow our memory without bound: drop it; the
      // client reconnects and re-subscribes.
      if (ws.bufferedAmount > MAX_WS_BUFFERED_BYTES) {
        ws.close(1013, 'too far behind');
        return;
      }
      ws.send(JSON.stringify(message));
    };
    ws.on('message', (data, isBinary) => {
      let msg: { type?: unknown; event?: unknown; throttleMs?: unknown };
      try {
        if (isBinary) throw new Error('binary frames are not accepted');
        msg = JSON.parse(data.toString());
        if (msg === null || typeof msg !== 'object') throw new Error('not an object');
      } catch (e) {
        return send({
          type: 'error',
          error: { code: 'VALIDATION', message: `not a JSON message: ${(e as Error).message}`, field: '(message)' },
        });
      }
      const { type, event } = msg;
      if (type !== 'subscribe' && type !== 'unsubscribe') {
        return send({
          type: 'error',
          error: {
            code: 'VALIDATION',
            message: `unknown message type ${JSON.stringify(type)}; use "subscribe" or "unsubscribe"`,
            field: 'type',
          },
        });
      }
      if (typeof event !== 'string' || !isApiEvent(event)) {
        return send({
          type: 'error',
          event,
          error: { code: 'VALIDATION', message: `${JSON.stringify(event)} is not an API event`, field: 'event' },
        });
      }
      if (type === 'subscribe') {
        if (!subs.has(event)) {
          const throttleMs =
            typeof msg.throttleMs === 'number' && msg.throttleMs >= 0 && msg.throttleMs <= 60_000
              ? msg.throttleMs
              : defaultThrottleMs(event);
          subs.set(
            event,
            options.bus.subscribe(event, (payload) => send({ type: 'event', event, payload }), { throttleMs }),
          );
        }
        send({ type: 'subscribed', event });
      } else {
        subs.get(event)?.();
        subs.delete(event);
        send({ type: 'unsubscribed', event });
      }
    });
    const cleanup = () => {
      for (const off of subs.values()) off();
      subs.clear();
    };
    ws.on('close', cleanup);
    ws.on('error', cleanup);
  };

  await new Promise<void>((resolveListen, rejectListen) => {
    server.once('error', rejectListen);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', rejectListen);
      resolveListen();
    });
  });
  server.on('error', (e) => log(`server error: ${e.message}`));
  port = (server.address() as AddressInfo).port;
  const hostInUrl = host.includes(':') ? `[${host}]` : host;
  const origin = `http://${hostInUrl}:${port}`;
  if (!isLoopback(host)) log(`warning: listening on ${host}, reachable from other machines (the token still guards every API request)`);

  return {
    url: `${origin}/#token=${token}`,
    origin,
    host,
    port,
    token,
    close: () =>
      new Promise<void>((resolveClose) => {
        for (const client of wss.clients) client.terminate();
        wss.close();
        server.close(() => resolveClose());
        server.closeAllConnections();
      }),
  };
}
