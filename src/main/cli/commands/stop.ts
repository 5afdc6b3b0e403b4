/**
 * `arlarena stop RUN` — stop a run another process is training (the app, `arlarena serve`, `arlarena train`):
 * a stop request file the owner's session manager picks up within about a second; the run then saves a
 * checkpoint and ends `stopped` (resumable). A run whose process is gone was already marked interrupted when the
 * store was opened; stopping it just records that it should stay stopped.
 */
import { UsageError, type CliCommand, parseCommandArgs } from '../types';
import { openRun } from './runs';

const USAGE = `Usage: arlarena stop RUN [--wait SECONDS] [--json]
  Asks the process training RUN to stop it after the current step (a checkpoint is kept; arlarena resume RUN
  continues it). Waits up to --wait seconds (default 60) for the run to end, then reports its status.
  RUN: a run id, a unique id prefix, the short id the app shows (the id's last 6 characters), or a unique run name.
  Exit code: 0 stopped (or already ended), 1 still running after the wait or not found.`;

const ACTIVE = new Set(['running', 'paused', 'queued']);

const command: CliCommand = {
  summary: 'stop a run another process is training (checkpoint kept; resumable)',
  usage: USAGE,
  async run(args, ctx) {
    const { values: v, positionals: pos } = parseCommandArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: { wait: { type: 'string' }, json: { type: 'boolean' } },
    });
    if (pos.length !== 1) throw new UsageError('expected exactly one RUN');
    const waitS = v.wait === undefined ? 60 : Number(v.wait);
    if (!Number.isFinite(waitS) || waitS < 0) throw new UsageError(`--wait ${JSON.stringify(v.wait)}: expected a number of seconds ≥ 0`);
    const found = await openRun(ctx, 'stop', pos[0]);
    if (!found) return 1;
    const { store, run } = found;
    const report = (status: string, note: string, code: number): number => {
      ctx.stdout.write(v.json ? `${JSON.stringify({ runId: run.id, status, note })}\n` : `${run.id}: ${note}\n`);
      return code;
    };
    try {
      if (run.status === 'interrupted') {
        await store.updateRun(run.id, { status: 'stopped', etaSeconds: null });
        return report('stopped', 'its process was gone (it was interrupted); marked stopped — arlarena resume continues it', 0);
      }
      if (!ACTIVE.has(run.status)) return report(run.status, `not running (${run.status}); nothing to stop`, 0);
      await store.requestStop(run.id);
      const deadline = Date.now() + waitS * 1000;
      for (;;) {
        const cur = await store.getRun(run.id);
        if (!cur || !ACTIVE.has(cur.status)) {
          await store.takeStopRequest(run.id);
          return report(cur?.status ?? 'deleted', `${cur?.status ?? 'deleted'} at step ${cur?.step ?? '?'}`, 0);
        }
        const owner = await store.ownerOf(run.id);
        if (!owner?.alive && cur.status !== 'queued') {
          await store.takeStopRequest(run.id);
          await store.updateRun(run.id, { status: 'stopped', etaSeconds: null });
          return report('stopped', 'its process ended before it could stop the run; marked stopped', 0);
        }
        if (Date.now() >= deadline)
          return report(
            cur.status,
            `asked to stop; still ${cur.status} after ${waitS} s (the request stays; it stops after its current step)`,
            1,
          );
        await new Promise((r) => setTimeout(r, 250));
      }
    } finally {
      await store.close();
    }
  },
};

export default command;
