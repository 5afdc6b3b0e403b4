/**
 * A reader for Python literal reprs — what `print(dict)` and `pprint` write: the echoed Hydra/OmegaConf config
 * of a verl run, TRL's printed log dicts, verl's "Final validation metrics: {…}". Python has
 * `ast.literal_eval` for this; JavaScript has nothing, so this is a small recursive-descent reader.
 *
 * It is lenient where logs are messy, so a config parses "as far as it safely parses": a value that is not a
 * literal (`<object at 0x7f…>`, `ListConfig([…])`, `device(type='cuda')`) is kept as its source text (a
 * string) instead of failing the whole dict. Adjacent string literals concatenate, as in Python, because
 * pprint wraps long strings that way. Structural errors (an unclosed dict) still throw `PyLiteralError`.
 */

export class PyLiteralError extends Error {
  constructor(
    message: string,
    readonly at: number,
  ) {
    super(`${message} at character ${at}`);
    this.name = 'PyLiteralError';
  }
}

export type PyValue = number | string | boolean | null | PyValue[] | { [k: string]: PyValue };

/** Parses one literal that must span the whole text (surrounding whitespace allowed). */
export function parsePyLiteral(text: string): PyValue {
  const r = new Reader(text);
  const v = r.value();
  r.ws();
  if (r.i < text.length) throw new PyLiteralError(`unexpected ${JSON.stringify(text.slice(r.i, r.i + 12))} after the literal`, r.i);
  return v;
}

/**
 * Where the bracketed literal starting at `start` (a `{`, `[` or `(`) ends: the index just past its closing
 * bracket, or -1 when the text ends first. Quotes are honoured, so a `}` inside a string does not count.
 */
export function literalEnd(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 39 || c === 34) {
      i = skipString(text, i);
      if (i < 0) return -1;
      continue;
    }
    if (c === 123 || c === 91 || c === 40) depth++;
    else if (c === 125 || c === 93 || c === 41) {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/**
 * `literalEnd` for text that arrives in pieces (a dict printed over many log lines): it keeps its place, so
 * each piece is scanned once instead of rescanning the whole text at every line.
 */
export class LiteralScanner {
  private depth = 0;
  private quote = 0;
  private escaped = false;
  private pos: number;
  /** Index just past the closing bracket once found, else -1. */
  end = -1;

  /** `start`: index of the opening bracket in the text that `scan` will be given. */
  constructor(start: number) {
    this.pos = start;
  }

  /** Scans `text` (the whole text so far; it only ever grows) from where the last call stopped. */
  scan(text: string): number {
    if (this.end >= 0) return this.end;
    for (let i = this.pos; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (this.quote !== 0) {
        if (this.escaped) this.escaped = false;
        else if (c === 92) this.escaped = true;
        else if (c === this.quote) this.quote = 0;
        continue;
      }
      if (c === 39 || c === 34) this.quote = c;
      else if (c === 123 || c === 91 || c === 40) this.depth++;
      else if (c === 125 || c === 93 || c === 41) {
        this.depth--;
        if (this.depth === 0) {
          this.end = i + 1;
          return this.end;
        }
      }
    }
    this.pos = text.length;
    return -1;
  }
}

/** Index of the closing quote of the string starting at `i`, or -1 if the text ends inside it. */
function skipString(text: string, i: number): number {
  const q = text.charCodeAt(i);
  for (let j = i + 1; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === 92) j++;
    else if (c === q) return j;
  }
  return -1;
}

const ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  '0': '\0',
  '\\': '\\',
  "'": "'",
  '"': '"',
  a: '\x07',
  b: '\b',
  f: '\f',
  v: '\v',
};

class Reader {
  i = 0;
  constructor(private readonly s: string) {}

