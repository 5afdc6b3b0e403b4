/**
 * The line protocol a lab trainer speaks on stdout when it runs as a Ray job (ARLARENA_LINE_PROTOCOL=1): one
 * message per line, `@arlarena:<type> <json>`, so the messages travel through the job's ordinary log (Ray keeps it
 * and serves it over its log stream; logFollow.ts) between whatever else the process prints.
 *
 *   @arlarena:status     {"phase":"rl","step":3,"totalSteps":10,"message":…}
 *   @arlarena:metric     {"step":3,"values":{…}}                      one per RL step
 *   @arlarena:trajectory {"trajectory":{…Trajectory…},"sha256":"<hex>"}
 *   @arlarena:checkpoint {"step":3,"meta":{…},"files":{"name":"<base64>"},"sha256":{"name":"<hex>"}}
 *   @arlarena:done       {"status":"completed"|"stopped","step":10,"backend":{…}}
 *   @arlarena:failed     {"error":"…"}
 *
 * The SHA-256s are taken on the node and checked by the lab before anything is written (transit.ts).
 *
 * JSON has no NaN/±Infinity, and the trainer logs NaN for every metric that does not apply: a non-finite number is
 * written as {"$nf":"NaN"|"Infinity"|"-Infinity"} and read back as the number, so a record survives exactly.
 */
import { fromNonFiniteKind, isNonFiniteKind, nonFiniteKind } from '../../shared/nonFinite';

export const LINE_PREFIX = '@arlarena:';

export const LINE_TYPES = ['status', 'metric', 'trajectory', 'checkpoint', 'done', 'failed'] as const;
export type LineType = (typeof LINE_TYPES)[number];

export interface LineMessage {
  readonly type: LineType;
  readonly body: unknown;
}

function replacer(_key: string, v: unknown): unknown {
  const kind = typeof v === 'number' ? nonFiniteKind(v) : null;
  if (kind !== null) return { $nf: kind };
  return v;
}

function reviver(_key: string, v: unknown): unknown {
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    const nf = o.$nf;
    if (isNonFiniteKind(nf) && Object.keys(o).length === 1) return fromNonFiniteKind(nf);
  }
  return v;
}

/** One protocol line (no trailing newline). */
export function encodeLine(type: LineType, body: unknown): string {
  return `${LINE_PREFIX}${type} ${JSON.stringify(body, replacer)}`;
}

/**
 * The message on a log line, or null for any other line. Ray may prefix a driver's output (e.g. `(pid=…)`), so the
 * prefix is looked for anywhere in the line; a protocol line whose JSON does not parse is an error (a torn line
 * means the log tail lost data, which must not pass silently).
 */
export function decodeLine(line: string): LineMessage | null {
  const at = line.indexOf(LINE_PREFIX);
  if (at < 0) return null;
  const rest = line.slice(at + LINE_PREFIX.length);
  const sp = rest.indexOf(' ');
  const type = (sp < 0 ? rest : rest.slice(0, sp)) as LineType;
  if (!LINE_TYPES.includes(type)) return null;
  try {
    return { type, body: JSON.parse(rest.slice(sp + 1), reviver) };
  } catch (e) {
    throw new Error(`a ${type} line of the job's log is not valid JSON (${(e as Error).message}); the log tail lost data`);
  }
}

/** Splits a stream of text chunks into whole lines (a chunk may end mid-line). */
export class LineSplitter {
  private rest = '';
  constructor(private readonly onLine: (line: string) => void) {}
  push(chunk: string): void {
    const text = this.rest + chunk;
    const parts = text.split('\n');
    this.rest = parts.pop() ?? '';
    for (const p of parts) this.onLine(p.endsWith('\r') ? p.slice(0, -1) : p);
  }
  end(): void {
    if (this.rest) this.onLine(this.rest);
    this.rest = '';
  }
  /** The text after the last newline (a line not finished yet, or cut off), which is then forgotten. */
  takeRest(): string {
    const r = this.rest.endsWith('\r') ? this.rest.slice(0, -1) : this.rest;
    this.rest = '';
    return r;
  }
}
