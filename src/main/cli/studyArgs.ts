/**
 * What the two study commands, `arena` and `ladder`, share: the options they both take (one parseArgs table, so a
 * flag cannot mean one thing in one and drift in the other), list arguments checked against a catalog, and the
 * command line a study records as typed.
 */
import { UsageError } from './types';

/** The options of both study commands, with the same meaning; each command adds its own. */
export const STUDY_OPTIONS = {
  envs: { type: 'string' },
  presets: { type: 'string' },
  seeds: { type: 'string' },
  steps: { type: 'string' },
  model: { type: 'string' },
  set: { type: 'string', multiple: true },
  baseline: { type: 'string' },
  episodes: { type: 'string' },
  study: { type: 'string' },
  resume: { type: 'boolean', default: false },
  out: { type: 'string' },
  parallel: { type: 'string' },
  on: { type: 'string' },
  json: { type: 'boolean', default: false },
} as const;

/** A comma-separated list of catalog names: each known, none twice, not empty. */
export function listArg(name: string, raw: string, valid: readonly string[]): string[] {
  const items = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 0) throw new UsageError(`--${name}: empty list; valid: ${valid.join(', ')}`);
  for (const it of items) if (!valid.includes(it)) throw new UsageError(`--${name}: unknown "${it}"; valid: ${valid.join(', ')}`);
  if (new Set(items).size !== items.length) throw new UsageError(`--${name}: "${raw}" lists a name twice`);
  return items;
}

/** `arlarena <command> …` as typed, each argument shell-quoted when it needs it. */
export function commandLine(command: string, args: readonly string[]): string {
  const q = (a: string) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`);
  return ['arlarena', command, ...args.map(q)].join(' ');
}
