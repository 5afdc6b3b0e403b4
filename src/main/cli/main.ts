import { Console } from 'node:console';
import { parseArgs } from 'node:util';
import { commands } from './commands/index';
import { isDiskFull } from '../store/storageErrors';
import { terminalSafe } from './terminalText';
import { UsageError, type CliContext } from './types';
import { appVersion } from '../platform/appInfo';
import { resolveDataDir } from '../platform/dataDir';

const HELP_HEAD = `arlarena — ARLArena Lab command line

Usage: arlarena [--data-dir DIR] <command> [options]   (global options may also follow the command)

Global options:
  --data-dir DIR   where runs live (default: env ARLARENA_DATA_DIR, else the desktop app's per-user folder)
  --help, -h       this help;  arlarena <command> --help for a command's options
  --version, -v    print the version
`;

async function helpText(): Promise<string> {
  const lines: string[] = [];
  for (const name of Object.keys(commands).sort()) {
    const cmd = (await commands[name]()).default;
    lines.push(`  ${name.padEnd(12)} ${cmd.summary}`);
  }
  return `${HELP_HEAD}\nCommands:\n${lines.join('\n')}\n`;
}

/**
 * Pulls the global `--data-dir DIR` / `--data-dir=DIR` out of a command's arguments (no command has an option of
 * that name; a bare `--` ends the options, and what follows it is left alone). Throws when DIR is missing.
 */
export function takeGlobalOptions(args: readonly string[]): { dataDir?: string; rest: string[] } {
  const rest: string[] = [];
  let dataDir: string | undefined;
  const set = (v: string) => {
    if (dataDir !== undefined && dataDir !== v)
      throw new Error(`--data-dir is given twice with different folders ("${dataDir}" and "${v}"); give it once`);
    dataDir = v;
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') {
      rest.push(...args.slice(i));
      break;
    }
    if (a.startsWith('--data-dir=')) {
      const v = a.slice('--data-dir='.length);
      if (!v) throw new Error('--data-dir= needs a folder, e.g. --data-dir=./lab-data');
      set(v);
    } else if (a === '--data-dir') {
      const v = args[i + 1];
      if (v === undefined || v.startsWith('-')) throw new Error('--data-dir needs a folder after it, e.g. --data-dir ./lab-data');
      set(v);
      i++;
    } else {
      rest.push(a);
    }
  }
  return { dataDir, rest };
}

/**
 * Entry point; returns the exit code (0 ok, 1 failure, 2 bad usage). `jobs`: where runs train (default the real
 * trainer); only test helper processes pass one.
 */
export async function main(argv: string[], jobs?: CliContext['jobs']): Promise<number> {
  // Text from outside (file names, cluster replies, import errors) never reaches the terminal as control codes:
  // neither in what the commands write nor in what the layers under them log with console.* (the store's
  // warnings quoting a damaged file, `serve`'s server and API failures), for as long as the command runs.
  const stdout = terminalSafe(process.stdout);
  const stderr = terminalSafe(process.stderr);
  const previous = globalThis.console;
  globalThis.console = new Console({ stdout, stderr, colorMode: false });
  try {
    return await runCommand(argv, jobs, stdout, stderr);
  } finally {
    globalThis.console = previous;
  }
}

async function runCommand(
  argv: string[],
  jobs: CliContext['jobs'] | undefined,
  stdout: typeof process.stdout,
  stderr: typeof process.stderr,
): Promise<number> {
  // `arlarena show RUN | head`: the reader went away; stop quietly instead of crashing on EPIPE.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    throw e;
  });
  // Global options come before the command, or anywhere after it (`arlarena train … --data-dir D`).
  const cmdIndex = argv.findIndex((a, i) => !a.startsWith('-') && argv[i - 1] !== '--data-dir');
  const globalArgs = cmdIndex < 0 ? argv : argv.slice(0, cmdIndex);
  const name = cmdIndex < 0 ? undefined : argv[cmdIndex];
  let values: { 'data-dir'?: string; help?: boolean; version?: boolean };
  let rest: string[];
  try {
    ({ values } = parseArgs({
      args: globalArgs,
      options: { 'data-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' }, version: { type: 'boolean', short: 'v' } },
      strict: true,
    }));
    const after = takeGlobalOptions(cmdIndex < 0 ? [] : argv.slice(cmdIndex + 1));
    rest = after.rest;
    if (after.dataDir !== undefined) {
      if (values['data-dir'] !== undefined && values['data-dir'] !== after.dataDir) {
        throw new Error(`--data-dir is given twice with different folders ("${values['data-dir']}" and "${after.dataDir}"); give it once`);
      }
      values['data-dir'] = after.dataDir;
    }
  } catch (e) {
    stderr.write(`arlarena: ${(e as Error).message} (see arlarena --help)\n`);
    return 2;
  }
  if (values.version) {
    stdout.write(`${appVersion()}\n`);
    return 0;
  }
  if (values.help || name === undefined) {
    stdout.write(await helpText());
    return name === undefined && !values.help ? 2 : 0;
  }
  const loader = commands[name];
  if (!loader) {
    stderr.write(`arlarena: unknown command "${name}"; valid commands: ${Object.keys(commands).sort().join(', ')}\n`);
    return 2;
  }
  const cmd = (await loader()).default;
  if (rest.includes('--help') || rest.includes('-h')) {
    stdout.write(`${cmd.usage}\n`);
    return 0;
  }
  const ctx: CliContext = {
    dataDir: resolveDataDir(values['data-dir']),
    stdout,
    stderr,
    isTTY: Boolean(stdout.isTTY),
    ...(jobs ? { jobs } : {}),
  };
  try {
    return await cmd.run(rest, ctx);
  } catch (e) {
    if (e instanceof UsageError) {
      stderr.write(`arlarena ${name}: ${e.message}\n`);
      return 2;
    }
    // Errors that mark themselves `expected` (a lock path that is a directory, a lock held too long…) are the
    // user's to fix: one line, no stack trace.
    if (e instanceof Error && (e as { expected?: unknown }).expected === true) {
      stderr.write(`arlarena ${name}: ${e.message}\n`);
      return 1;
    }
    // A full disk is the user's to fix too: which folder, not a stack trace.
    if (isDiskFull(e)) {
      stderr.write(
        `arlarena ${name}: the disk holding the data folder ${ctx.dataDir} is full (no space left on device); free space there or use another --data-dir\n`,
      );
      return 1;
    }
    stderr.write(`arlarena ${name}: ${(e as Error).stack ?? String(e)}\n`);
    return 1;
  }
}
