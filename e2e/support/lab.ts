/**
 * Starts the real app in browser mode for a test file: `arlarena --data-dir <tmp> serve --port 0 --json`,
 * detached (its own process group), reads the URL and token it prints, and stops it by its process id.
 *
 *   const lab = await startLab();
 *   … lab.url (opens the app, token in the fragment), lab.call('app.info') …
 *   await lab.stop();
 *
 * And the real CLI on a data dir (before the lab opens it, or beside it): runCli (any command), synthRun
 * (`arlarena runs synth`), checkRun (`arlarena check --save`), importRuns (`arlarena import`), importLogs (logs
 * written by the spec, then imported).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ApiInput, ApiMethodName, ApiOutput } from '../../src/shared/api';
import type { Result } from '../../src/shared/result';

export const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));

export interface Lab {
  /** Open this in the browser: origin + `/#token=…`. */
  readonly url: string;
  readonly origin: string;
  readonly port: number;
  readonly token: string;
  readonly pid: number;
  readonly dataDir: string;
  /** A call over HTTP with the token (what the renderer's transport does). */
  call<M extends ApiMethodName>(method: M, input?: ApiInput<M>): Promise<Result<ApiOutput<M>>>;
  /** True while the server process is running. */
  alive(): boolean;
  /** What the server wrote to stderr so far (for failure messages). */
  stderr(): string;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running)
    if (child.pid)
      try {
        process.kill(child.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
});

/** `serveArgs`: more `arlarena serve` options (e.g. `--allow-dir DIR`, which follow.start and imports.path need). */
export async function startLab(
  options: { dataDir?: string; env?: Record<string, string>; serveArgs?: readonly string[] } = {},
): Promise<Lab> {
  const ownDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'arlarena-e2e-'));
  const child = spawn(
    process.execPath,
    [
      join(ROOT, 'bin', 'arlarena.mjs'),
      '--data-dir',
      dataDir,
      'serve',
      '--port',
      '0',
      '--no-build',
      '--json',
      ...(options.serveArgs ?? []),
    ],
    {
      cwd: ROOT,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...options.env },
    },
  );
  running.add(child);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-20_000);
  });
  let exited = false;
  const exitPromise = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      running.delete(child);
      resolve();
    }),
  );

  const info = await new Promise<{ url: string; origin: string; port: number; token: string; pid: number }>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`arlarena serve did not print its URL within 90 s; stderr:\n${stderr}`)), 90_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.trim().startsWith('{'));
      if (!line) return;
      clearTimeout(timer);
      try {
        resolve(JSON.parse(line));
      } catch (e) {
        reject(new Error(`arlarena serve printed something that is not JSON: ${line} (${(e as Error).message})`));
      }
    });
    void exitPromise.then(() => {
      clearTimeout(timer);
      reject(new Error(`arlarena serve exited before printing its URL; stderr:\n${stderr}`));
    });
  });

  const lab: Lab = {
    ...info,
    dataDir,
    async call(method, input) {
      const res = await fetch(`${info.origin}/api/call`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-arlarena-token': info.token },
        body: JSON.stringify({ method, input }),
      });
      return (await res.json()) as Result<never>;
    },
    alive: () => {
      if (exited) return false;
      try {
        process.kill(info.pid, 0);
        return true;
      } catch {
        return false;
      }
    },
    stderr: () => stderr,
    async stop() {
      if (!exited) {
        try {
          process.kill(info.pid, 'SIGTERM');
        } catch {
          // already gone
        }
        const killer = setTimeout(() => {
          try {
            process.kill(info.pid, 'SIGKILL');
          } catch {
            // gone
          }
        }, 10_000);
        await exitPromise;
        clearTimeout(killer);
      }
      if (ownDir && !process.env.ARLARENA_E2E_KEEP_DATA) rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return lab;
}

/**
 * Runs the real CLI to its end, `arlarena --data-dir DATA ARGS…`: its stdout, or an error with its exit status and
 * stderr when the status is not one of `ok`.
 */
export function runCli(dataDir: string, args: readonly string[], ok: readonly number[] = [0]): string {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'arlarena.mjs'), '--data-dir', dataDir, ...args], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (r.status === null || !ok.includes(r.status)) throw new Error(`arlarena ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

/** `arlarena runs synth --steps N [--shape S] [--seed N] [--name NAME] --json` into `dataDir`: the new run's id. */
export function synthRun(dataDir: string, opts: { steps: number; shape?: string; seed?: number; name?: string }): string {
  const args = ['runs', 'synth', '--steps', String(opts.steps)];
  if (opts.shape !== undefined) args.push('--shape', opts.shape);
  if (opts.seed !== undefined) args.push('--seed', String(opts.seed));
  if (opts.name !== undefined) args.push('--name', opts.name);
  const out = runCli(dataDir, [...args, '--json']);
  return (JSON.parse(out.trim().split('\n').pop()!) as { runId: string }).runId;
}

/** `arlarena check RUN --save --json`: the detector's alerts stored with the run. Exit 3 (an alert is critical) is its answer, not a failure. */
export function checkRun(dataDir: string, runId: string): string {
  return runCli(dataDir, ['check', runId, '--save', '--json'], [0, 3]);
}

/** `arlarena import FILES --json` into `dataDir`: the ids of the runs it made, from its last line. */
export function importRuns(dataDir: string, files: readonly string[]): string[] {
  const out = runCli(dataDir, ['import', ...files, '--json']);
  return (JSON.parse(out.trim().split('\n').pop()!) as { runIds: string[] }).runIds;
}

/** Writes each [file name, text] into the folder `work`, then imports them all into `dataDir`: the runs' ids, in order. */
export function importLogs(work: string, dataDir: string, logs: ReadonlyArray<readonly [string, string]>): string[] {
  const files = logs.map(([name, text]) => {
    const f = join(work, name);
    writeFileSync(f, text);
    return f;
  });
  return importRuns(dataDir, files);
}
