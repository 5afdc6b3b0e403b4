/**
 * Ray's job logs answer (`GET /api/jobs/{id}/logs`, a JSON object `{"logs": "<the whole log>"}`) read as its bytes
 * arrive, never held whole: RayLogsDecoder decodes the `logs` string piece by piece and hands the pieces on;
 * JobLogTail keeps only the last `n` non-blank lines of them, each up to KEEP_CHARS characters with its real length
 * beside it. However long the log (a training job's log carries every checkpoint as base64), what is held stays
 * below n × KEEP_CHARS characters plus one network chunk; the log is never a string of its own here.
 *
 * Not a general JSON parser: it reads one top-level object, decodes the string under `logs`, and steps over any
 * other member without keeping it.
 */

/** Characters kept of one line; its real length is kept beside them (longer lines are shown shortened). */
export const KEEP_CHARS = 4096;
/** A member name longer than this is not one of Ray's (only `logs` is read). */
const MAX_KEY_CHARS = 256;

export interface TailLine {
  /** The line's first KEEP_CHARS characters (the whole line when shorter). */
  readonly text: string;
  /** Its length in characters. */
  readonly length: number;
}

/** Why an answer could not be read as Ray's logs object. */
export class LogAnswerError extends Error {
  constructor(
    readonly kind: 'not-json' | 'no-logs',
    message: string,
  ) {
    super(message);
  }
}

type State = 'start' | 'key' | 'in-key' | 'colon' | 'value' | 'in-logs' | 'skip' | 'after' | 'done';

/** Decodes Ray's logs answer as it arrives; `onText` gets the log's text in order, piece by piece. */
export class RayLogsDecoder {
  private state: State = 'start';
  /** Unused end of the previous chunk: an escape sequence cut by the chunk's end. */
  private carry = '';
  private key = '';
  private keyEscaped = false;
  private keyEscape = false;
  private sawLogs = false;
  private logsDone = false;
  /** Stepping over a value: nesting depth, inside a string, after a backslash in it. */
  private skipDepth = 0;
  private skipInString = false;
  private skipEscape = false;
  private readonly decoder = new TextDecoder('utf-8');
  /** The first characters of the answer, for the "not JSON" message. */
  private head = '';

  constructor(private readonly onText: (text: string) => void) {}

  /** Feeds the next bytes of the answer (a LogAnswerError as soon as they cannot be Ray's logs object). */
  write(bytes: Uint8Array): void {
    this.feed(this.decoder.decode(bytes, { stream: true }));
  }

  /** The answer is complete: a LogAnswerError unless it was Ray's whole logs object. */
  end(): void {
    this.feed(this.decoder.decode());
    if (this.state !== 'done' && this.state !== 'after')
      throw new LogAnswerError(this.state === 'start' ? 'not-json' : 'no-logs', 'the answer ended before its JSON object did');
    if (!this.sawLogs || !this.logsDone) throw new LogAnswerError('no-logs', 'the answer has no logs text');
  }

