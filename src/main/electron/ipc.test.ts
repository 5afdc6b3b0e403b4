import { beforeEach, describe, expect, it, vi } from 'vitest';

// A stand-in for Electron's ipcMain: records what installIpc registers so the test can play the renderer.
const registry = vi.hoisted(() => ({
  handlers: new Map<string, (event: unknown, ...args: unknown[]) => unknown>(),
  listeners: new Map<string, (event: unknown, ...args: unknown[]) => void>(),
}));
vi.mock('electron', () => ({
  ipcMain: {
    handle: (channel: string, fn: (event: unknown, ...args: unknown[]) => unknown) => registry.handlers.set(channel, fn),
    on: (channel: string, fn: (event: unknown, ...args: unknown[]) => void) => registry.listeners.set(channel, fn),
    removeHandler: (channel: string) => registry.handlers.delete(channel),
    removeAllListeners: (channel: string) => registry.listeners.delete(channel),
  },
}));

import { IPC_CALL, IPC_EVENT, IPC_SUBSCRIBE, IPC_UNSUBSCRIBE } from '../../shared/ipcChannels';
import { createHandlers } from '../api/handlers/index';
import { createRouter } from '../api/router';
import { createLab } from '../app/lab';
import { installIpc } from './ipc';

interface FakeContents {
  id: number;
  sent: unknown[][];
  isDestroyed(): boolean;
  send(...args: unknown[]): void;
  once(event: string, fn: () => void): void;
  destroy(): void;
}

function fakeContents(id: number): FakeContents {
  let destroyed = false;
  const onDestroyed: Array<() => void> = [];
  return {
    id,
    sent: [],
    isDestroyed: () => destroyed,
    send(...args) {
      this.sent.push(args);
    },
    once: (event, fn) => {
      if (event === 'destroyed') onDestroyed.push(fn);
    },
    destroy: () => {
      destroyed = true;
      for (const fn of onDestroyed) fn();
    },
  };
}

const APP_URL = 'app://lab/index.html';

const services = createLab({
  dataDir: '/tmp/arlarena-ipc-test',
  computeInfo: async () => ({ training: 'wasm', rollout: 'onnxruntime-cpu', detail: 'test', available: ['wasm'] }),
  insideElectron: true,
});
const bus = services.bus;

let win: FakeContents;
const event = (sender: unknown, url = APP_URL, parent: unknown = null) => ({ sender, senderFrame: { url, parent } });

beforeEach(() => {
  registry.handlers.clear();
  registry.listeners.clear();
  win = fakeContents(1);
  installIpc({
    router: createRouter(createHandlers(services), { onInternalError: () => undefined }),
    bus,
    appContents: () => win as never,
    isAppUrl: (url) => url.startsWith('app://lab/'),
    openDialog: async () => null,
  });
});

describe('Electron IPC transport', () => {
  it('answers calls from our window with typed Results, validation naming the field', async () => {
    const call = registry.handlers.get(IPC_CALL)!;
    expect(await call(event(win), 'app.info', undefined)).toMatchObject({ ok: true, value: { transport: 'electron' } });
    expect(await call(event(win), 'runs.get', { runId: 42 })).toMatchObject({ ok: false, error: { code: 'VALIDATION', field: 'runId' } });
    expect(await call(event(win), 'runs.get')).toMatchObject({ ok: false, error: { code: 'VALIDATION', field: 'runId' } });
    expect(await call(event(win), 'no.such', {})).toMatchObject({ ok: false, error: { code: 'UNKNOWN_METHOD' } });
  });

  it('refuses calls from another web contents, a subframe or a foreign URL', async () => {
    const call = registry.handlers.get(IPC_CALL)!;
    const forbidden = { ok: false, error: { code: 'FORBIDDEN_SENDER' } };
    expect(await call(event(fakeContents(2)), 'app.info')).toMatchObject(forbidden);
    expect(await call(event(win, APP_URL, { url: APP_URL }), 'app.info')).toMatchObject(forbidden);
    expect(await call(event(win, 'https://evil.example/'), 'app.info')).toMatchObject(forbidden);
    expect(await call({ sender: win, senderFrame: null }, 'app.info')).toMatchObject(forbidden);
    win.destroy();
    expect(await call(event(win), 'app.info')).toMatchObject(forbidden);
  });

  it('forwards subscribed events to our window only, and stops on unsubscribe or when it goes away', () => {
    const subscribe = registry.listeners.get(IPC_SUBSCRIBE)!;
    const unsubscribe = registry.listeners.get(IPC_UNSUBSCRIBE)!;
    const other = fakeContents(3);
    subscribe(event(other), 'runs.changed');
    subscribe(event(win), 'runs.changed');
    subscribe(event(win), 'runs.changed');
    subscribe(event(win), 'not.an.event');
    bus.emit('runs.changed', { runId: 'r1' });
    expect(win.sent).toEqual([[IPC_EVENT, 'runs.changed', { runId: 'r1' }]]);
    expect(other.sent).toEqual([]);
    unsubscribe(event(win), 'runs.changed');
    bus.emit('runs.changed', { runId: 'r2' });
    expect(win.sent).toHaveLength(1);
    subscribe(event(win), 'run.alert');
    expect(bus.listenerCount('run.alert')).toBe(1);
    win.destroy();
    expect(bus.listenerCount('run.alert')).toBe(0);
  });
});
