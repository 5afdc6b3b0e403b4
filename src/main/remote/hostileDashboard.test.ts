/**
 * A "Ray dashboard" that answers without end, slowly, with garbage or in shapes Ray never uses: every call ends
 * with one RemoteError naming the address and the reason, within its deadline, having read no more than its cap
 * (hardening round three: a 1.2 GB answer killed `arlarena serve` with ERR_STRING_TOO_LONG; one byte every 5 s kept
 * `remote test` waiting for ever). Through the API, remotes.test / remotes.jobs / remotes.jobLog answer
 * UNAVAILABLE and the lab keeps serving. A local HTTP server plays the dashboard (no Ray needed to misbehave). A job
 * log of any length gives its tail: jobLogTail.integration.test.ts.
 */
import { type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHandlerTestLab, type HandlerTestLab } from '../testing/testLab';
import { createRemotesHandlers } from '../api/handlers/remotes';
import { createRunsHandlers } from '../api/handlers/runs';
import { RayClient } from './rayClient';
import { RemoteError } from './targets';
import { standInServer } from '../testing/standInServer';

/** Bytes each endless answer managed to hand to the socket before the client hung up. */
const sent: Record<string, number> = {};

function endless(res: ServerResponse, status: number, key: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  const chunk = Buffer.alloc(64 * 1024, 'a');
  sent[key] = 0;
  const pump = () => {
    while (!res.destroyed) {
      sent[key] += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
  };
  res.on('close', () => undefined);
  pump();
}

const dashboard = standInServer((req, res) => {
  const [mode, ...rest] = (req.url ?? '/').slice(1).split('/');
  const path = `/${rest.join('/')}`;
  res.on('error', () => undefined);
  if (mode === 'huge') return endless(res, 200, 'huge');
  if (mode === 'huge500') return endless(res, 500, 'huge500');
  if (mode === 'slow') {
    res.writeHead(200, { 'content-type': 'application/json' });
    const t = setInterval(() => res.write(' '), 100);
    res.on('close', () => clearInterval(t));
    return;
  }
  if (mode === 'garbage') return void res.end('<html>Welcome to nginx!</html>');
  if (mode === 'shapes') {
    if (path === '/api/version') return void res.end(JSON.stringify({ ray_version: '2.60.0' }));
    if (path === '/api/cluster_status')
      return void res.end(JSON.stringify({ data: { clusterStatus: { loadMetricsReport: { usage: { CPU: 'lots' }, usageByNode: {} } } } }));
    if (path === '/api/jobs/') return void res.end(JSON.stringify({ jobs: 'none' }));
    return void res.end(JSON.stringify({ logs: 42 }));
  }
  res.writeHead(404).end();
});

const client = (mode: string, limits = {}) => new RayClient({ name: mode, url: `${dashboard.base}/${mode}`, token: null }, limits);

async function refusal(p: Promise<unknown>): Promise<RemoteError> {
  const e = await p.then(
    () => null,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(RemoteError);
  return e as RemoteError;
}

describe('RayClient against a hostile dashboard', () => {
  it('an answer without end is refused past the cap (default 16 MiB for small calls), reading no more', async () => {
    const e = await refusal(client('huge').version());
    expect(e.message).toMatch(/over the 16 MiB a GET \/huge\/api\/version may send/);
    // The socket buffers a few MB beyond what was read; nothing near an unbounded stream.
    expect(sent.huge).toBeLessThan(64 * 1024 * 1024);
    const small = await refusal(client('huge', { maxLogBytes: 1024 * 1024 }).jobLogs('x'));
    expect(small.message).toContain('over the 1 MiB');
  });

  it('an error answer without end: the status and the start of its body, 64 KiB read at most', async () => {
    const e = await refusal(client('huge500').version());
    expect(e.message).toMatch(/answered 500: a+$/);
    expect(e.message.length).toBeLessThan(1000);
    expect(sent.huge500).toBeLessThan(64 * 1024 * 1024);
  });

  it('one byte every 100 ms does not restart the deadline: the call ends at it', async () => {
    const t0 = Date.now();
    const e = await refusal(client('slow', { deadlineMs: 800 }).version());
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(e.message).toContain('no complete answer within 0.8 s');
  });

  it('garbage and shapes Ray does not use are one-line errors, not SyntaxError or "is not a function"', async () => {
    expect((await refusal(client('garbage').version())).message).toMatch(
      /answered something that is not JSON \("<html>Welcome to nginx!<\/html>"\): is this address a Ray dashboard\?/,
    );
    expect((await refusal(client('shapes').summary(0))).message).toContain('/api/cluster_status in a shape Ray does not use');
    expect((await refusal(client('shapes').listJobs())).message).toContain('not a list of jobs');
    expect((await refusal(client('shapes').jobLogs('x'))).message).toContain('has no logs text');
  });
});

describe('remotes.* over the API against it', () => {
  let lab: HandlerTestLab;
  beforeAll(async () => {
    lab = await openHandlerTestLab('arl-hostile-', (s) => ({ ...createRemotesHandlers(s), ...createRunsHandlers(s) }));
  });
  afterAll(() => lab?.close());

  it('answers UNAVAILABLE and keeps serving', async () => {
    for (const mode of ['huge', 'huge500', 'garbage', 'shapes']) {
      expect((await lab.call('remotes.add', { name: mode, url: `${dashboard.base}/${mode}` })).ok).toBe(true);
      const t = await lab.call('remotes.test', { name: mode });
      expect(t.error?.code, `${mode}: ${JSON.stringify(t)}`).toBe('UNAVAILABLE');
    }
    expect((await lab.call('remotes.jobs', { name: 'shapes' })).error).toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringContaining('not a list of jobs'),
    });
    expect((await lab.call('remotes.jobLog', { name: 'huge', submissionId: 'raysubmit_1' })).error).toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringContaining('answered something that is not JSON ("aaaa'),
    });
    expect((await lab.call('runs.list', {})).ok).toBe(true);
  });
});
