/**
 * Following a Ray job's log as it grows, reading each byte once.
 *
 * What Ray 2.60's dashboard offers (read in its source, dashboard/modules/{job,state,log}, and tried on a real head
 * with token auth):
 *  - `GET /api/jobs/{id}/logs` answers the whole log so far. Polling it re-reads everything on every round: a
 *    long job's follow costs O(log size) per poll.
 *  - `GET /api/jobs/{id}/logs/tail` (websocket) opens and then closes about 2 s later without a message. The job
 *    module runs in a subprocess behind the dashboard's websocket proxy; the head's access log shows the 101 with
 *    0 bytes, and the job agent never gets a tail request. The Bearer header on the upgrade changes nothing.
 *  - `GET /api/v0/logs/stream?submission_id=ID&node_id=NODE&lines=-1&interval=S` (the state API's log stream, the
 *    one `ray logs job --follow` uses) does work with token auth. It is an HTTP answer that stays open: the
 *    driver log file's bytes from the start, then what the file gains, read by the node's agent every S seconds.
 *    It has no start offset, and it does not end when the job does: it follows the file until it is closed.
 *  - `GET /api/v0/logs/file?…&lines=N` answers the file's last N lines, raw.
 *
 * So the follow holds one stream open and counts the characters it has handled. A dropped connection is
 * reopened (from the start, since there is no offset), and the part already handled is skipped, so the follow
 * resumes where it stopped with no line missing or handled twice. That re-read happens once per drop, not once
 * per poll. Only the job's status is polled. Once the job is terminal, its file is complete: the follow waits
 * until what it has received ends with the file's last lines, as `lines=3` answers them. If that has not
 * happened after END_CHECK_ROUNDS rounds, it reads the whole file once and takes the part past its count.
 * A job that ended before it had a driver node, or a cluster whose state API does not stream, is followed the
 * old way (`mode: 'poll'`). The benchmark uses that mode too, to compare the two.
 */
import { LINE_PREFIX, LineSplitter } from './lineProtocol';
import { TERMINAL_JOB_STATUSES, type RayClient, type RayJobInfo } from './rayClient';

const LAST_LINES = 20;
const CONTROL_POLL_MS = 300;
const LOG_POLL_MS = 200;
const STATUS_POLL_MS = 300;
/** The node agent's read interval for the stream (seconds), the latency a line can have on its way here. */
const STREAM_INTERVAL_S = 0.2;
const END_CHECK_ROUNDS = 40;
const END_CHECK_MS = 250;
/** How much of what was received is kept to compare with the file's last lines at the end. */
const KEEP_TAIL_CHARS = 32 * 1024 * 1024;
/** A cluster that does not answer for this long fails the follow (a short outage is ridden out). */
const GIVE_UP_MS = 120_000;
/** A stream refused this many times before any byte came is taken as "this cluster does not stream". */
const STREAM_REFUSALS_BEFORE_POLL = 3;

/** What a follow cost: the benchmark prints these side by side for the two modes. */
export interface LogFollowStats {
  mode: 'stream' | 'poll';
  /** Log characters received from the cluster (every re-read counted again). */
  received: number;
  /** Log characters handed on (each once). */
  handled: number;
  /** Log reads: polls in poll mode; opened streams, end checks and full reads in stream mode. */
  reads: number;
  /** Streams reopened after a drop. */
  reconnects: number;
  /** Whole-log reads in stream mode (none when the end check passes). */
  fullReads: number;
  /** Milliseconds spent waiting on log reads (poll mode: each poll's round trip). */
  readMs: number;
}

export interface FollowOptions {
  /** 'stream' (default) or 'poll' (the whole log read each round, as before the stream; for comparisons). */
  readonly mode?: 'stream' | 'poll';
  /** Filled in as the follow goes. */
  readonly stats?: LogFollowStats;
}