  private feed(chunk: string): void {
    if (this.head.length < 60) this.head = ownCopy(this.head + chunk.slice(0, 60 - this.head.length));
    let s = this.carry + chunk;
    this.carry = '';
    let i = 0;
    while (i < s.length) {
      switch (this.state) {
        case 'start':
        case 'key':
        case 'colon':
        case 'value':
        case 'after':
        case 'done': {
          const c = s.charCodeAt(i);
          if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
            i++;
            break;
          }
          const ch = s[i]!;
          i++;
          if (this.state === 'start') {
            if (ch !== '{') throw this.notJson();
            this.state = 'key';
          } else if (this.state === 'key') {
            if (ch === '"') {
              this.state = 'in-key';
              this.key = '';
              this.keyEscaped = false;
              this.keyEscape = false;
            } else if (ch === '}') this.state = 'done';
            else throw this.notJson();
          } else if (this.state === 'colon') {
            if (ch !== ':') throw this.notJson();
            this.state = 'value';
          } else if (this.state === 'value') {
            if (this.key === 'logs' && !this.keyEscaped) {
              this.sawLogs = true;
              if (ch !== '"') throw new LogAnswerError('no-logs', 'the answer has no logs text');
              this.state = 'in-logs';
            } else {
              this.state = 'skip';
              this.skipDepth = 0;
              this.skipInString = false;
              this.skipEscape = false;
              i--; // the skipper reads the value from its first character
            }
          } else if (this.state === 'after') {
            if (ch === ',') this.state = 'key';
            else if (ch === '}') this.state = 'done';
            else throw this.notJson();
          } else throw this.notJson(); // 'done': something after the object
          break;
        }
        case 'in-key': {
          // A member name, read character by character (names are short); an escaped one is never Ray's `logs`.
          for (; i < s.length; i++) {
            const ch = s[i]!;
            if (this.keyEscape) {
              this.keyEscape = false;
              this.keyEscaped = true;
            } else if (ch === '\\') this.keyEscape = true;
            else if (ch === '"') {
              i++;
              this.state = 'colon';
              break;
            } else if (this.key.length < MAX_KEY_CHARS) this.key += ch;
          }
          break;
        }
        case 'in-logs': {
          i = this.readLogs(s, i);
          if (i < 0) {
            // An escape cut by the chunk's end: keep it for the next chunk.
            this.carry = s.slice(-i - 1);
            s = '';
            i = 0;
          }
          break;
        }
        case 'skip':
          i = this.skipValue(s, i);
          break;
      }
    }
  }

  /**
   * Decodes the logs string from s[i]; returns where it stopped, or −(start of a cut escape) − 1 when an escape
   * sequence runs past the chunk's end.
   */
  private readLogs(s: string, i: number): number {
    const special = /["\\]/g;
    for (;;) {
      special.lastIndex = i;
      const m = special.exec(s);
      const stop = m ? m.index : s.length;
      if (stop > i) this.onText(s.slice(i, stop));
      if (!m) return s.length;
      if (s[stop] === '"') {
        this.logsDone = true;
        this.state = 'after';
        return stop + 1;
      }
      // A backslash: one escape sequence.
      const e = s[stop + 1];
      if (e === undefined) return -stop - 1;
      if (e === 'u') {
        if (stop + 6 > s.length) return -stop - 1;
        const hex = s.slice(stop + 2, stop + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw this.notJson();
        this.onText(String.fromCharCode(parseInt(hex, 16)));
        i = stop + 6;
        continue;
      }
      const simple = ESCAPES[e];
      if (simple === undefined) throw this.notJson();
      this.onText(simple);
      i = stop + 2;
    }
  }

  /** Steps over one JSON value other than `logs` (kept nowhere); returns where it stopped. */
  private skipValue(s: string, i: number): number {
    for (; i < s.length; i++) {
      const ch = s[i]!;
      if (this.skipInString) {
        if (this.skipEscape) this.skipEscape = false;
        else if (ch === '\\') this.skipEscape = true;
        else if (ch === '"') {
          this.skipInString = false;
          if (this.skipDepth === 0) return this.skipped(i + 1);
        }
        continue;
      }
      if (ch === '"') this.skipInString = true;
      else if (ch === '{' || ch === '[') this.skipDepth++;
      else if (ch === '}' || ch === ']') {
        if (this.skipDepth === 0) {
          // The end of the enclosing object after a number or literal.
          this.state = 'after';
          return i;
        }
        this.skipDepth--;
        if (this.skipDepth === 0) return this.skipped(i + 1);
      } else if (this.skipDepth === 0 && (ch === ',' || ch === ' ' || ch === '\n' || ch === '\r' || ch === '\t')) {
        this.state = 'after';
        return i;
      }
    }
    return i;
  }

  private skipped(i: number): number {
    this.state = 'after';
    return i;
  }

  private notJson(): LogAnswerError {
    return new LogAnswerError(
      'not-json',
      `answered something that is not JSON (${JSON.stringify(this.head)}${this.head.length >= 60 ? '…' : ''})`,
    );
  }
}

/** The last n non-blank lines of Ray's logs answer, read as it arrives (RayLogsDecoder). */
export class JobLogTail {
  private readonly decoder = new RayLogsDecoder((t) => this.text(t));
  // The line being read, and the ring of the last n non-blank lines.
  private cur = '';
  private curLength = 0;
  private curBlank = true;
  /** Whether the line's last character so far is \r (kept or not: a long line's end is not in `cur`). */
  private curEndsCr = false;
  private readonly ring: TailLine[] = [];
  private next = 0;
  private total = 0;
  /** Most characters held at once (the lines kept and the line being read), for the tests' bound. */
  private held = 0;
  private heldPeak = 0;

  constructor(private readonly n: number) {
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`JobLogTail: n must be a positive integer, not ${n}`);
  }

  /** Feeds the next bytes of the answer (a LogAnswerError as soon as they cannot be Ray's logs object). */
  write(bytes: Uint8Array): void {
    this.decoder.write(bytes);
    // The line being read may be made of pieces of this chunk: its own copy, so the chunk is not kept alive by it.
    if (this.cur.length >= 13) this.cur = ownCopy(this.cur);
  }

  /** The last n non-blank lines in order and how many non-blank lines the log has. */
  end(): { lines: TailLine[]; totalLines: number; peakHeldChars: number } {
    this.decoder.end();
    if (this.curLength > 0) this.endLine();
    const k = Math.min(this.n, this.ring.length);
    const lines: TailLine[] = [];
    for (let i = 0; i < k; i++) lines.push(this.ring[(this.next - k + i + this.n) % this.n]!);
    return { lines, totalLines: this.total, peakHeldChars: this.heldPeak };
  }

  /** Decoded log text: split into lines, the line being read capped at KEEP_CHARS. */
  private text(t: string): void {
    let from = 0;
    for (;;) {
      const nl = t.indexOf('\n', from);
      const piece = nl < 0 ? t.slice(from) : t.slice(from, nl);
      if (piece.length > 0) {
        if (this.curBlank && /\S/.test(piece)) this.curBlank = false;
        if (this.cur.length < KEEP_CHARS) {
          const add = piece.slice(0, KEEP_CHARS - this.cur.length);
          this.cur += add;
          this.hold(add.length);
        }
        this.curLength += piece.length;
        this.curEndsCr = piece.endsWith('\r');
      }
      if (nl < 0) return;
      this.endLine();
      from = nl + 1;
    }
  }

  private endLine(): void {
    let text = this.cur;
    let length = this.curLength;
    // A Windows line end (\r\n): the \r is not part of the line, nor of its length when the line was cut.
    if (this.curEndsCr) {
      if (length === text.length) {
        text = text.slice(0, -1);
        this.hold(-1);
      }
      length--;
    }
    if (!this.curBlank) {
      this.total++;
      const old = this.ring[this.next];
      if (old) this.hold(-old.text.length);
      this.ring[this.next] = { text: ownCopy(text), length };
      this.next = (this.next + 1) % this.n;
    } else this.hold(-text.length);
    this.cur = '';
    this.curLength = 0;
    this.curBlank = true;
    this.curEndsCr = false;
  }

  private hold(chars: number): void {
    this.held += chars;
    if (this.held > this.heldPeak) this.heldPeak = this.held;
  }
}

const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/**
 * A copy of `s` that holds only its own characters. V8 makes a slice of 13 or more characters a view into the
 * string it was cut from: a kept line cut from a 64 KiB network chunk would keep that whole chunk alive, and the
 * tail's memory would grow with the chunks its lines came from instead of with the lines.
 */
function ownCopy(s: string): string {
  return s.length < 13 ? s : Buffer.from(s, 'utf16le').toString('utf16le');
}
