/**
 * The Electron transport on the main side: one invoke channel for calls, one push channel for events, and
 * subscribe/unsubscribe messages. Every message is checked to come from our window's main frame at our origin
 * before anything else happens; anything else gets FORBIDDEN_SENDER (calls) or is ignored (messages). A call that
 * names a file by path is refused: paths come from the native dialog only (ipcCall.ts, pathGrants.ts).
 */
import { ipcMain, type IpcMainEvent, type IpcMainInvokeEvent, type WebContents } from 'electron';
import { isApiEvent, type ApiEventName } from '../../shared/api';
import { IPC_CALL, IPC_EVENT, IPC_SUBSCRIBE, IPC_UNSUBSCRIBE } from '../../shared/ipcChannels';
import type { EventBus } from '../app/events';
import type { Router } from '../api/router';
import { defaultThrottleMs } from '../api/throttle';
import { createIpcCallHandler, trustedSender } from './ipcCall';
import { createPathGrants, type OpenDialog } from './pathGrants';

export interface IpcOptions {
  readonly router: Router;
  readonly bus: EventBus;
  /** The app window's web contents (null once closed). */
  readonly appContents: () => WebContents | null;
  /** True for a URL of our renderer (app://lab/… or the dev server's origin). */
  readonly isAppUrl: (url: string) => boolean;
  /** The native open dialog (index.ts: Electron's dialog.showOpenDialog on the app window). */
  readonly openDialog: OpenDialog;
}

export function installIpc(options: IpcOptions): () => void {
  const trusted = (event: IpcMainEvent | IpcMainInvokeEvent): boolean => trustedSender(event, options.appContents, options.isAppUrl);

  ipcMain.handle(
    IPC_CALL,
    createIpcCallHandler({
      router: options.router,
      appContents: options.appContents,
      isAppUrl: options.isAppUrl,
      pathGrants: createPathGrants(options.openDialog),
    }),
  );

  // Subscriptions per web contents, dropped when it goes away.
  const subscriptions = new Map<number, Map<ApiEventName, () => void>>();
  const dropAll = (id: number) => {
    for (const off of subscriptions.get(id)?.values() ?? []) off();
    subscriptions.delete(id);
  };

  ipcMain.on(IPC_SUBSCRIBE, (event, name: unknown) => {
    if (!trusted(event) || typeof name !== 'string' || !isApiEvent(name)) return;
    const sender = event.sender;
    let subs = subscriptions.get(sender.id);
    if (!subs) {
      subscriptions.set(sender.id, (subs = new Map()));
      const id = sender.id;
      sender.once('destroyed', () => dropAll(id));
    }
    if (subs.has(name)) return;
    subs.set(
      name,
      options.bus.subscribe(
        name,
        (payload) => {
          if (!sender.isDestroyed()) sender.send(IPC_EVENT, name, payload);
        },
        { throttleMs: defaultThrottleMs(name) },
      ),
    );
  });

  ipcMain.on(IPC_UNSUBSCRIBE, (event, name: unknown) => {
    if (!trusted(event) || typeof name !== 'string' || !isApiEvent(name)) return;
    const subs = subscriptions.get(event.sender.id);
    subs?.get(name)?.();
    subs?.delete(name);
  });

  return () => {
    ipcMain.removeHandler(IPC_CALL);
    ipcMain.removeAllListeners(IPC_SUBSCRIBE);
    ipcMain.removeAllListeners(IPC_UNSUBSCRIBE);
    for (const id of [...subscriptions.keys()]) dropAll(id);
  };
}
