/**
 * Following a long Ray job log, the two ways side by side in one run, on a real local Ray head
 * (tests/support/ray.ts: token auth on, stopped by its pid at the end).
 *
 *   npm run bench:ray-tail                     table
 *   npm run bench:ray-tail -- --json           one JSON object per line
 *   npm run bench:ray-tail -- --mb 20 --seconds 10
 *
 * One job writes --mb MB of log at once (a long run's history), then one line every 100 ms for --seconds. It is
 * followed by both modes of followJobLog (logFollow.ts) at the same time: 'poll' reads the whole log every round
 * (`GET /api/jobs/{id}/logs`, the follow before the stream), and 'stream' holds the state API's log stream open.
 * Both must hand on the same lines. Printed per mode: characters received from the head, log reads, the mean
 * time a read took, characters received per character handed on, and the time from submission to the end of the
 * follow. The load average is printed too, since the wall clock on a shared machine measures the wait for a core.
 */
import { loadavg } from 'node:os';
import { benchArgs, usageError } from './args';
import { startRayHead } from '../tests/support/ray';
import { RayClient } from '../src/main/remote/rayClient';
import { followJobLog, newFollowStats, type LogFollowStats } from '../src/main/remote/logFollow';

const USAGE = `Usage: npm run bench:ray-tail -- [--json] [--mb N] [--seconds N]
  Starts a real Ray head on 127.0.0.1 (token auth on), runs one job with a long log and follows it by
  whole-log polling and by the log stream at once.
  --json       one JSON object per line
  --mb N       MB the job writes at its start (default 20)
  --seconds N  seconds it then writes one line per 100 ms (default 10)
  --help       this text`;

const opts = benchArgs('ray-tail', USAGE, {
  json: { type: 'boolean', default: false },
  mb: { type: 'string', default: '20' },
  seconds: { type: 'string', default: '10' },
});
const mb = Number(opts.mb);
const seconds = Number(opts.seconds);
if (!(mb >= 0)) usageError('ray-tail', USAGE, `--mb must be a number >= 0, got "${opts.mb}"`);
if (!(seconds >= 1)) usageError('ray-tail', USAGE, `--seconds must be a number >= 1, got "${opts.seconds}"`);

const FILLER = 'filler line of a long job log, as a long run leaves behind ........';
const fillerLines = Math.round((mb * 1e6) / (FILLER.length + 1));
const tailLines = seconds * 10;

const head = await startRayHead();
try {
  const client = new RayClient({ name: null, url: head.url, token: head.token });
  const id = `bench-tail-${Date.now()}`;
  const entrypoint = `sh -c 'yes "${FILLER}" | head -n ${fillerLines}; i=0; while [ $i -lt ${tailLines} ]; do i=$((i+1)); echo "tail line $i"; sleep 0.1; done'`;
  for (let i = 0; ; i++) {
    try {
      await client.submitJob({ submissionId: id, entrypoint, runtimeEnv: {} });
      break;
    } catch (e) {
      // A head that has just started may not have its job agent yet ("try again later").
      if (i > 60 || !/No available agent/.test((e as Error).message)) throw e;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  const t0 = Date.now();
  const follow = async (mode: 'poll' | 'stream') => {
    const stats = newFollowStats(mode);
    let lines = 0;
    await followJobLog(
      client,
      id,
      () => void lines++,
      async () => false,
      { mode, stats },
    );
    return { stats, lines, ms: Date.now() - t0 };
  };
  const [poll, stream] = await Promise.all([follow('poll'), follow('stream')]);
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  const row = (r: { stats: LogFollowStats; lines: number; ms: number }, mode: string) => ({
    mode,
    logMB: +(r.stats.handled / 1e6).toFixed(2),
    receivedMB: +(r.stats.received / 1e6).toFixed(2),
    reads: r.stats.reads,
    msPerRead: +(r.stats.readMs / Math.max(1, r.stats.reads)).toFixed(1),
    receivedPerHandled: +(r.stats.received / Math.max(1, r.stats.handled)).toFixed(2),
    fullReads: r.stats.fullReads,
    reconnects: r.stats.reconnects,
    lines: r.lines,
    followSeconds: +(r.ms / 1000).toFixed(1),
  });
  const rows = [row(poll, 'poll (whole log each round)'), row(stream, 'stream (state API log stream)')];
  const same = poll.lines === stream.lines && poll.stats.handled === stream.stats.handled;
  if (opts.json) {
    for (const r of rows) process.stdout.write(`${JSON.stringify({ bench: 'ray-tail', ...r, sameLines: same, load })}\n`);
  } else {
    process.stdout.write(
      `Ray log follow: ${mb} MB written at once, then ${tailLines} lines over ${seconds} s; both modes at once on one head (load ${load})\n\n`,
    );
    const cols = Object.keys(rows[0]!) as (keyof (typeof rows)[number])[];
    const w = cols.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c]).length)));
    process.stdout.write(`${cols.map((c, i) => c.padEnd(w[i]!)).join('  ')}\n`);
    for (const r of rows) process.stdout.write(`${cols.map((c, i) => String(r[c]).padEnd(w[i]!)).join('  ')}\n`);
    process.stdout.write(
      `\nsame lines handed on by both: ${same ? 'yes' : 'NO'}; the poll received ${(poll.stats.received / Math.max(1, stream.stats.received)).toFixed(1)}× the characters of the stream\n`,
    );
  }
  if (!same) process.exitCode = 1;
} finally {
  await head.stop();
}
