/**
 * The tail of a long Ray job log (remotes.jobLog, the Cluster view's log tail): Ray answers `{"logs": "<the whole
 * log>"}`, and the lab used to read that answer whole, refusing it past 32 MiB, so a long training job's log showed no
 * tail at all. It is now read as it arrives (logTail.ts), keeping only the last lines. A local HTTP server plays the
 * dashboard and streams a 140 MB log; the test checks the tail line by line, the count, and that the reader's buffer
 * holds the tail, not the log (peakHeldChars). Slow (it pushes 140 MB through JSON decoding twice): integration tier.
 */
import { type ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { openHandlerTestLab } from '../testing/testLab';
import { createRemotesHandlers } from '../api/handlers/remotes';
import { RayClient } from './rayClient';
import { KEEP_CHARS } from './logTail';
import { standInServer } from '../testing/standInServer';

/**
 * A long job log served as Ray serves it: `{"logs": "…"}` with the log JSON-escaped as Python's json.dumps does
 * (ensure_ascii: non-ASCII as \uXXXX, a surrogate pair for an emoji), a blank line after every tenth line as Ray's
 * job logs have, Windows line ends on every third, a 300 kB protocol line every 200,000 lines, and near the end a
 * long protocol line and a long plain line. About 140 MB: past the 32 MiB the log tail used to read whole.
 */
const BIG_LINES = 1_600_000;
const LONG_PROTOCOL = BIG_LINES - 10;
const LONG_PLAIN = BIG_LINES - 5;
function bigLine(i: number): string {
  if (i === LONG_PROTOCOL || i % 200_000 === 0)
    return `(TaskRunner pid=7) @arlarena:checkpoint {"step":${i},"b64":"${'QUJD'.repeat(75_000)}"}`;
  if (i === LONG_PLAIN) return `plain ${i} ${'y'.repeat(10_000)}`;
  return `line ${i} of ${BIG_LINES}: "quoted" café 🚀\ttab ${'x'.repeat(24)}`;
}
function bigBlock(b: number): string {
  let raw = '';
  for (let i = b * 1000 + 1; i <= Math.min((b + 1) * 1000, BIG_LINES); i++)
    raw += `${bigLine(i)}${i % 3 === 0 ? '\r\n' : '\n'}${i % 10 === 0 ? '\n' : ''}`;
  return JSON.stringify(raw)
    .slice(1, -1)
    .replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
function serveBigLog(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"logs": "');
  let b = 0;
  const blocks = Math.ceil(BIG_LINES / 1000);
  const pump = () => {
    while (b < blocks) if (!res.write(bigBlock(b++))) return void res.once('drain', pump);
    res.end('"}');
  };
  pump();
}

const dashboard = standInServer((req, res) => {
  res.on('error', () => undefined);
  if ((req.url ?? '').startsWith('/biglog/api/jobs/')) return serveBigLog(res);
  res.writeHead(404).end();
});

const client = (mode: string) => new RayClient({ name: mode, url: `${dashboard.base}/${mode}`, token: null });

describe('the tail of a long job log', () => {
  /** Non-blank lines n−k+1 … n as the Cluster view shows them (protocol lines and lines past KEEP_CHARS shortened). */
  const expectedTail = (k: number) =>
    Array.from({ length: k }, (_, j) => bigLine(BIG_LINES - k + 1 + j)).map((l) =>
      l.includes('@arlarena:') && l.length > 200
        ? `${l.slice(0, 160)}… (${l.length} characters)`
        : l.length > KEEP_CHARS
          ? `${l.slice(0, KEEP_CHARS)}… (${l.length} characters)`
          : l,
    );

  it('reads a 140 MB log as it arrives: the right last 2,000 lines and count, holding no more than the tail', async () => {
    const rss = () => process.memoryUsage.rss();
    const before = rss();
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rss())), 5);
    const t0 = Date.now();
    const got = await client('biglog').jobLogTail('raysubmit_big', 2000);
    const ms = Date.now() - t0;
    clearInterval(sampler);
    peak = Math.max(peak, rss());
    expect(got.totalLines).toBe(BIG_LINES);
    expect(got.lines).toHaveLength(2000);
    // Each kept line is whole up to KEEP_CHARS characters, with its real length beside it.
    const whole = Array.from({ length: 2000 }, (_, j) => bigLine(BIG_LINES - 1999 + j));
    expect(got.lines.map((l) => l.length)).toEqual(whole.map((l) => l.length));
    expect(got.lines.map((l) => l.text)).toEqual(whole.map((l) => l.slice(0, KEEP_CHARS)));
    // The buffer the tail holds: at most 2,000 lines of KEEP_CHARS characters (here far less: short lines).
    expect(got.peakHeldChars).toBeLessThanOrEqual(2000 * KEEP_CHARS);
    const grownMb = (peak - before) / 1e6;
    console.log(
      `[job log tail] 140 MB job log → tail of 2000 lines in ${ms} ms; peak RSS grew ${grownMb.toFixed(0)} MB; tail held at most ${got.peakHeldChars} characters`,
    );
    // The RSS growth is printed, not asserted: the stand-in dashboard runs in this process and builds the 140 MB it
    // sends here too, so RSS (and the V8 heap: 138-160 MB in two runs) counts the server's garbage with the reader's
    // and grew 44-177 MB between runs of the same code. What the reader keeps is peakHeldChars, bounded above.
  });

  it('remotes.jobLog answers the tail of that log, protocol lines and long lines shortened', async () => {
    const lab = await openHandlerTestLab('arl-biglog-', (s) => createRemotesHandlers(s));
    try {
      expect((await lab.call('remotes.add', { name: 'biglog', url: `${dashboard.base}/biglog` })).ok).toBe(true);
      const r = await lab.call('remotes.jobLog', { name: 'biglog', submissionId: 'raysubmit_big', lines: 12 });
      expect(r.value).toEqual({ lines: expectedTail(12), totalLines: BIG_LINES });
      expect(r.value.lines[1]).toBe(`${bigLine(LONG_PROTOCOL).slice(0, 160)}… (${300_000 + 65} characters)`);
      expect(r.value.lines[11]).toMatch(
        /^\(TaskRunner pid=7\) @arlarena:checkpoint \{"step":1600000,"b64":"QUJDQUJD.*… \(300065 characters\)$/,
      );
      expect(r.value.lines[6]).toBe(`plain ${LONG_PLAIN} ${'y'.repeat(KEEP_CHARS - `plain ${LONG_PLAIN} `.length)}… (10014 characters)`);
    } finally {
      await lab.close();
    }
  });
});
