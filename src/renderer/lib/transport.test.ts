import { describe, expect, it, vi } from 'vitest';
import { createBrowserClient, readLaunchToken, type WebSocketLike } from './transport';

class FakeSocket implements WebSocketLike {
  static all: FakeSocket[] = [];
  readyState = 0;
  sent: unknown[] = [];
  onopen: ((ev: unknown) => void) | null = null;
  onclose: ((ev: unknown) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  constructor(
    readonly url: string,
    readonly protocols: string[],
  ) {
    FakeSocket.all.push(this);
  }
  send(data: string) {
    this.sent.push(JSON.parse(data));
  }
  close() {
    this.readyState = 3;
    this.onclose?.({});
  }
  open() {
    this.readyState = 1;
    this.onopen?.({});
  }
  push(msg: unknown) {
    this.onmessage?.({ data: JSON.stringify(msg) });
  }
}

function jsonResponse(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

describe('readLaunchToken', () => {
  it('reads the token from the fragment and remembers it for this tab', () => {
    const store = new Map<string, string>();
    const storage = { getItem: (k: string) => store.get(k) ?? null, setItem: (k: string, v: string) => void store.set(k, v) };
    expect(readLaunchToken('#token=abc_DEF-123', storage)).toBe('abc_DEF-123');
    expect(readLaunchToken('', storage)).toBe('abc_DEF-123');
    expect(readLaunchToken('#x=1&token=zzz', storage)).toBe('zzz');
    expect(readLaunchToken('', null)).toBeNull();
  });
});

describe('browser client: calls', () => {
  it('POSTs {method, input} with the token header and returns the Result as is', async () => {
    const fetchMock = vi.fn(async () => jsonResponse(200, { ok: true, value: [] }));
    const api = createBrowserClient({ origin: 'http://127.0.0.1:9', token: 'tok', fetch: fetchMock as unknown as typeof fetch });
    const r = await api.call('runs.list', { env: 'sokoban' });
    expect(r).toEqual({ ok: true, value: [] });
    const [url, init] = fetchMock.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe('http://127.0.0.1:9/api/call');
    expect((init.headers as Record<string, string>)['x-arlarena-token']).toBe('tok');
    expect(JSON.parse(String(init.body))).toEqual({ method: 'runs.list', input: { env: 'sokoban' } });
  });

  it('passes error Results through, including 401', async () => {
    const api = createBrowserClient({
      origin: 'http://h',
      token: 'bad',
      fetch: (async () => jsonResponse(401, { ok: false, error: { code: 'UNAUTHORIZED', message: 'no' } })) as unknown as typeof fetch,
    });
    expect(await api.call('app.info')).toEqual({ ok: false, error: { code: 'UNAUTHORIZED', message: 'no' } });
  });

  it('never rejects: network failure → UNAVAILABLE, junk → INTERNAL, no token → UNAUTHORIZED', async () => {
    const down = createBrowserClient({
      origin: 'http://h',
      token: 't',
      fetch: (async () => Promise.reject(new TypeError('fetch failed'))) as unknown as typeof fetch,
    });
    expect(await down.call('app.info')).toMatchObject({ ok: false, error: { code: 'UNAVAILABLE' } });
    const junk = createBrowserClient({
      origin: 'http://h',
      token: 't',
      fetch: (async () => new Response('<html>', { status: 502 })) as unknown as typeof fetch,
    });
    expect(await junk.call('app.info')).toMatchObject({ ok: false, error: { code: 'INTERNAL', message: expect.stringContaining('502') } });
    const notResult = createBrowserClient({
      origin: 'http://h',
      token: 't',
      fetch: (async () => jsonResponse(200, { hello: 1 })) as unknown as typeof fetch,
    });
    expect(await notResult.call('app.info')).toMatchObject({ ok: false, error: { code: 'INTERNAL' } });
    const fetchMock = vi.fn();
    const noToken = createBrowserClient({ origin: 'http://h', token: null, fetch: fetchMock as unknown as typeof fetch });
    expect(await noToken.call('app.info')).toMatchObject({ ok: false, error: { code: 'UNAUTHORIZED' } });
    expect(fetchMock).not.toHaveBeenCalled();
  });
});

describe('browser client: events', () => {
  it('opens one socket with the token subprotocol, subscribes once per event, fans out, unsubscribes', () => {
    FakeSocket.all = [];
    const api = createBrowserClient({ origin: 'http://127.0.0.1:5', token: 'tok', createWebSocket: (u, p) => new FakeSocket(u, p) });
    const a: unknown[] = [];
    const b: unknown[] = [];
    const offA = api.subscribe('runs.changed', (p) => a.push(p));
    const offB = api.subscribe('runs.changed', (p) => b.push(p));
    expect(FakeSocket.all).toHaveLength(1);
    const ws = FakeSocket.all[0];
    expect(ws.url).toBe('ws://127.0.0.1:5/api/events');
    expect(ws.protocols).toEqual(['arlarena', 'token.tok']);
    ws.open();
    expect(ws.sent).toEqual([{ type: 'subscribe', event: 'runs.changed' }]);
    ws.push({ type: 'event', event: 'runs.changed', payload: { runId: 'r1' } });
    ws.push({ type: 'event', event: 'run.alert', payload: { nope: true } });
    expect(a).toEqual([{ runId: 'r1' }]);
    expect(b).toEqual([{ runId: 'r1' }]);
    offA();
    expect(ws.sent).toHaveLength(1);
    offB();
    expect(ws.sent[1]).toEqual({ type: 'unsubscribe', event: 'runs.changed' });
    api.close();
  });

  it('reconnects after the socket drops and re-subscribes', () => {
    vi.useFakeTimers();
    try {
      FakeSocket.all = [];
      const api = createBrowserClient({
        origin: 'http://h',
        token: 't',
        reconnectMs: 100,
        createWebSocket: (u, p) => new FakeSocket(u, p),
      });
      api.subscribe('session.status', () => undefined);
      FakeSocket.all[0].open();
      expect(api.connected).toBe(true);
      FakeSocket.all[0].close();
      expect(api.connected).toBe(false);
      vi.advanceTimersByTime(100);
      expect(FakeSocket.all).toHaveLength(2);
      FakeSocket.all[1].open();
      expect(FakeSocket.all[1].sent).toEqual([{ type: 'subscribe', event: 'session.status' }]);
      api.close();
      vi.advanceTimersByTime(10_000);
      expect(FakeSocket.all).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });
});
