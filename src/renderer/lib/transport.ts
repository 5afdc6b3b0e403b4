/**
 * The renderer's API client. One interface (`ArlArenaApi`, src/shared/api.ts), two transports:
 *  - Electron: the preload puts the bridge on `window.arlarena` (contextBridge → one IPC channel);
 *  - browser mode (`arlarena serve`): HTTP POST for calls and one WebSocket for events, authenticated with the
 *    launch token the server printed in the URL fragment (`#token=…`).
 * Neither ever throws or rejects from `call`: failures come back as typed error Results.
 */
import type { ApiEventName, ApiEventPayload, ApiInput, ApiMethodName, ApiOutput, ArlArenaApi } from '../../shared/api';
import { err, type Result } from '../../shared/result';

declare global {
  interface Window {
    /** Set by the Electron preload; absent in browser mode. */
    readonly arlarena?: ArlArenaApi;
  }
}

export const TOKEN_HEADER = 'x-arlarena-token';
const TOKEN_KEY = 'arlarena.token';

/** The WebSocket surface we use (the browser's, or `ws` in Node tests). */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(): void;
  onopen: ((ev: unknown) => void) | null;
  onclose: ((ev: unknown) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
}

export interface BrowserClientOptions {
  /** e.g. `http://127.0.0.1:41234` */
  readonly origin: string;
  /** This launch's token; null gives UNAUTHORIZED results that say how to get one. */
  readonly token: string | null;
  readonly fetch?: typeof fetch;
  readonly createWebSocket?: (url: string, protocols: string[]) => WebSocketLike;
  /** Reconnect delays grow from this to 10 s (default 500 ms). */
  readonly reconnectMs?: number;
}

export interface BrowserClient extends ArlArenaApi {
  /** True while the event socket is open. */
  readonly connected: boolean;
  /** Closes the event socket and stops reconnecting. */
  close(): void;
}

function isResult(value: unknown): value is Result<unknown> {
  if (value === null || typeof value !== 'object') return false;
  const v = value as { ok?: unknown; error?: { code?: unknown; message?: unknown } };
  return v.ok === true ? 'value' in v : v.ok === false && typeof v.error?.code === 'string' && typeof v.error?.message === 'string';
}

