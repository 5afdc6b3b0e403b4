/**
 * Command-line options of a bench script (`npm run bench:<name> -- …`), shared by every script in bench/:
 * `--help` / `-h` prints the script's usage and exits 0; an unknown option or a missing value prints one line
 * naming it, then the usage, and exits 2 — never a stack trace (first-run items).
 *
 *   const opts = benchArgs('rl', USAGE, { steps: { type: 'string', default: '4' }, json: { type: 'boolean' } });
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;
type Values<O extends Options> = ReturnType<typeof parseArgs<{ options: O; strict: true; allowPositionals: false }>>['values'];

export function benchArgs<const O extends Options>(
  name: string,
  usage: string,
  options: O,
  argv: readonly string[] = process.argv.slice(2),
): Values<O> {
  const text = usage.endsWith('\n') ? usage : `${usage}\n`;
  // Before parsing, so `--help` works next to any other (even mistyped) option.
  const end = argv.indexOf('--');
  const own = end < 0 ? argv : argv.slice(0, end);
  if (own.includes('--help') || own.includes('-h')) {
    process.stdout.write(text);
    process.exit(0);
  }
  try {
    return parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }).values;
  } catch (e) {
    return usageError(name, usage, (e as Error).message);
  }
}

/** A bad option value the script found itself: one line and the usage on stderr, exit 2. */
export function usageError(name: string, usage: string, message: string): never {
  process.stderr.write(`bench:${name}: ${message}\n\n${usage.endsWith('\n') ? usage : `${usage}\n`}`);
  process.exit(2);
}
