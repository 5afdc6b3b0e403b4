/** `arlarena follow PATH` — tail a training log that is still being written into a live imported run. */
import { ImportError } from '../../imports/importLogs';
import { LogFollower } from '../../imports/follow';
import { TrackerDbFollower } from '../../imports/followTrackers';
import { isSqliteDbFile } from '../../imports/sqliteReadOnly';
import { UsageError, type CliCommand, parseCommandArgs } from '../types';
import { openStore } from './runs';

const USAGE = `Usage: arlarena follow PATH [--format F] [--name N] [--tags T] [--until-idle SECONDS] [--json]
  Tails a growing training log (any text format \`arlarena import\` reads) or a TensorBoard run folder that
  gains event files, appending each new step to one run (status running) and running the collapse detector
  on every step; alerts are printed as they are raised. Ends on Ctrl-C / SIGTERM, or after --until-idle
  SECONDS without new bytes: the run is then marked completed.
  The newest step of a text log appears when the next one starts, or after two quiet polls (then lines that
  arrive later for that step are counted in skipped, never stored twice).
  Truncated or rotated log (shrinks, or a new file in its place): read again from the start; steps already
  stored are recognised and not stored twice. A restarted training process that writes its own steps again
  (from 0, or from a checkpoint) ends the current run and continues in a new linked run "<name> (restart 2)",
  so two attempts are never mixed in one curve. A source holding several runs (a W&B CSV) follows its first.
  A W&B run's growing .wandb file is followed like a log. A tracker's SQLite database (MLflow's mlflow.db,
  a Trackio <project>.db) is polled read-only for new rows: one lab run per tracker run, new runs included,
  each keeping its first 10,000 distinct keys (the rest counted in skipped, as an import does).
  --format F        force the format (see \`arlarena import --help\`)
  --name N          run name (default: the file or folder name; a database's runs: "N · <tracker run name>")
  --tags T          comma-separated tags
  --until-idle S    stop after S seconds without new data
  --poll-ms MS      polling interval backing up file watching (default 500)
  --json            one JSON object per event: {"event":"started"|"alert"|"restart"|"notice"|"stopped", …}`;

