/**
 * Electron hardening that does not depend on our window: applied to every web contents the app ever creates.
 * Navigation, new windows, <webview> and every permission request are refused.
 */
import { app, session, type Session } from 'electron';
import { rendererCsp } from '../server/csp';

export function hardenApp(): void {
  app.on('web-contents-created', (_event, contents) => {
    contents.on('will-attach-webview', (e) => e.preventDefault());
    contents.on('will-navigate', (e) => e.preventDefault());
    contents.on('will-redirect', (e) => e.preventDefault());
    contents.setWindowOpenHandler(() => ({ action: 'deny' }));
  });
}

/** CSP as a response header on everything the session loads (the meta tag in index.html is the second line). */
export function hardenSession(ses: Session = session.defaultSession): void {
  const csp = rendererCsp();
  ses.webRequest.onHeadersReceived((details, callback) => {
    callback({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [csp] } });
  });
  ses.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
  ses.setPermissionCheckHandler(() => false);
}