  ws(): void {
    const s = this.s;
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i);
      if (c === 32 || c === 10 || c === 13 || c === 9) this.i++;
      else break;
    }
  }

  value(): PyValue {
    this.ws();
    const s = this.s;
    if (this.i >= s.length) throw new PyLiteralError('unexpected end of text', this.i);
    const c = s[this.i];
    if (c === '{') return this.dict();
    if (c === '[') return this.seq(']');
    if (c === '(') return this.seq(')');
    if (c === "'" || c === '"') return this.strings();
    // String prefixes r'' b'' u'' f'' (and combinations) before a quote.
    const pre = /^[rRbBuUfF]{1,2}(?=['"])/.exec(s.slice(this.i, this.i + 3));
    if (pre) {
      this.i += pre[0].length;
      return this.strings();
    }
    return this.bare();
  }

  private dict(): { [k: string]: PyValue } {
    const out: { [k: string]: PyValue } = {};
    this.i++;
    for (;;) {
      this.ws();
      if (this.s[this.i] === '}') {
        this.i++;
        return out;
      }
      const k = this.value();
      this.ws();
      if (this.s[this.i] !== ':') throw new PyLiteralError(`expected ':' after the dict key ${JSON.stringify(k)}`, this.i);
      this.i++;
      out[typeof k === 'string' ? k : JSON.stringify(k)] = this.value();
      this.ws();
      const c = this.s[this.i];
      if (c === ',') {
        this.i++;
        continue;
      }
      if (c === '}') {
        this.i++;
        return out;
      }
      throw new PyLiteralError(`expected ',' or '}' in a dict, found ${JSON.stringify(c ?? 'end of text')}`, this.i);
    }
  }

  private seq(close: string): PyValue {
    const out: PyValue[] = [];
    this.i++;
    let sawComma = false;
    for (;;) {
      this.ws();
      if (this.s[this.i] === close) {
        this.i++;
        break;
      }
      out.push(this.value());
      this.ws();
      const c = this.s[this.i];
      if (c === ',') {
        this.i++;
        sawComma = true;
        continue;
      }
      if (c === close) {
        this.i++;
        break;
      }
      throw new PyLiteralError(`expected ',' or '${close}', found ${JSON.stringify(c ?? 'end of text')}`, this.i);
    }
    // `(x)` is grouping, not a tuple: pprint writes a long wrapped string as ('a' 'b').
    if (close === ')' && out.length === 1 && !sawComma) return out[0];
    return out;
  }

  private strings(): string {
    let out = this.string();
    for (;;) {
      const save = this.i;
      this.ws();
      const c = this.s[this.i];
      if (c === "'" || c === '"') out += this.string();
      else {
        this.i = save;
        return out;
      }
    }
  }

  private string(): string {
    const s = this.s;
    const q = s[this.i];
    const triple = s.startsWith(q + q + q, this.i);
    this.i += triple ? 3 : 1;
    let out = '';
    let run = this.i;
    while (this.i < s.length) {
      const c = s[this.i];
      if (c === '\\') {
        out += s.slice(run, this.i);
        const e = s[this.i + 1];
        if (e === 'x' || e === 'u' || e === 'U') {
          const len = e === 'x' ? 2 : e === 'u' ? 4 : 8;
          const hex = s.slice(this.i + 2, this.i + 2 + len);
          const code = /^[0-9a-fA-F]+$/.test(hex) && hex.length === len ? parseInt(hex, 16) : Number.NaN;
          out += Number.isNaN(code) || code > 0x10ffff ? s.slice(this.i, this.i + 2) : String.fromCodePoint(code);
          this.i += Number.isNaN(code) ? 2 : 2 + len;
        } else {
          out += ESCAPES[e] ?? `\\${e}`;
          this.i += 2;
        }
        run = this.i;
        continue;
      }
      if (c === q && (!triple || s.startsWith(q + q + q, this.i))) {
        out += s.slice(run, this.i);
        this.i += triple ? 3 : 1;
        return out;
      }
      this.i++;
    }
    throw new PyLiteralError('unterminated string', this.i);
  }

  /** A number, a keyword, or — leniently — any other expression up to the next separator, kept as text. */
  private bare(): PyValue {
    const s = this.s;
    const start = this.i;
    let depth = 0;
    while (this.i < s.length) {
      const c = s[this.i];
      if (c === "'" || c === '"') {
        const end = skipString(s, this.i);
        if (end < 0) throw new PyLiteralError('unterminated string', this.i);
        this.i = end + 1;
        continue;
      }
      if (c === '(' || c === '[' || c === '{' || c === '<') depth++;
      else if (c === ')' || c === ']' || c === '}' || c === '>') {
        if (depth === 0) break;
        depth--;
      } else if ((c === ',' || c === ':') && depth === 0) break;
      this.i++;
    }
    const tok = s.slice(start, this.i).trim();
    if (tok.length === 0) throw new PyLiteralError(`unexpected ${JSON.stringify(s[this.i] ?? 'end of text')}`, start);
    switch (tok) {
      case 'True':
        return true;
      case 'False':
        return false;
      case 'None':
        return null;
      case 'nan':
      case 'NaN':
        return Number.NaN;
      case 'inf':
      case 'Infinity':
        return Number.POSITIVE_INFINITY;
      case '-inf':
      case '-Infinity':
        return Number.NEGATIVE_INFINITY;
    }
    if (/^[-+]?(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][-+]?\d+)?$/.test(tok)) return Number(tok.replace(/_/g, ''));
    // numpy ≥ 2 scalar reprs inside dicts: np.float64(0.5).
    const np = /^(?:np|numpy)\.(?:float|int|uint)\d*\((.*)\)$/.exec(tok);
    if (np) {
      const n = Number(np[1]);
      if (!Number.isNaN(n) || np[1] === 'nan') return n;
    }
    return tok;
  }
}

