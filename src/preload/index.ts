/**
 * The preload bridge: exposes the API contract as `window.arlarena` (an `ArlArenaApi`) and nothing else.
 * Emitted as CommonJS so it runs in a sandboxed renderer. Calls go over one invoke channel; events arrive on
 * one push channel and fan out to the page's listeners. Main validates everything that arrives here.
 */
import { contextBridge, ipcRenderer } from 'electron';
import type { ApiEventName, ArlArenaApi } from '../shared/api';
import { IPC_CALL, IPC_EVENT, IPC_SUBSCRIBE, IPC_UNSUBSCRIBE } from '../shared/ipcChannels';

const listeners = new Map<ApiEventName, Set<(payload: unknown) => void>>();

ipcRenderer.on(IPC_EVENT, (_event, name: ApiEventName, payload: unknown) => {
  for (const listener of [...(listeners.get(name) ?? [])]) {
    try {
      listener(payload);
    } catch (e) {
      console.error(`[arlarena] a ${name} listener threw`, e);
    }
  }
});

const api: ArlArenaApi = {
  transport: 'electron',
  call(method, input) {
    return ipcRenderer.invoke(IPC_CALL, method, input).catch((e: unknown) => ({
      ok: false as const,
      error: { code: 'INTERNAL' as const, message: `IPC call ${String(method)} failed: ${e instanceof Error ? e.message : String(e)}` },
    }));
  },
  subscribe(event, listener) {
    let set = listeners.get(event);
    if (!set) {
      listeners.set(event, (set = new Set()));
      ipcRenderer.send(IPC_SUBSCRIBE, event);
    }
    const fn = listener as (payload: unknown) => void;
    set.add(fn);
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      const current = listeners.get(event);
      current?.delete(fn);
      if (current && current.size === 0) {
        listeners.delete(event);
        ipcRenderer.send(IPC_UNSUBSCRIBE, event);
      }
    };
  },
};

contextBridge.exposeInMainWorld('arlarena', api);