export function newFollowStats(mode: 'stream' | 'poll' = 'stream'): LogFollowStats {
  return { mode, received: 0, handled: 0, reads: 0, reconnects: 0, fullReads: 0, readMs: 0 };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Follow an already-submitted Ray job's log into `onLine`, one call per line, in order, each line once, until the
 * job is terminal; `shouldStop` is polled and a true asks Ray to stop the job. Returns the job's final info and its
 * last non-protocol log lines (for a failure message). A last line the job left unfinished (no newline: killed
 * mid-write) that is a protocol line is not handed on, since it is cut. It is named in the last lines instead.
 */
export async function followJobLog(
  client: RayClient,
  submissionId: string,
  onLine: (line: string) => Promise<void> | void,
  shouldStop: () => Promise<boolean>,
  opts: FollowOptions = {},
): Promise<{ info: RayJobInfo; lastLines: string[] }> {
  const stats = opts.stats ?? newFollowStats(opts.mode);
  stats.mode = opts.mode ?? 'stream';
  const lastLines: string[] = [];
  let chain: Promise<void> = Promise.resolve();
  let lineError: Error | null = null;
  let ended = false;
  let stopSent = false;
  const control = (async () => {
    while (!ended) {
      if (!stopSent && (await shouldStop())) {
        stopSent = true;
        await client.stopJob(submissionId).catch(() => undefined);
      }
      await sleep(CONTROL_POLL_MS);
    }
  })();
  // The failure message's tail keeps only lines a person reads: the metric protocol's lines and Ray's blank
  // separators would otherwise fill all LAST_LINES slots and push out the lines that say what happened.
  const remember = (line: string) => {
    if (line.trim() === '' || line.includes(LINE_PREFIX)) return;
    lastLines.push(line);
    if (lastLines.length > LAST_LINES) lastLines.shift();
  };
  const splitter = new LineSplitter((line) => {
    remember(line);
    chain = chain
      .then(() => onLine(line))
      .catch((e: Error) => {
        lineError ??= e;
      });
  });
  /** Characters of the log handed to the splitter so far: the position a reopened stream resumes from. */
  let handled = 0;
  let tail = '';
  const take = (text: string) => {
    if (!text) return;
    handled += text.length;
    stats.handled = handled;
    tail = tail.length + text.length > KEEP_TAIL_CHARS ? (tail + text).slice(-KEEP_TAIL_CHARS) : tail + text;
    splitter.push(text);
  };
  /**
   * A reader of a whole log from its start, piece by piece as it arrives (never held whole): it hands on the part
   * past what was handled. A read that fails part-way has handed on a prefix of the log, which is all it claims.
   */
  const wholeReader = () => {
    let pos = 0;
    return (piece: string) => {
      stats.received += piece.length;
      const from = pos;
      pos += piece.length;
      if (pos > handled) take(piece.slice(Math.max(0, handled - from)));
    };
  };

  let info: RayJobInfo | null = null;
  let lastAnswer = Date.now();
  const noteFailure = (e: unknown) => {
    if (Date.now() - lastAnswer > GIVE_UP_MS)
      throw new Error(
        `the Ray cluster at ${client.url} did not answer for ${GIVE_UP_MS / 1000} s while following job ${submissionId}: ${e instanceof Error ? e.message : String(e)}`,
      );
  };
  const readStatus = async (): Promise<RayJobInfo | null> => {
    try {
      const i = await client.jobInfo(submissionId);
      if (!i) throw new Error(`Ray job ${submissionId} disappeared from the cluster`);
      lastAnswer = Date.now();
      return i;
    } catch (e) {
      if (e instanceof Error && e.message.includes('disappeared')) throw e;
      noteFailure(e);
      return null;
    }
  };
  const readWholeJobLog = async (): Promise<boolean> => {
    const t0 = Date.now();
    try {
      await client.streamJobLog(submissionId, wholeReader());
      stats.reads++;
      stats.readMs += Date.now() - t0;
      lastAnswer = Date.now();
      return true;
    } catch (e) {
      noteFailure(e);
      return false;
    }
  };

  const logPath = (media: 'stream' | 'file', nodeId: string, lines: number) =>
    `/api/v0/logs/${media}?submission_id=${encodeURIComponent(submissionId)}&node_id=${encodeURIComponent(nodeId)}&lines=${lines}${media === 'stream' ? `&interval=${STREAM_INTERVAL_S}` : ''}`;

  try {
    if (stats.mode === 'poll') {
      // One round: the status, then the whole log (read after the status, so a terminal job's read is complete).
      for (;;) {
        const i = await readStatus();
        if (i) info = i;
        const terminal = !!i && TERMINAL_JOB_STATUSES.includes(i.status);
        if (i) await readWholeJobLog();
        await chain;
        if ((terminal && i) || lineError) break;
        await sleep(Math.min(2000, LOG_POLL_MS + handled / 50_000));
      }
    } else {
      let stream: { closed: Promise<void>; close: () => void; open: boolean } | null = null;
      let refusals = 0;
      let usePoll = false;
      const openStream = async (nodeId: string) => {
        // A fresh decoder per stream: the new stream starts again at the file's first byte.
        // Each chunk covers characters [pos, pos + length) of the log; only the part past `handled` is new.
        const decoder = new TextDecoder('utf-8');
        let pos = 0;
        const onChunk = (c: Buffer) => {
          const text = decoder.decode(c, { stream: true });
          stats.received += text.length;
          const from = pos;
          pos += text.length;
          if (pos > handled) take(text.slice(handled - from));
        };
        const t0 = Date.now();
        try {
          const s = await client.openStream(logPath('stream', nodeId, -1), onChunk);
          stats.reads++;
          stats.readMs += Date.now() - t0;
          lastAnswer = Date.now();
          if (s.status !== 200) {
            // Refused (an old head, a state API that cannot find the file yet): retried, and after a few refusals
            // with nothing received, the whole-log poll takes over.
            if (++refusals >= STREAM_REFUSALS_BEFORE_POLL && handled === 0) usePoll = true;
            return;
          }
          const st = { closed: s.closed, close: s.close, open: true };
          void s.closed.then(() => (st.open = false));
          stream = st;
        } catch (e) {
          noteFailure(e);
        }
      };
      // The job is terminal, so its file is whole: done once what was received ends with the file's last lines.
      const finishStream = async (nodeId: string): Promise<void> => {
        for (let round = 0; round < END_CHECK_ROUNDS; round++) {
          const cur = stream as { open: boolean } | null;
          if (!cur || !cur.open) {
            if (cur) stats.reconnects++;
            stream = null;
            await openStream(nodeId);
          }
          const before = handled;
          const t0 = Date.now();
          try {
            const r = await client.request('GET', logPath('file', nodeId, 3));
            stats.reads++;
            stats.readMs += Date.now() - t0;
            stats.received += r.text.length;
            lastAnswer = Date.now();
            // Nothing arrived during the check, and the file's last lines are how what was received ends.
            if (r.ok && handled === before && (r.text.length > 0 || handled === 0) && tail.endsWith(r.text)) return;
          } catch (e) {
            noteFailure(e);
          }
          await sleep(END_CHECK_MS);
        }
        // Not confirmed (the stream stalled, or the last lines are longer than what is kept): one whole read.
        (stream as { close: () => void } | null)?.close();
        stats.fullReads++;
        for (;;) {
          const t0 = Date.now();
          try {
            const r = await client.streamText(logPath('file', nodeId, -1), wholeReader(), client.logLimits.deadlineMs);
            stats.reads++;
            stats.readMs += Date.now() - t0;
            if (r.ok) return;
          } catch (e) {
            noteFailure(e);
          }
          if (await readWholeJobLog()) return;
          await sleep(END_CHECK_MS);
        }
      };
      for (;;) {
        const i = await readStatus();
        if (i) info = i;
        const terminal = !!i && TERMINAL_JOB_STATUSES.includes(i.status);
        const nodeId = info?.driver_node_id ?? null;
        if (usePoll) {
          stats.mode = 'poll';
          if (i) await readWholeJobLog();
          await chain;
          if ((terminal && i) || lineError) break;
          await sleep(Math.min(2000, LOG_POLL_MS + handled / 50_000));
          continue;
        }
        if (terminal && i) {
          if (!nodeId) {
            // Ended before a driver ran (e.g. its runtime env failed): the whole log is short, read it once.
            while (!(await readWholeJobLog())) await sleep(END_CHECK_MS);
            break;
          }
          await finishStream(nodeId);
          break;
        }
        const current = stream as { open: boolean; close: () => void } | null;
        if (nodeId && (!current || !current.open)) {
          if (current) stats.reconnects++;
          stream = null;
          await openStream(nodeId);
        }
        await chain;
        if (lineError) break;
        await sleep(STATUS_POLL_MS);
      }
      (stream as { close: () => void } | null)?.close();
    }
    const rest = splitter.takeRest();
    if (rest) {
      if (rest.includes(LINE_PREFIX)) {
        // The writer ends every protocol line with a newline: one without is a write the job's end cut short.
        const type = /@arlarena:(\w+)/.exec(rest)?.[1] ?? 'protocol';
        remember(
          `[the job's log ends in the middle of a ${type} line (${rest.length} characters, no newline): the job ended while writing it, so it was not used]`,
        );
      } else {
        remember(rest);
        chain = chain
          .then(() => onLine(rest))
          .catch((e: Error) => {
            lineError ??= e;
          });
      }
    }
    await chain;
  } finally {
    ended = true;
    // Not awaited: a paused run's control check blocks until it is resumed or stopped; the loop ends after it.
    void control.catch(() => undefined);
  }
  if (lineError) throw lineError;
  if (!info) throw new Error(`Ray job ${submissionId} could not be read`);
  return { info, lastLines };
}