/** The launch token: from the URL fragment (`#token=…`, kept so reloads work) or this tab's session storage. */
export function readLaunchToken(hash: string, storage: Pick<Storage, 'getItem' | 'setItem'> | null): string | null {
  const match = /(?:^#|[#&?])token=([A-Za-z0-9_-]+)/.exec(hash);
  if (match) {
    try {
      storage?.setItem(TOKEN_KEY, match[1]);
    } catch {
      // storage may be disabled; the fragment still works
    }
    return match[1];
  }
  try {
    return storage?.getItem(TOKEN_KEY) ?? null;
  } catch {
    return null;
  }
}

export function createBrowserClient(options: BrowserClientOptions): BrowserClient {
  const doFetch = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
  const makeSocket =
    options.createWebSocket ?? ((url: string, protocols: string[]) => new WebSocket(url, protocols) as unknown as WebSocketLike);
  const token = options.token;
  const listeners = new Map<ApiEventName, Set<(payload: unknown) => void>>();
  let socket: WebSocketLike | null = null;
  let open = false;
  let closed = false;
  let retry = options.reconnectMs ?? 500;
  let retryTimer: ReturnType<typeof setTimeout> | null = null;

  const send = (msg: unknown) => {
    if (socket && open) socket.send(JSON.stringify(msg));
  };

  const connect = () => {
    if (closed || socket || token === null || listeners.size === 0) return;
    const wsUrl = `${options.origin.replace(/^http/, 'ws')}/api/events`;
    let ws: WebSocketLike;
    try {
      ws = makeSocket(wsUrl, ['arlarena', `token.${token}`]);
    } catch {
      scheduleReconnect();
      return;
    }
    socket = ws;
    ws.onopen = () => {
      open = true;
      retry = options.reconnectMs ?? 500;
      for (const event of listeners.keys()) send({ type: 'subscribe', event });
    };
    ws.onmessage = (ev) => {
      let msg: { type?: string; event?: ApiEventName; payload?: unknown };
      try {
        msg = JSON.parse(String(ev.data));
      } catch {
        return;
      }
      if (msg.type !== 'event' || !msg.event) return;
      for (const listener of [...(listeners.get(msg.event) ?? [])]) {
        try {
          listener(msg.payload);
        } catch (e) {
          console.error(`[arlarena] a ${msg.event} listener threw`, e);
        }
      }
    };
    ws.onerror = () => {
      // onclose follows and reconnects
    };
    ws.onclose = () => {
      socket = null;
      open = false;
      scheduleReconnect();
    };
  };

  const scheduleReconnect = () => {
    if (closed || retryTimer || listeners.size === 0) return;
    retryTimer = setTimeout(() => {
      retryTimer = null;
      connect();
    }, retry);
    retry = Math.min(retry * 2, 10_000);
  };

  return {
    transport: 'browser',
    get connected() {
      return open;
    },
    async call<M extends ApiMethodName>(method: M, input?: ApiInput<M>): Promise<Result<ApiOutput<M>>> {
      if (token === null) {
        return err('UNAUTHORIZED', 'no launch token: this page was not opened from the URL "arlarena serve" printed', {
          hint: 'open the full URL printed by arlarena serve / npm start (it ends in #token=…)',
        });
      }
      let response: Response;
      try {
        response = await doFetch(`${options.origin}/api/call`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', [TOKEN_HEADER]: token },
          body: JSON.stringify({ method, input }),
          cache: 'no-store',
        });
      } catch (e) {
        return err('UNAVAILABLE', `cannot reach the lab server at ${options.origin} (${e instanceof Error ? e.message : String(e)})`, {
          hint: 'is "arlarena serve" still running? Restart it and open the new URL.',
        });
      }
      let body: unknown;
      try {
        body = await response.json();
      } catch {
        return err('INTERNAL', `the lab server answered ${method} with HTTP ${response.status} and no readable JSON`);
      }
      if (!isResult(body))
        return err('INTERNAL', `the lab server answered ${method} with HTTP ${response.status} and something that is not a Result`);
      return body as Result<ApiOutput<M>>;
    },
    subscribe<E extends ApiEventName>(event: E, listener: (payload: ApiEventPayload<E>) => void): () => void {
      let set = listeners.get(event);
      const first = !set;
      if (!set) listeners.set(event, (set = new Set()));
      const fn = listener as (payload: unknown) => void;
      set.add(fn);
      if (first) {
        if (open) send({ type: 'subscribe', event });
        else connect();
      }
      let active = true;
      return () => {
        if (!active) return;
        active = false;
        const current = listeners.get(event);
        current?.delete(fn);
        if (current && current.size === 0) {
          listeners.delete(event);
          send({ type: 'unsubscribe', event });
        }
      };
    },
    close() {
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
      retryTimer = null;
      socket?.close();
      socket = null;
      open = false;
    },
  };
}

let singleton: ArlArenaApi | null = null;

/** The API for this page: the Electron bridge when present, else the browser-mode client. */
export function createTransport(): ArlArenaApi {
  if (singleton) return singleton;
  if (window.arlarena) return (singleton = window.arlarena);
  const session = (): Storage | null => {
    try {
      return window.sessionStorage;
    } catch {
      return null;
    }
  };
  // The token in the fragment is used at once and remembered for this tab when the page is next idle: the
  // first sessionStorage access waits on the browser process (~8 ms here), and this runs before the page's
  // first requests (main.ts).
  const fromHash = readLaunchToken(window.location.hash, null);
  if (fromHash !== null) {
    const remember = () => void readLaunchToken(window.location.hash, session());
    if (typeof requestIdleCallback === 'function') requestIdleCallback(remember, { timeout: 2000 });
    else setTimeout(remember, 0);
  }
  singleton = createBrowserClient({ origin: window.location.origin, token: fromHash ?? readLaunchToken('', session()) });
  return singleton;
}
