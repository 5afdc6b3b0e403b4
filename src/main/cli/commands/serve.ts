import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { ensureBuilt } from '../../electron/build';
import { startBrowserMode, untilSignal } from '../../server/launch';
import { UsageError, parseCommandArgs, type CliCommand, type CliContext } from '../types';

const usage = `Usage: arlarena serve [--port N] [--host 127.0.0.1] [--allow-dir DIR …] [--no-build] [--json]

Serves the lab in a browser: the same services as the desktop app behind HTTP + WebSocket on 127.0.0.1,
protected by a token that is new on every launch. Open the printed URL (it carries the token after #).

  --port N      listen on port N (default: a random free port)
  --host H      interface to bind (default 127.0.0.1; anything else exposes the lab to the network)
  --allow-dir D let the page import and follow files by path inside folder D (repeatable); without it the page
                imports only files the user uploads
  --no-build    do not build the renderer first, even when out/ is missing or stale
  --json        print one JSON line {"url","origin","port","token","pid","dataDir"} instead of text`;

export function parsePort(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new UsageError(`--port must be an integer 0–65535, got "${value}"`);
  return Number(value);
}

/** `--allow-dir D` (repeatable): each an existing folder, kept absolute. */
export function parseAllowDirs(values: readonly string[] | undefined): string[] {
  return (values ?? []).map((d) => {
    const abs = resolve(d);
    let st;
    try {
      st = statSync(abs);
    } catch {
      throw new UsageError(`--allow-dir ${d}: no such folder; name a folder that holds the logs to import`);
    }
    if (!st.isDirectory()) throw new UsageError(`--allow-dir ${d}: not a folder; name the folder that holds the file`);
    return abs;
  });
}

/** Shared by `serve` and `start`'s fallback: runs browser mode until a signal arrives. */
export async function serveUntilStopped(
  ctx: CliContext,
  opts: { host?: string; port?: number; json: boolean; build: boolean; allowDirs?: readonly string[] },
): Promise<number> {
  if (opts.build) {
    const failure = ensureBuilt((line) => ctx.stderr.write(`arlarena serve: ${line}\n`));
    if (failure) {
      ctx.stderr.write(`arlarena serve: ${failure}\n`);
      return 1;
    }
  }
  let mode;
  try {
    mode = await startBrowserMode({ dataDir: ctx.dataDir, host: opts.host, port: opts.port, allowDirs: opts.allowDirs });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why =
      code === 'EADDRINUSE' ? `port ${opts.port} is already in use; pick another --port or omit it for a free one` : (e as Error).message;
    ctx.stderr.write(`arlarena serve: cannot start the server: ${why}\n`);
    return 1;
  }
  const { server } = mode;
  let stopped = false;
  if (opts.json) {
    ctx.stdout.write(
      `${JSON.stringify({ url: server.url, origin: server.origin, port: server.port, token: server.token, pid: process.pid, dataDir: ctx.dataDir })}\n`,
    );
  } else {
    const allowed = opts.allowDirs?.length ? opts.allowDirs.join(', ') : 'none (the page imports uploaded files only; --allow-dir DIR)';
    ctx.stdout.write(
      `ARLArena Lab in browser mode\n  open:    ${server.url}\n  data:    ${ctx.dataDir}\n  paths:   ${allowed}\nPress Ctrl+C to stop.\n`,
    );
    // Backend detection loads tfjs (a few seconds); the URL is usable before it finishes.
    void mode.services.computeInfo().then((compute) => {
      if (stopped) return;
      ctx.stdout.write(
        `  compute: ${compute.detail}\n  workers: ${compute.workers ?? 1} gradient worker(s) per run with compute.workers = 0 (one per core on tfjs-wasm, one on native TensorFlow)\n`,
      );
    });
  }
  // Ctrl-C, SIGTERM (a service manager, `kill`) and a closed terminal are how browser mode is meant to end: a calm
  // line on stdout and exit 0, not the signal on stderr as if it had failed. A stop that fails says so, exit 1.
  const signal = await untilSignal();
  stopped = true;
  try {
    await mode.stop();
  } catch (e) {
    ctx.stderr.write(`arlarena serve: stopping after ${signal} failed: ${(e as Error).message}\n`);
    return 1;
  }
  // after SIGHUP the terminal is gone: nothing to say there
  if (!opts.json && signal !== 'SIGHUP') ctx.stdout.write('stopped\n');
  return 0;
}

const command: CliCommand = {
  summary: 'serve the lab in a browser (HTTP + WebSocket on 127.0.0.1, token-protected)',
  usage,
  async run(args, ctx) {
    const { values } = parseCommandArgs({
      args,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        'allow-dir': { type: 'string', multiple: true },
        'no-build': { type: 'boolean' },
        json: { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    });
    if (values.host !== undefined && !/^[A-Za-z0-9.:[\]-]+$/.test(values.host))
      throw new UsageError(`--host must be a host name or IP address, got "${values.host}"`);
    return serveUntilStopped(ctx, {
      host: values.host,
      port: parsePort(values.port),
      json: Boolean(values.json),
      build: !values['no-build'],
      allowDirs: parseAllowDirs(values['allow-dir']),
    });
  },
};

export default command;
