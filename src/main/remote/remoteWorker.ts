/**
 * The trainer's side of a run on a Ray cluster: `arlarena train --line-protocol` (the Ray job's entrypoint) runs
 * the real trainer in this process, on the node's own compute, and reports everything it produces as line
 * protocol messages on stdout (lineProtocol.ts) instead of into a run store: the lab that submitted the job owns
 * the run and writes it from the job's log. The run config comes resolved and validated from the lab, in the
 * job's environment (ARLARENA_RUN_CONFIG, JSON), with the run id (ARLARENA_RUN_ID), so both sides train exactly
 * the same config.
 *
 * Ray's stop sends SIGTERM and kills the job a few seconds later: SIGTERM asks the trainer to stop after the step
 * in progress, which writes a checkpoint and reports `done` with status `stopped`.
 */
import { encodeLine } from './lineProtocol';
import { checkpointLine, trajectoryLine } from './transit';
import type { TrainerHooks } from '../../core/training/types';

export const RUN_CONFIG_ENV = 'ARLARENA_RUN_CONFIG';
export const RUN_ID_ENV = 'ARLARENA_RUN_ID';

export async function runOverLines(out: NodeJS.WritableStream = process.stdout): Promise<number> {
  const raw = process.env[RUN_CONFIG_ENV];
  const runId = process.env[RUN_ID_ENV] ?? 'remote';
  const say = (type: Parameters<typeof encodeLine>[0], body: unknown) => out.write(`\n${encodeLine(type, body)}\n`);
  if (!raw) {
    say('failed', {
      error: `${RUN_CONFIG_ENV} is not set: this command is the entrypoint of a lab run on Ray, submitted by "arlarena train --on"`,
    });
    return 1;
  }
  let stop = false;
  const onTerm = () => {
    stop = true;
  };
  process.on('SIGTERM', onTerm);
  process.on('SIGINT', onTerm);
  try {
    const config = JSON.parse(raw) as Record<string, unknown>;
    const { trainingJob } = await import('../sessions/jobs/training');
    const hooks: TrainerHooks = {
      onMetrics: (rec) => say('metric', rec),
      // Each file goes with its SHA-256, taken here before it enters the log; the lab checks them (transit.ts).
      onTrajectory: (t) => say('trajectory', trajectoryLine(t)),
      onCheckpoint: async (c) => {
        say('checkpoint', checkpointLine(c));
      },
      onStatus: (s) => say('status', s),
      checkControl: async () => (stop ? 'stop' : 'continue'),
    };
    const seed = typeof config.seed === 'number' ? config.seed : 0;
    const result = await trainingJob.run({ runId, config, seed, dataDir: process.cwd() }, hooks);
    say('done', { status: result.status, step: result.step, backend: result.backend });
    return 0;
  } catch (e) {
    say('failed', { error: e instanceof Error ? e.message : String(e) });
    return 1;
  } finally {
    process.off('SIGTERM', onTerm);
    process.off('SIGINT', onTerm);
  }
}
