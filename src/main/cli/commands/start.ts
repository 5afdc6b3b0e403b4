import { spawn } from 'node:child_process';
import { projectRoot } from '../../platform/appInfo';
import { ensureBuilt } from '../../electron/build';
import { downloadElectronBinary, findElectronBinary, type ElectronBinary } from '../../platform/electronBinary';
import { parseCommandArgs, type CliCommand, type CliContext } from '../types';
import { parseAllowDirs, parsePort, serveUntilStopped } from './serve';

const usage = `Usage: arlarena start [--browser] [--port N] [--host 127.0.0.1] [--allow-dir DIR …] [--no-build]

Builds the app if needed and opens the desktop app. Where Electron cannot run (no binary, no display), says
so in one line and serves the lab in a browser instead, printing the URL to open.

  --browser     skip Electron and go straight to browser mode
  --no-build    do not build first, even when out/ is missing or stale
  --port, --host, --allow-dir  for browser mode (see arlarena serve --help)`;

/** If Electron exits this soon with an error, it "could not start" and browser mode takes over. */
const EARLY_EXIT_MS = 8_000;

async function electronBinary(ctx: CliContext): Promise<ElectronBinary> {
  const found = findElectronBinary();
  if (found.available) return found;
  // The electron package fetches its binary on first use; try once (fails fast on offline machines).
  const notice = setTimeout(() => ctx.stderr.write('arlarena start: downloading the Electron binary (first start)…\n'), 2_000);
  try {
    return await downloadElectronBinary(300_000);
  } finally {
    clearTimeout(notice);
  }
}

function noDisplay(): string | null {
  if (process.platform !== 'linux') return null;
  return process.env.DISPLAY || process.env.WAYLAND_DISPLAY ? null : 'no display: neither DISPLAY nor WAYLAND_DISPLAY is set';
}

/** Runs Electron; resolves with its exit code, or with a reason string when it failed to start. */
function runElectron(binary: string, ctx: CliContext): Promise<number | string> {
  return new Promise((resolveRun) => {
    const started = Date.now();
    // ELECTRON_RUN_AS_NODE (inherited from some tools) would run Electron as plain Node: drop it.
    const { ELECTRON_RUN_AS_NODE: _asNode, ...env } = process.env;
    const child = spawn(binary, [projectRoot()], { stdio: ['ignore', 'inherit', 'pipe'], env: { ...env, ARLARENA_DATA_DIR: ctx.dataDir } });
    let early = '';
    child.stderr.on('data', (d: Buffer) => {
      if (Date.now() - started < EARLY_EXIT_MS) early = (early + d.toString()).slice(-4000);
      ctx.stderr.write(d);
    });
    child.on('error', (e) => resolveRun(`cannot run ${binary}: ${e.message}`));
    child.on('exit', (code, signal) => {
      const quick = Date.now() - started < EARLY_EXIT_MS;
      if (quick && (code !== 0 || signal)) {
        const line = early
          .split('\n')
          .map((l) => l.trim())
          .find((l) => /error|fail|cannot|missing/i.test(l));
        resolveRun(`Electron exited at start with ${signal ?? `code ${code}`}${line ? `: ${line.slice(0, 160)}` : ''}`);
      } else resolveRun(code ?? 1);
    });
    const stop = (sig: NodeJS.Signals) => child.kill(sig);
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

const command: CliCommand = {
  summary: 'build if needed and open the desktop app (browser mode where Electron cannot run)',
  usage,
  async run(args, ctx) {
    const { values } = parseCommandArgs({
      args,
      options: {
        browser: { type: 'boolean' },
        port: { type: 'string' },
        host: { type: 'string' },
        'allow-dir': { type: 'string', multiple: true },
        'no-build': { type: 'boolean' },
      },
      strict: true,
    });
    const port = parsePort(values.port);
    const allowDirs = parseAllowDirs(values['allow-dir']);
    const failure = values['no-build'] ? null : ensureBuilt((line) => ctx.stderr.write(`arlarena start: ${line}\n`));
    if (failure) {
      ctx.stderr.write(`arlarena start: ${failure}\n`);
      return 1;
    }
    let reason: string | null = null;
    if (!values.browser) {
      const display = noDisplay();
      // Without a display there is no point fetching a binary; report both problems at once.
      const binary = display ? findElectronBinary() : await electronBinary(ctx);
      if (!binary.available) reason = display ? `${binary.reason}; ${display}` : binary.reason;
      else if (display) reason = display;
      else {
        const outcome = await runElectron(binary.path, ctx);
        if (typeof outcome === 'number') return outcome;
        reason = outcome;
      }
    }
    if (reason) ctx.stderr.write(`arlarena start: Electron is unavailable: ${reason}. Starting browser mode instead.\n`);
    return serveUntilStopped(ctx, { host: values.host, port, json: false, build: false, allowDirs });
  },
};

export default command;
