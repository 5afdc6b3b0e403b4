import { parseArgs, type ParseArgsConfig } from 'node:util';

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
}

/** Thrown by argument parsing: printed as one line, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** `util.parseArgs` whose complaints (unknown option, missing value, …) become a `UsageError` (exit 2). */
export function parseCommandArgs<T extends ParseArgsConfig>(config: T): ParsedResults<T> {
  try {
    return parseArgs(config);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}
