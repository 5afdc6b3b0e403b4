/**
 * The Electron main process: one hardened window over the renderer, the main-side services and the API router
 * (the same ones browser mode serves). Started by `arlarena start` / `npm start` (which builds first).
 *
 * Security: contextIsolation + sandbox on, nodeIntegration off, webSecurity on; the renderer is served from a
 * privileged `app://lab/` scheme with a strict CSP header; navigation, new windows, webviews and permissions
 * are refused (electron/security.ts); every IPC message is checked to come from our window (electron/ipc.ts).
 */
import { app, BrowserWindow, dialog, protocol, session, utilityProcess, type OpenDialogOptions } from 'electron';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApi } from './api/index';
import { resolveDataDir } from './platform/dataDir';
import { installIpc } from './electron/ipc';
import { alreadyOpenMessage, launchRequest, secondLaunchNote } from './electron/instance';
import type { PickRequest } from './api/types';
import { hardenApp, hardenSession } from './electron/security';
import { rendererCsp } from './server/csp';
import { createLab, type LabServices } from './app/lab';
import { WATCH_STORE_MS } from './app/storeWatch';
import { utilityProcessSpawner } from './sessions/workerHost';

const APP_SCHEME = 'app';
const APP_ORIGIN = `${APP_SCHEME}://lab`;
const here = fileURLToPath(new URL('.', import.meta.url));
const rendererDir = join(here, '..', 'renderer');
const devUrl = !app.isPackaged ? process.env.ELECTRON_RENDERER_URL : undefined;

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.woff2': 'font/woff2',
};

// codeCache: V8 keeps the compiled renderer scripts (ECharts in the chart worker is ≈530 kB, ≈0.2 s to compile
// and run on a 2-core machine; bench:ui) across launches. Chromium does this only for http(s) unless a custom
// scheme asks; it needs `standard`. Untried here: these machines cannot download the Electron binary.
protocol.registerSchemesAsPrivileged([
  { scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true, codeCache: true } },
]);
app.enableSandbox();
hardenApp();

function isAppUrl(url: string): boolean {
  if (devUrl) return url.startsWith(new URL(devUrl).origin + '/');
  return url.startsWith(`${APP_ORIGIN}/`);
}

/** Serves out/renderer on app://lab/ with the CSP header; nothing outside that folder. */
function serveRenderer(): void {
  const root = normalize(rendererDir);
  protocol.handle(APP_SCHEME, async (request) => {
    const url = new URL(request.url);
    if (url.host !== 'lab') return new Response('not found', { status: 404 });
    const rel = decodeURIComponent(url.pathname === '/' ? '/index.html' : url.pathname);
    const file = normalize(join(root, rel));
    if (!file.startsWith(root + sep)) return new Response('not found', { status: 404 });
    try {
      const body = await readFile(file);
      return new Response(body, {
        headers: {
          'Content-Type': MIME[extname(file)] ?? 'application/octet-stream',
          'Content-Security-Policy': rendererCsp(),
          'X-Content-Type-Options': 'nosniff',
        },
      });
    } catch {
      return new Response('not found', { status: 404 });
    }
  });
}

let mainWindow: BrowserWindow | null = null;
let services: LabServices | null = null;

/** The native open dialog, over the app window: the only way a path reaches imports.path / follow.start here. */
async function openPathDialog(request: PickRequest): Promise<string | null> {
  const options: OpenDialogOptions = {
    title:
      request.purpose === 'model'
        ? 'Choose a Hugging Face model folder'
        : request.purpose === 'follow'
          ? 'Follow a log or a tracker database'
          : request.kind === 'folder'
            ? 'Import a folder of logs'
            : 'Import a training log',
    properties: [request.kind === 'folder' || request.purpose === 'model' ? 'openDirectory' : 'openFile'],
  };
  const r = mainWindow ? await dialog.showOpenDialog(mainWindow, options) : await dialog.showOpenDialog(options);
  return r.canceled || r.filePaths.length === 0 ? null : r.filePaths[0]!;
}

function createWindow(): BrowserWindow {
  const win = new BrowserWindow({
    width: 1440,
    height: 920,
    minWidth: 900,
    minHeight: 600,
    show: false,
    title: 'ARLArena Lab',
    webPreferences: {
      preload: join(here, '..', 'preload', 'index.cjs'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      spellcheck: false,
    },
  });
  win.once('ready-to-show', () => win.show());
  win.on('closed', () => {
    if (mainWindow === win) mainWindow = null;
  });
  void win.loadURL(devUrl ?? `${APP_ORIGIN}/index.html`);
  return win;
}

async function boot(): Promise<void> {
  // One app per user (electron/instance.ts): a second launch hands over the data dir it asked for and quits.
  const dataDir = resolveDataDir();
  if (!app.requestSingleInstanceLock(launchRequest(dataDir))) {
    console.error(alreadyOpenMessage(dataDir));
    app.quit();
    return;
  }
  app.on('second-instance', (_event, _argv, _cwd, request) => {
    if (mainWindow) {
      if (mainWindow.isMinimized()) mainWindow.restore();
      mainWindow.focus();
    }
    const note = secondLaunchNote(dataDir, request);
    if (note) {
      const options = { type: 'info' as const, title: 'ARLArena Lab is already open', message: note };
      void (mainWindow ? dialog.showMessageBox(mainWindow, options) : dialog.showMessageBox(options));
    }
  });
  await app.whenReady();
  hardenSession(session.defaultSession);
  serveRenderer();
  // Training runs in utility processes (out/main/trainingWorker.js); runs a dead app left running are marked
  // interrupted before the window opens.
  services = createLab({
    dataDir,
    insideElectron: true,
    watchStoreMs: WATCH_STORE_MS,
    sessions: { spawn: utilityProcessSpawner(utilityProcess, join(here, 'trainingWorker.js')) },
  });
  await services.lab();
  const router = createApi(services, { validateOutput: !app.isPackaged });
  installIpc({ router, bus: services.bus, appContents: () => mainWindow?.webContents ?? null, isAppUrl, openDialog: openPathDialog });
  mainWindow = createWindow();
  app.on('activate', () => {
    if (!mainWindow) mainWindow = createWindow();
  });
}

app.on('window-all-closed', () => app.quit());

let disposed = false;
app.on('before-quit', (event) => {
  if (disposed || !services) return;
  event.preventDefault();
  disposed = true;
  void services.dispose().finally(() => app.quit());
});

boot().catch((e: unknown) => {
  console.error('ARLArena Lab failed to start:', e);
  app.exit(1);
});
