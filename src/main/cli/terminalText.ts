/**
 * Everything the CLI prints goes through here: names, messages and replies that came from outside (a run named
 * after a file, an import error quoting a line, a cluster's HTTP body or `ray_version`) may carry terminal escape
 * codes that recolour, retitle or rewrite the terminal. Control characters are shown escaped as `\u001b` (which
 * in a `--json` line is the same JSON string), so nothing from outside reaches the terminal as a control code.
 * Kept as they are: newline and tab; the CLI's own progress line (`\r` first, erase-to-end `\x1b[K` last).
 */

// C0 controls but tab and newline, DEL, C1 controls, and the bidirectional overrides that reorder shown text.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
const ERASE_LINE = '\x1b[K';

/** `text` with every control character but newline and tab written as `\uXXXX`. */
export function escapeControls(text: string): string {
  return text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** One chunk as the CLI writes it: its own leading `\r` and trailing erase-to-end kept, the rest escaped. */
export function terminalChunk(chunk: string): string {
  const lead = chunk.startsWith('\r') ? '\r' : '';
  const body = chunk.slice(lead.length);
  const tail = body.endsWith(ERASE_LINE) ? ERASE_LINE : '';
  return lead + escapeControls(tail ? body.slice(0, -tail.length) : body) + tail;
}

/** `stream` whose writes pass through `terminalChunk`; everything else (isTTY, on, end…) is the stream's own. */
export function terminalSafe<S extends NodeJS.WritableStream>(stream: S): S {
  return new Proxy(stream, {
    get(target, prop, receiver) {
      if (prop === 'write') {
        return (chunk: unknown, ...rest: unknown[]) => {
          const text =
            typeof chunk === 'string' ? chunk : chunk instanceof Uint8Array ? Buffer.from(chunk).toString('utf8') : String(chunk);
          return (target.write as (...a: unknown[]) => boolean).call(target, terminalChunk(text), ...rest);
        };
      }
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
