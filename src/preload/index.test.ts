import { describe, expect, it, vi } from 'vitest';

const fake = vi.hoisted(() => ({
  exposed: new Map<string, any>(),
  invoked: [] as unknown[][],
  sent: [] as unknown[][],
  onHandlers: new Map<string, (...args: unknown[]) => void>(),
  reply: { ok: true, value: 1 } as unknown,
}));
vi.mock('electron', () => ({
  contextBridge: { exposeInMainWorld: (key: string, api: unknown) => fake.exposed.set(key, api) },
  ipcRenderer: {
    invoke: async (...args: unknown[]) => {
      fake.invoked.push(args);
      if (fake.reply instanceof Error) throw fake.reply;
      return fake.reply;
    },
    send: (...args: unknown[]) => fake.sent.push(args),
    on: (channel: string, fn: (...args: unknown[]) => void) => fake.onHandlers.set(channel, fn),
  },
}));

import { IPC_CALL, IPC_EVENT, IPC_SUBSCRIBE, IPC_UNSUBSCRIBE } from '../shared/ipcChannels';
import './index';

describe('preload bridge', () => {
  it('exposes exactly one object, window.arlarena, on the electron transport', () => {
    expect([...fake.exposed.keys()]).toEqual(['arlarena']);
    expect(fake.exposed.get('arlarena').transport).toBe('electron');
  });

  it('calls go over the one invoke channel; an IPC failure becomes an INTERNAL Result', async () => {
    const api = fake.exposed.get('arlarena');
    expect(await api.call('runs.get', { runId: 'a' })).toEqual({ ok: true, value: 1 });
    expect(fake.invoked).toEqual([[IPC_CALL, 'runs.get', { runId: 'a' }]]);
    fake.reply = new Error('channel closed');
    expect(await api.call('app.info')).toMatchObject({
      ok: false,
      error: { code: 'INTERNAL', message: expect.stringContaining('channel closed') },
    });
  });

  it('subscribes once per event, fans events out, and unsubscribes after the last listener', () => {
    const api = fake.exposed.get('arlarena');
    const a: unknown[] = [];
    const b: unknown[] = [];
    const offA = api.subscribe('runs.changed', (p: unknown) => a.push(p));
    const offB = api.subscribe('runs.changed', (p: unknown) => b.push(p));
    expect(fake.sent).toEqual([[IPC_SUBSCRIBE, 'runs.changed']]);
    fake.onHandlers.get(IPC_EVENT)!({}, 'runs.changed', { runId: 'r' });
    expect(a).toEqual([{ runId: 'r' }]);
    expect(b).toEqual([{ runId: 'r' }]);
    offA();
    offA();
    expect(fake.sent).toHaveLength(1);
    offB();
    expect(fake.sent[1]).toEqual([IPC_UNSUBSCRIBE, 'runs.changed']);
  });
});
