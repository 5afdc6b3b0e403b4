/**
 * Follow a Ray job that writes a verl console log (the verl hand-off, or any main_ppo job) into a lab run, live:
 * the job's log is read as it grows (followJobLog) and appended to a local copy under the data directory
 * (remote-logs/<job>.log), and the import issue's live follower (imports/follow.ts) follows that copy with the
 * verl console parser — so the run, its steps, the detector's live alerts, truncation/restart handling are the
 * ones `arlarena follow` has. Stop asks Ray to stop the job; the run ends when the job does.
 */
import { appendFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Alert, FollowInfo } from '../../shared/api';
import type { RunStore } from '../store/runStore';
import { LogFollower } from '../imports/follow';
import type { RayClient, RayJobInfo } from './rayClient';
import { followJobLog } from './rayTarget';

export interface FollowJobOptions {
  readonly name?: string;
  readonly tags?: readonly string[];
  readonly onAlert?: (runId: string, alert: Alert, kind: 'raised' | 'updated') => void;
  readonly onStarted?: (runId: string, logCopy: string) => void;
  /** Polled while the job runs: true asks Ray to stop it. */
  readonly shouldStop?: () => boolean;
}

export async function followRayJobIntoRun(
  client: RayClient,
  store: RunStore,
  submissionId: string,
  opts: FollowJobOptions = {},
): Promise<{ follow: FollowInfo; job: RayJobInfo; runIds: readonly string[] }> {
  const dir = join(store.dataDir, 'remote-logs');
  await mkdir(dir, { recursive: true });
  const copy = join(dir, `${submissionId.replace(/[^A-Za-z0-9_.-]/g, '_')}.log`);
  await appendFile(copy, '');
  const follower = await LogFollower.start(store, copy, {
    format: 'verl-console',
    name: opts.name ?? `verl on Ray · ${submissionId}`,
    tags: [...(opts.tags ?? []), 'on:ray'],
    pollMs: 200,
    ...(opts.onAlert ? { onAlert: opts.onAlert } : {}),
  });
  opts.onStarted?.(follower.runId, copy);
  let pending: string[] = [];
  let writes: Promise<void> = Promise.resolve();
  const flush = () => {
    if (pending.length === 0) return writes;
    const text = `${pending.join('\n')}\n`;
    pending = [];
    writes = writes.then(() => appendFile(copy, text));
    return writes;
  };
  // Lines are written in batches: when 256 are waiting, and every 200 ms, so a slow log still shows up live.
  const timer = setInterval(() => void flush(), 200);
  let job: RayJobInfo;
  try {
    ({ info: job } = await followJobLog(
      client,
      submissionId,
      (line) => {
        pending.push(line);
        if (pending.length >= 256) return flush();
      },
      async () => opts.shouldStop?.() ?? false,
    ));
    await flush();
  } finally {
    clearInterval(timer);
    await flush().catch(() => undefined);
  }
  // Let the follower read the last bytes, then end the run (stop completes a text parser's open step).
  await new Promise((r) => setTimeout(r, 300));
  await follower.stop();
  const follow = await follower.done;
  return { follow, job, runIds: follower.runIds };
}
