/**
 * A CliContext for tests: the command's stdout and stderr collected as strings, no terminal. Each write is kept as it
 * is made (Writable's write, not a PassThrough's 'data' events, which can come a tick after the command resolved), so
 * out() and err() read right after `await command.run(…)` hold all it wrote.
 */
import { Writable } from 'node:stream';
import type { CliContext } from '../cli/types';

export function testCliContext(dataDir: string): { ctx: CliContext; out: () => string; err: () => string } {
  let o = '';
  let e = '';
  const stdout = new Writable({
    write(chunk, _enc, cb) {
      o += String(chunk);
      cb();
    },
  });
  const stderr = new Writable({
    write(chunk, _enc, cb) {
      e += String(chunk);
      cb();
    },
  });
  return { ctx: { dataDir, stdout, stderr, isTTY: false }, out: () => o, err: () => e };
}
