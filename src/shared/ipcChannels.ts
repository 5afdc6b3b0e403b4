/**
 * Electron IPC channel names (the preload and the main process). Everything goes through these four: calls on
 * one invoke channel, events on one push channel, and subscription bookkeeping.
 */
export const IPC_CALL = 'arlarena:call';
export const IPC_EVENT = 'arlarena:event';
export const IPC_SUBSCRIBE = 'arlarena:subscribe';
export const IPC_UNSUBSCRIBE = 'arlarena:unsubscribe';
