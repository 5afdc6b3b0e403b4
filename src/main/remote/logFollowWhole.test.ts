/**
 * Following a job by reading its whole log (the poll fallback, and the end of a job whose driver never ran) streams
 * Ray's answer instead of holding it: every line arrives once, in order, however long the log grows. It used to read
 * each answer whole, as one string, and refused any past the client's whole-log cap (256 MiB by default), so a long
 * job's follow gave up. Here the cap is set to 256 KiB and the log grows to about 1 MB. A local HTTP server plays
 * the dashboard (job status and `{"logs": …}` escaped as Python's json.dumps writes it); no Ray is needed for this.
 */
import { describe, expect, it } from 'vitest';
import { followJobLog, newFollowStats } from './logFollow';
import { RayClient } from './rayClient';
import { standInServer } from '../testing/standInServer';

const LINES = 400;
/** Every 40th line is 100,000 characters (a checkpoint's base64 in a real log): ten of them pass the cap. */
const line = (i: number) => (i % 40 === 0 ? `(TaskRunner pid=3) ${'Q'.repeat(100_000)} ${i}` : `line ${i}: "quoted" café 🚀\ttab`);
/** The log's first `n` lines, as the job has written them so far. */
const logOf = (n: number) => Array.from({ length: n }, (_, i) => `${line(i + 1)}\n`).join('');
const asPython = (logs: string) =>
  JSON.stringify({ logs }).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

let statusReads = 0;
let logReads = 0;

const dashboard = standInServer((req, res) => {
  const url = req.url ?? '';
  res.setHeader('content-type', 'application/json');
  if (url === '/api/jobs/raysubmit_w') {
    statusReads++;
    const status = statusReads > 3 ? 'SUCCEEDED' : 'RUNNING';
    return void res.end(
      JSON.stringify({ submission_id: 'raysubmit_w', status, message: null, entrypoint: 'x', start_time: 1, end_time: null }),
    );
  }
  if (url === '/api/jobs/raysubmit_w/logs') {
    logReads++;
    // The log grows between polls; once the job is over it is whole.
    return void res.end(asPython(logOf(statusReads > 3 ? LINES : Math.min(LINES, 120 * statusReads))));
  }
  res.writeHead(404).end();
});

describe('following a job by its whole log', () => {
  it('hands on every line once, in order, from answers far past the whole-log cap', async () => {
    const client = new RayClient({ name: 'w', url: dashboard.base, token: null }, { maxLogBytes: 256 * 1024 });
    expect(asPython(logOf(LINES)).length).toBeGreaterThan(3 * 256 * 1024);
    const got: string[] = [];
    const stats = newFollowStats('poll');
    const { info } = await followJobLog(
      client,
      'raysubmit_w',
      (l) => void got.push(l),
      async () => false,
      { mode: 'poll', stats },
    );
    expect(info.status).toBe('SUCCEEDED');
    expect(got.length).toBe(LINES);
    expect(got).toEqual(Array.from({ length: LINES }, (_, i) => line(i + 1)));
    // Each round read the whole (growing) log again; only the part past what was handled was handed on.
    expect(logReads).toBeGreaterThanOrEqual(4);
    expect(stats.handled).toBe(logOf(LINES).length);
  }, 60_000);
});
