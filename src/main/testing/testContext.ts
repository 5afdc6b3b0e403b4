/**
 * A CliContext for tests: the command's stdout and stderr collected as strings, no terminal. Each write is kept as it
 * is made (Writable's write, not a PassThrough's 'data' events, which can come a tick after the command resolved), so
 * out() and err() read right after `await command.run(…)` hold all it wrote.
 */
import { Writable } from 'node:stream';
import type { CliContext } from '../cli/types';

export interface TestCliOptions {
  /** stderr goes into out() as well, in the order written (what a terminal shows); err() then stays empty. */
  merged?: boolean;
  /** Where resumed runs train: a stand-in job's (testing/jobs), as the CLI's own commands take it. */
  jobs?: CliContext['jobs'];
}

export function testCliContext(dataDir: string, opts: TestCliOptions = {}): { ctx: CliContext; out: () => string; err: () => string } {
  let o = '';
  let e = '';
  const sink = (add: (s: string) => void) =>
    new Writable({
      write(chunk, _enc, cb) {
        add(String(chunk));
        cb();
      },
    });
  const stdout = sink((s) => (o += s));
  const stderr = opts.merged ? stdout : sink((s) => (e += s));
  const ctx: CliContext = { dataDir, stdout, stderr, isTTY: false, ...(opts.jobs ? { jobs: opts.jobs } : {}) };
  return { ctx, out: () => o, err: () => e };
}
