/**
 * `arlarena resume RUN` — continue an interrupted, stopped, failed or paused run from its latest checkpoint in
 * this process (a run with no checkpoint yet starts over), and wait for it to end, as `arlarena train` does.
 */
import { SessionError, SessionManager } from '../../sessions/sessionManager';
import { UsageError, type CliCommand, parseCommandArgs } from '../types';
import { openRun } from './runs';
import { targetOfRun } from '../../remote/computeTarget';
import { RemoteError } from '../../remote/targets';

const USAGE = `Usage: arlarena resume RUN [--json]
  Continues RUN from its latest checkpoint (metrics and trajectories after it are dropped first) and trains it
  to its total steps in this process. Works on interrupted, stopped, failed and paused runs; a run another live
  process is training is refused (stop it there, or with arlarena stop RUN).
  RUN: a run id, a unique id prefix, the short id the app shows (the id's last 6 characters), or a unique run name.
  Exit code: 0 completed or stopped, 1 failed or refused.`;

const command: CliCommand = {
  summary: 'continue an interrupted or stopped run from its last checkpoint',
  usage: USAGE,
  async run(args, ctx) {
    const { values: v, positionals: pos } = parseCommandArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: { json: { type: 'boolean' } },
    });
    if (pos.length !== 1) throw new UsageError('expected exactly one RUN');
    const found = await openRun(ctx, 'resume', pos[0]);
    if (!found) return 1;
    const { store, run } = found;
    // A run trained on a Ray cluster (tags ray:NAME / ray-url:URL) re-attaches to its job there and catches up
    // from its log.
    let target: Awaited<ReturnType<typeof targetOfRun>> | null = null;
    try {
      target = await targetOfRun(ctx.dataDir, run.tags);
      await target.preflight();
    } catch (e) {
      await store.close();
      // A run started --on URL recorded no token (none is ever recorded): say how to give it one.
      if (e instanceof RemoteError && target?.kind === 'ray' && !target.tags.some((t) => t.startsWith('ray:'))) {
        throw new RemoteError(
          `${e.message}. ${run.id} was started with --on ${target.url}: add that address as a remote with its token (arlarena remote add NAME ${target.url} --token-file FILE), then resume again — resume uses the token of a remote with the run's address`,
        );
      }
      throw e;
    }
    if (target.kind === 'ray') ctx.stderr.write(`${run.id} trained on ${target.label}: re-attaching to its Ray job (or resuming there)\n`);
    const sessions = new SessionManager({ store, concurrency: 1, ...ctx.jobs, ...(target.spawn ? { spawn: target.spawn } : {}) });
    const tty = ctx.isTTY && !v.json;
    try {
      try {
        await sessions.resume(run.id);
      } catch (e) {
        if (!(e instanceof SessionError)) throw e;
        ctx.stderr.write(`arlarena resume: ${e.message}\n`);
        return 1;
      }
      if (!v.json) {
        // A run that ended before its first checkpoint (a full disk, a kill) has nothing to continue from.
        const fromScratch = target.kind !== 'ray' && (await store.checkpointSteps(run.id).catch(() => [] as number[])).length === 0;
        ctx.stderr.write(
          fromScratch
            ? `${run.id} has no checkpoint: there is nothing to resume from, so it trains again from the start (${run.status} at step ${run.step} of ${run.totalSteps})\n`
            : `resuming ${run.id} (${run.status} at step ${run.step} of ${run.totalSteps})\n`,
        );
      }
      const timer = tty
        ? setInterval(() => ctx.stderr.write(`\r${run.id}: step ${store.cached(run.id)?.step ?? '?'} / ${run.totalSteps}\x1b[K`), 1000)
        : null;
      const status = await sessions.waitFor(run.id);
      if (timer) clearInterval(timer);
      if (tty) ctx.stderr.write('\n');
      const rec = await store.getRun(run.id);
      // On a full disk the record may not hold why the run ended; the session does.
      const error = sessions.outcome(run.id)?.error ?? rec?.error ?? null;
      if (v.json) ctx.stdout.write(`${JSON.stringify({ runId: run.id, status, step: rec?.step ?? null, error })}\n`);
      else
        ctx.stdout.write(
          `${run.id}: ${status} at step ${rec?.step ?? '?'} of ${run.totalSteps}${error && status === 'failed' ? ` — ${error}` : ''}\n`,
        );
      return status === 'completed' || status === 'stopped' ? 0 : 1;
    } finally {
      await sessions.dispose();
      await store.close();
    }
  },
};

export default command;
