/**
 * `remote verl --check`: the launch's overrides composed against the Hydra config of the user's own checkout
 * (checkScript.ts, run by that checkout's Python), before anything is submitted. Nothing of verl is imported.
 */
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { CHECK_SCRIPT } from './checkScript';
import type { RayClient } from '../rayClient';

export interface HydraCheckInput {
  /** The Python that has hydra-core (the verl checkout's environment). */
  readonly python: string;
  /** The checkout's root: Hydra's relative search paths (ARLArena's `file://verl/trainer/config`) start there. */
  readonly workdir: string;
  /** The config directory, relative to workdir or absolute. */
  readonly configDir: string;
  readonly configName: string;
  readonly overrides: readonly string[];
  readonly timeoutMs?: number;
}

export interface HydraCheckReport {
  readonly unknown: readonly { override: string; key: string; suggestion: string | null }[];
  readonly typeErrors: readonly { override: string; key: string; expected: string; got: string }[];
  /** `+key=…` where the config already has the key (Hydra refuses to add it twice). */
  readonly exists: readonly { override: string; key: string }[];
  /** Overrides Hydra cannot parse, or sweeps. */
  readonly invalid: readonly { override: string; message: string }[];
  /** `???` fields the composed config leaves unset. */
  readonly missing: readonly string[];
  /** Composing every valid override together failed (a problem no single override shows). */
  readonly composeError: string | null;
}

/** The problems as one line each, for the terminal; empty when the launch composes cleanly. */
export function describeHydraReport(r: HydraCheckReport): string[] {
  return [
    ...r.unknown.map(
      (u) => `unknown key: ${u.override} — the config has no ${u.key}${u.suggestion ? ` (did you mean ${u.suggestion}?)` : ''}`,
    ),
    ...r.typeErrors.map((t) => `type error: ${t.override} — ${t.key} takes a ${t.expected}, got ${t.got}`),
    ...r.exists.map((e) => `already there: ${e.override} — ${e.key} exists, drop the leading +`),
    ...r.invalid.map((i) => `invalid override: ${i.override} — ${i.message}`),
    ...r.missing.map((k) => `missing required field: ${k} is ??? in the config and no override sets it`),
    ...(r.composeError ? [`composing every override together failed: ${r.composeError}`] : []),
  ];
}

export function hydraReportClean(r: HydraCheckReport): boolean {
  return describeHydraReport(r).length === 0;
}

/** The check's report from its output (the last line), or an error naming what went wrong. */
export function parseHydraCheckOutput(stdout: string, whenMissing: () => string): HydraCheckReport {
  // The report is the script's last line; a Ray job's log may carry other lines around it.
  const line =
    stdout
      .trim()
      .split('\n')
      .reverse()
      .find((l) => l.startsWith('{"unknown"')) ?? '';
  let parsed: (HydraCheckReport & { error: string | null }) | null = null;
  try {
    parsed = JSON.parse(line) as HydraCheckReport & { error: string | null };
  } catch {
    throw new Error(whenMissing());
  }
  if (!parsed || typeof parsed !== 'object' || !Array.isArray(parsed.unknown)) throw new Error(whenMissing());
  if (parsed.error) throw new Error(parsed.error);
  const { error: _error, ...report } = parsed;
  return report;
}

/** Runs the check here; rejects (one line naming the fix) when the Python or its hydra-core cannot run it. */
export function checkHydraOverrides(input: HydraCheckInput): Promise<HydraCheckReport> {
  const workdir = resolvePath(input.workdir);
  const configDir = resolvePath(workdir, input.configDir);
  if (!existsSync(workdir) || !statSync(workdir).isDirectory())
    return Promise.reject(
      new Error(`--workdir ${input.workdir}: no such directory on this machine; pass the root of a local checkout of the stack`),
    );
  // A path (not a bare name found on PATH) is the user's, relative to where they ran the command: the check runs
  // with the checkout as its working directory, where a relative path would point elsewhere. Not realpath'd: a
  // venv's python is a link whose own path makes it the venv's.
  const python = input.python.includes('/') ? resolvePath(input.python) : input.python;
  return new Promise((resolve, reject) => {
    const child = spawn(python, ['-c', CHECK_SCRIPT, workdir, configDir, input.configName, JSON.stringify(input.overrides)], {
      cwd: workdir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
    });
    let out = '';
    let err = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), input.timeoutMs ?? 60_000);
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(
        new Error(
          e.code === 'ENOENT'
            ? `--python ${input.python}: not found; pass the Python of the verl checkout's environment (it has hydra-core)`
            : `--python ${input.python}: ${e.message}`,
        ),
      );
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      try {
        resolve(
          parseHydraCheckOutput(out, () => {
            const tail = err.trim().split('\n').slice(-1)[0] ?? '';
            return signal
              ? `the Hydra check was killed (${signal}) after ${(input.timeoutMs ?? 60_000) / 1000} s`
              : `the Hydra check exited ${code} without a report: ${tail || '(no output)'}`;
          }),
        );
      } catch (e) {
        reject(e instanceof Error ? e : new Error(String(e)));
      }
    });
  });
}

function sh(v: string): string {
  return /^[A-Za-z0-9_./:=,+-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`;
}

/**
 * The check as a shell command run in the checkout on the cluster (a short Ray job before the launch itself): the
 * same script, the cluster's Python and the cluster's config, so what is checked is what will run.
 */
export function hydraCheckShellCommand(input: Omit<HydraCheckInput, 'timeoutMs'>): string {
  return `cd ${sh(input.workdir)} && PYTHONDONTWRITEBYTECODE=1 ${sh(input.python)} -c ${sh(CHECK_SCRIPT)} . ${sh(input.configDir)} ${sh(input.configName)} ${sh(JSON.stringify(input.overrides))}`;
}

/**
 * The check run on a Ray cluster, in the checkout the launch will run from: submitted as a short job, waited for,
 * its report read from the job's log. Rejects (one line) when the job cannot produce a report.
 */
export async function checkHydraOverridesOnRay(
  client: RayClient,
  submissionId: string,
  input: Omit<HydraCheckInput, 'timeoutMs'>,
  timeoutMs = 180_000,
): Promise<HydraCheckReport> {
  await client.submitJob({
    submissionId,
    entrypoint: hydraCheckShellCommand(input),
    runtimeEnv: {},
    metadata: { arlarena_verl_check: input.configName },
  });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const info = await client.jobInfo(submissionId);
    if (info && (info.status === 'SUCCEEDED' || info.status === 'FAILED' || info.status === 'STOPPED')) {
      const logs = await client.jobLogs(submissionId);
      return parseHydraCheckOutput(
        logs,
        () =>
          `the Hydra check job ${submissionId} ended ${info.status} without a report: ${logs.trim().split('\n').slice(-1)[0] || info.message || '(no output)'}`,
      );
    }
    if (Date.now() > deadline) {
      await client.stopJob(submissionId).catch(() => false);
      throw new Error(`the Hydra check job ${submissionId} did not finish within ${timeoutMs / 1000} s (stopped): is the cluster busy?`);
    }
    await new Promise((r) => setTimeout(r, 400));
  }
}
