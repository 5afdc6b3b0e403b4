/**
 * The README's "command line" table and docs/guides/cli.md list every command the CLI registers, and nothing it
 * does not: a new command is one line in src/main/cli/commands/index.ts and one row in each table.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { commands } from '../../src/main/cli/commands/index';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The first cell of every table row that is a single `code` word: `| \`train\` | … |`. */
function tableCommands(file: string): string[] {
  const rows = readFileSync(join(ROOT, file), 'utf8').split('\n');
  return rows.flatMap((l) => {
    const m = /^\|\s*`([a-z][a-z-]*)`\s*\|/.exec(l);
    return m ? [m[1]] : [];
  });
}

describe.each(['README.md', 'docs/guides/cli.md'])('%s command table', (file) => {
  it('has one row per registered command', () => {
    expect(tableCommands(file).sort(), `update the command table in ${file}`).toEqual(Object.keys(commands).sort());
  });
});
