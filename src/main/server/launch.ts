/**
 * Browser mode as a whole: services + router + server, used by `arlarena serve` and as `arlarena start`'s
 * fallback when Electron cannot run.
 */
import { join } from 'node:path';
import { createApi } from '../api/index';
import { projectRoot } from '../platform/appInfo';
import { createLab, type LabServices } from '../app/lab';
import { WATCH_STORE_MS } from '../app/storeWatch';
import { startServer, type RunningServer } from './server';

export interface BrowserModeOptions {
  readonly dataDir: string;
  readonly host?: string;
  readonly port?: number;
  readonly staticDir?: string;
  /** Folders the page may name files in by path (`serve --allow-dir`). */
  readonly allowDirs?: readonly string[];
}

export interface BrowserMode {
  readonly server: RunningServer;
  readonly services: LabServices;
  /** Stops the server, then the services (flushing the run store). */
  stop(): Promise<void>;
}

export async function startBrowserMode(options: BrowserModeOptions): Promise<BrowserMode> {
  // Pages follow what the CLI does to the same data directory (runs started, resumed, stopped, deleted there).
  const services = createLab({ dataDir: options.dataDir, watchStoreMs: WATCH_STORE_MS });
  // Opens the run store and marks runs a dead process left running as interrupted, before serving.
  try {
    await services.lab();
  } catch (e) {
    await services.dispose();
    throw e;
  }
  const router = createApi(services);
  let server: RunningServer;
  try {
    server = await startServer({
      router,
      bus: services.bus,
      staticDir: options.staticDir ?? join(projectRoot(), 'out', 'renderer'),
      host: options.host,
      port: options.port,
      allowDirs: options.allowDirs,
    });
  } catch (e) {
    await services.dispose();
    throw e;
  }
  let stopping: Promise<void> | null = null;
  return {
    server,
    services,
    stop: () => (stopping ??= server.close().then(() => services.dispose())),
  };
}

/** Resolves when the process is asked to stop (SIGINT / SIGTERM / SIGHUP). */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolveSignal) => {
    const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
    const on = (s: NodeJS.Signals) => {
      for (const sig of signals) process.off(sig, on);
      resolveSignal(s);
    };
    for (const sig of signals) process.on(sig, on);
  });
}