/**
 * Makes a parsed literal plain JSON for SourceMeta.config: non-finite numbers become the strings Python
 * would print ('nan', 'inf', '-inf'), since JSON cannot hold them.
 */
export function toJsonSafe(v: PyValue): unknown {
  if (typeof v === 'number') return Number.isFinite(v) ? v : Number.isNaN(v) ? 'nan' : v > 0 ? 'inf' : '-inf';
  if (Array.isArray(v)) return v.map(toJsonSafe);
  if (v !== null && typeof v === 'object') {
    const o: Record<string, unknown> = {};
    for (const k in v) o[k] = toJsonSafe(v[k]);
    return o;
  }
  return v;
}

/**
 * Rebuilds a pprint-ed dict from its layout when the text is not a complete literal. Real Ray logs lose or
 * cut lines of the echoed config (Ray's log deduplication, another worker's output spliced into a line —
 * README 1b and 1c), so the strict reader fails on them. pprint puts every key of a dict at the column just
 * right of that dict's `{`, one key per line, so the column says which dict a key belongs to even when
 * closing braces went missing. Keys whose line is damaged beyond that are counted in `lost`.
 */
export function parsePprintDict(text: string): { value: { [k: string]: PyValue }; lost: number } {
  const root: { [k: string]: PyValue } = {};
  const stack: { col: number; obj: { [k: string]: PyValue } }[] = [];
  let lost = 0;
  let pending: { obj: { [k: string]: PyValue }; key: string; text: string } | null = null;

  const settle = (obj: { [k: string]: PyValue }, key: string, raw: string): boolean => {
    const v = leadingLiteral(raw);
    if (v === undefined) return false;
    obj[key] = v;
    return true;
  };

  for (const line of text.split('\n')) {
    let p = 0;
    while (p < line.length && line.charCodeAt(p) === 32) p++;
    if (p >= line.length) continue;
    const keyAt = keyAtColumn(line, p);
    if (pending !== null) {
      if (keyAt === null || !stack.some((s) => s.col === p)) {
        pending.text += ' ' + line.slice(p);
        const end = literalEnd(pending.text, 0);
        if (end >= 0) {
          if (!settle(pending.obj, pending.key, pending.text)) lost++;
          pending = null;
        } else if (pending.text.length > 65536) {
          lost++;
          pending = null;
        }
        continue;
      }
      lost++;
      pending = null;
    }
    if (line[p] === '{' && stack.length === 0) {
      stack.push({ col: p + 1, obj: root });
      p++;
    }
    for (;;) {
      const k = keyAtColumn(line, p);
      if (k === null) {
        lost++;
        break;
      }
      while (stack.length > 0 && stack[stack.length - 1].col > p) stack.pop();
      if (stack.length === 0 || stack[stack.length - 1].col !== p) {
        lost++;
        break;
      }
      const target = stack[stack.length - 1].obj;
      let q = k.valueAt;
      const c = line[q];
      if (c === '{' && literalEnd(line, q) < 0) {
        const obj: { [k: string]: PyValue } = {};
        target[k.key] = obj;
        stack.push({ col: q + 1, obj });
        q++;
        if (q >= line.length) break;
        p = q;
        continue;
      }
      if ((c === '[' || c === '(' || c === '{') && literalEnd(line, q) < 0) {
        pending = { obj: target, key: k.key, text: line.slice(q) };
        break;
      }
      if (!settle(target, k.key, line.slice(q))) lost++;
      break;
    }
  }
  if (pending !== null) lost++;
  return { value: root, lost };
}

/** `'key': ` starting at column p: the key and where its value starts, or null when the line is not one. */
function keyAtColumn(line: string, p: number): { key: string; valueAt: number } | null {
  const c = line[p];
  if (c !== "'" && c !== '"') return null;
  const end = skipString(line, p);
  if (end < 0) return null;
  let q = end + 1;
  while (line[q] === ' ') q++;
  if (line[q] !== ':') return null;
  q++;
  while (line[q] === ' ') q++;
  let key: PyValue;
  try {
    key = parsePyLiteral(line.slice(p, end + 1));
  } catch {
    return null;
  }
  return typeof key === 'string' ? { key, valueAt: q } : null;
}

/** The literal at the start of `raw` (a pprint value followed by `,` / `}` / junk), or undefined. */
function leadingLiteral(raw: string): PyValue | undefined {
  const s = raw.trim();
  let end: number;
  const c = s[0];
  if (c === '{' || c === '[' || c === '(') end = literalEnd(s, 0);
  else if (c === "'" || c === '"') end = skipString(s, 0) + 1;
  else {
    end = 0;
    while (end < s.length && s[end] !== ',' && s[end] !== '}') end++;
  }
  if (end <= 0) return undefined;
  try {
    return parsePyLiteral(s.slice(0, end));
  } catch {
    return undefined;
  }
}
