import { describe, expect, it } from 'vitest';
import { JobLogTail, KEEP_CHARS, LogAnswerError } from './logTail';

/** Feeds `answer` in pieces of `size` bytes (1: every escape and every UTF-8 sequence cut somewhere). */
function tailOf(answer: string, n: number, size = 1): ReturnType<JobLogTail['end']> {
  const bytes = new TextEncoder().encode(answer);
  const t = new JobLogTail(n);
  for (let i = 0; i < bytes.length; i += size) t.write(bytes.subarray(i, i + size));
  return t.end();
}

const texts = (r: ReturnType<JobLogTail['end']>) => r.lines.map((l) => l.text);

/** The answer Ray's dashboard gives for a log: `{"logs": <the log as a JSON string>}`. */
const ray = (log: string) => JSON.stringify({ logs: log });

describe('JobLogTail', () => {
  const log = 'one\n\ntwo "quoted" \\ back\r\n\n  \nthree café 🚀\tend\nfour';

  it('gives the last n non-blank lines and their count, whatever the pieces the answer comes in', () => {
    for (const size of [1, 2, 3, 7, 1000]) {
      const r = tailOf(ray(log), 3, size);
      expect(texts(r), `pieces of ${size}`).toEqual(['two "quoted" \\ back', 'three café 🚀\tend', 'four']);
      expect(r.totalLines).toBe(4);
    }
    expect(texts(tailOf(ray(log), 10))).toEqual(['one', 'two "quoted" \\ back', 'three café 🚀\tend', 'four']);
  });

  it('decodes \\u escapes as Python writes them (ensure_ascii: surrogate pairs too)', () => {
    const ascii = '{"logs": "caf\\u00e9 \\ud83d\\ude80 \\/ \\b\\f\\n2"}';
    expect(texts(tailOf(ascii, 5))).toEqual(['café 🚀 / \b\f', '2']);
  });

  it('keeps KEEP_CHARS characters of a long line and its real length', () => {
    const long = 'z'.repeat(KEEP_CHARS * 3 + 5);
    const r = tailOf(ray(`a\n${long}\nb`), 2, 4096);
    expect(r.lines).toEqual([
      { text: long.slice(0, KEEP_CHARS), length: long.length },
      { text: 'b', length: 1 },
    ]);
  });

  it('leaves a Windows line end out of a long line and of its length', () => {
    const long = 'z'.repeat(KEEP_CHARS + 10);
    const r = tailOf(ray(`${long}\r\nshort\r\n`), 2, 1000);
    expect(r.lines).toEqual([
      { text: long.slice(0, KEEP_CHARS), length: long.length },
      { text: 'short', length: 5 },
    ]);
  });

  it('steps over other members, before and after logs, without keeping them', () => {
    const answer = `{"job": {"a": [1, "}", {"b": "\\""}], "c": null}, "n": -1.5e3, "t": true, "logs": "x\\ny", "after": [[]]}`;
    expect(texts(tailOf(answer, 5))).toEqual(['x', 'y']);
  });

  it('holds no more than the tail: the peak is n lines, not the log', () => {
    const lines = Array.from({ length: 20_000 }, (_, i) => `line ${i} ${'w'.repeat(40)}`);
    const r = tailOf(ray(lines.join('\n')), 10, 65536);
    expect(texts(r)).toEqual(lines.slice(-10));
    expect(r.totalLines).toBe(20_000);
    expect(r.peakHeldChars).toBeLessThanOrEqual(11 * 60);
  });

  it('refuses what is not Ray’s logs object, saying which', () => {
    const kind = (answer: string) => {
      try {
        tailOf(answer, 3, 4096);
        return null;
      } catch (e) {
        expect(e).toBeInstanceOf(LogAnswerError);
        return `${(e as LogAnswerError).kind}: ${(e as Error).message}`;
      }
    };
    expect(kind('<html>Welcome to nginx!</html>')).toBe('not-json: answered something that is not JSON ("<html>Welcome to nginx!</html>")');
    expect(kind('{"logs": 42}')).toBe('no-logs: the answer has no logs text');
    expect(kind('{"logs": null}')).toBe('no-logs: the answer has no logs text');
    expect(kind('{"other": "x"}')).toBe('no-logs: the answer has no logs text');
    expect(kind('{"lo\\u0067s": "x"}')).toBe('no-logs: the answer has no logs text');
    expect(kind('{"logs": "cut off')).toMatch(/^no-logs: the answer ended before its JSON object did/);
    expect(kind('{"logs": "bad \\q escape"}')).toMatch(/^not-json/);
    expect(kind('{"logs": "x"} trailing')).toMatch(/^not-json/);
    expect(kind('')).toMatch(/^not-json/);
    expect(() => new JobLogTail(0)).toThrow(RangeError);
  });
});