const command: CliCommand = {
  summary: 'follow a growing training log live (detector on every new step)',
  usage: USAGE,
  async run(args, ctx) {
    const parsed = parseCommandArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: {
        json: { type: 'boolean' },
        format: { type: 'string' },
        name: { type: 'string' },
        tags: { type: 'string' },
        'until-idle': { type: 'string' },
        'poll-ms': { type: 'string' },
      },
    });
    const { values: v, positionals: pos } = parsed;
    if (pos.length !== 1) throw new UsageError('expected exactly one PATH (a log file or a TensorBoard run folder)');
    let idle: number | undefined;
    if (v['until-idle'] !== undefined) {
      idle = Number(v['until-idle']);
      if (!Number.isFinite(idle) || idle <= 0)
        throw new UsageError(`--until-idle must be a positive number of seconds, got "${v['until-idle']}"`);
    }
    let pollMs: number | undefined;
    if (v['poll-ms'] !== undefined) {
      pollMs = Number(v['poll-ms']);
      if (!Number.isInteger(pollMs) || pollMs < 10 || pollMs > 60_000)
        throw new UsageError(`--poll-ms must be an integer from 10 to 60000, got "${v['poll-ms']}"`);
    }
    const tags =
      v.tags === undefined
        ? undefined
        : [
            ...new Set(
              v.tags
                .split(',')
                .map((t) => t.trim())
                .filter((t) => t.length > 0),
            ),
          ];
    const out = (o: Record<string, unknown>, text: string) => ctx.stdout.write(v.json ? `${JSON.stringify(o)}\n` : `${text}\n`);
    const store = await openStore(ctx);
    // A folder, or a file not there: LogFollower says which.
    if (v.format === undefined && (await isSqliteDbFile(pos[0]))) {
      let db: TrackerDbFollower;
      // Alerts of the first poll (made while starting) print after the 'started' line.
      let early: Array<() => void> | null = [];
      try {
        db = await TrackerDbFollower.start(store, pos[0], {
          tags,
          pollMs,
          idleSeconds: idle,
          name: v.name?.trim() || undefined,
          onAlert: (runId, a, kind) => {
            if (kind !== 'raised') return;
            const say = () =>
              out(
                { event: 'alert', runId, alert: a },
                `[${a.severity.toUpperCase()}] run ${runId} step ${a.firstStep}: ${a.rule} on ${a.metric} — ${a.message}`,
              );
            if (early) early.push(say);
            else say();
          },
        });
      } catch (e) {
        await store.close();
        if (e instanceof ImportError) {
          ctx.stderr.write(`arlarena follow: refused: ${e.message}\n`);
          return 1;
        }
        throw e;
      }
      out({ event: 'started', format: db.format, path: pos[0] }, `following ${db.format} database ${pos[0]} (Ctrl-C to stop)`);
      for (const say of early) say();
      early = null;
      const stopDb = () => void db.stop().catch(() => undefined);
      process.once('SIGINT', stopDb);
      process.once('SIGTERM', stopDb);
      try {
        const info = await db.done;
        const ids = Object.values(info.runs).filter((x): x is string => x !== null);
        out(
          { event: 'stopped', ...info, runIds: ids },
          `stopped: ${ids.length} run${ids.length === 1 ? '' : 's'} (${ids.join(', ')}), ${info.steps} steps stored${info.error ? ` — ${info.error}` : ''}`,
        );
        return info.status === 'completed' ? 0 : 1;
      } finally {
        process.removeListener('SIGINT', stopDb);
        process.removeListener('SIGTERM', stopDb);
        await store.close();
      }
    }
    let follower: LogFollower;
    try {
      follower = await LogFollower.start(store, pos[0], {
        format: v.format,
        name: v.name?.trim() || undefined,
        tags,
        idleSeconds: idle,
        pollMs,
        onAlert: (runId, a, kind) => {
          if (kind !== 'raised') return;
          out(
            { event: 'alert', runId, alert: a },
            `[${a.severity.toUpperCase()}] step ${a.firstStep}: ${a.rule} on ${a.metric} — ${a.message}`,
          );
        },
        onRestart: (runId, previousRunId) =>
          out(
            { event: 'restart', runId, previousRunId },
            `the source restarted: run ${previousRunId} completed, following into run ${runId}`,
          ),
        onNotice: (m) => out({ event: 'notice', message: m }, `note: ${m}`),
      });
    } catch (e) {
      await store.close();
      if (e instanceof ImportError) {
        ctx.stderr.write(`arlarena follow: refused: ${e.message}\n`);
        return 1;
      }
      throw e;
    }
    out({ event: 'started', runId: follower.runId, path: pos[0] }, `following ${pos[0]} into run ${follower.runId} (Ctrl-C to stop)`);
    const stop = () => void follower.stop();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    try {
      const info = await follower.done;
      // Why a follow ended stopped (nothing was ever read, the file was replaced, …) is in the run's record: say it
      // here too, or "stopped at step 0 (0 steps stored)" is all the user sees.
      const error = info.status === 'completed' ? null : ((await store.getRun(info.runId))?.error ?? null);
      const summary = { event: 'stopped', ...info, runIds: follower.runIds, ...(error ? { error } : {}) };
      out(
        summary,
        `stopped: run ${info.runId} ${info.status} at step ${info.step} (${info.steps} steps stored${follower.runIds.length > 1 ? `; runs ${follower.runIds.join(', ')}` : ''})${error ? ` — ${error}` : ''}`,
      );
      return info.status === 'completed' ? 0 : 1;
    } finally {
      process.removeListener('SIGINT', stop);
      process.removeListener('SIGTERM', stop);
      await store.close();
    }
  },
};

export default command;
