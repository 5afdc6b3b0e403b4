import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { TrainingJobs } from '../sessions/sessionManager';

type ParsedResults<T extends ParseArgsConfig> = ReturnType<typeof parseArgs<T>>;

/** One CLI sub-command. Each lives in its own file under commands/ and is registered in commands/index.ts. */
export interface CliCommand {
  /** One line for `arlarena --help`. */
  readonly summary: string;
  /** Usage text printed by `arlarena <command> --help` and after a usage error. */
  readonly usage: string;
  /** Returns the process exit code: 0 success, 1 failure, 2 bad usage. */
  run(args: string[], ctx: CliContext): Promise<number>;
}

export interface CliContext {
  /** Data directory (runs database, checkpoints): `--data-dir`, else ARLARENA_DATA_DIR, else the app's per-user folder. */
  readonly dataDir: string;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  /** True when stdout is a terminal (progress bars); false under `--json` or pipes. */
  readonly isTTY: boolean;
  /** Where resumed runs train (default: the real trainer in a worker thread); test kits pass a stand-in job's. */
  readonly jobs?: TrainingJobs;
}

/** Thrown by argument parsing: printed as one line, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * Node's message for `--steps -1` ("argument is ambiguous… use --steps=-XYZ") does not say what is wrong: name
 * the option and the value instead.
 */
function ambiguousValue(config: ParseArgsConfig, e: Error): string | null {
  const m = /^Option '(--[^' ]+)[^']*' argument is ambiguous/.exec(e.message);
  if (!m || !config.args) return null;
  const i = config.args.indexOf(m[1]);
  const value = i >= 0 ? config.args[i + 1] : undefined;
  if (value === undefined) return null;
  if (/^-\d/.test(value)) return `${m[1]} ${value}: a negative number is not a valid ${m[1]} (see --help for the range it takes)`;
  return `${m[1]} ${value}: a value cannot start with "-" as a separate argument; if you mean it, write ${m[1]}=${value}`;
}

/** `util.parseArgs` whose complaints (unknown option, missing value, …) become a `UsageError` (exit 2). */
export function parseCommandArgs<T extends ParseArgsConfig>(config: T): ParsedResults<T> {
  try {
    return parseArgs(config);
  } catch (e) {
    throw new UsageError(ambiguousValue(config, e as Error) ?? (e as Error).message);
  }
}
