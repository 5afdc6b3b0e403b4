/** A CliContext for tests: the command's stdout and stderr collected as strings, no terminal. */
import { PassThrough } from 'node:stream';
import type { CliContext } from '../cli/types';

export function testCliContext(dataDir: string): { ctx: CliContext; out: () => string; err: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let o = '';
  let e = '';
  stdout.on('data', (d) => (o += String(d)));
  stderr.on('data', (d) => (e += String(d)));
  return { ctx: { dataDir, stdout, stderr, isTTY: false }, out: () => o, err: () => e };
}
