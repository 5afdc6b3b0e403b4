/**
 * Word/symbol-level tokenizer fitted to the testbed text.
 *
 * Why not BPE: the testbed text is templated (grids of one-character symbols, a few hundred English words), so a
 * word/symbol vocabulary of a few hundred entries gives short sequences (a 6×6 Sokoban grid is ~45 tokens) and
 * makes every token meaningful to a tiny model. The tags `<think>`, `</think>`, `<action>`, `</action>` are single
 * tokens, so the response format is four decisions rather than dozens (calibration.md: format is learned at once).
 *
 * Normalisation (what round-trips): tabs become spaces, runs of spaces collapse to one, spaces at line ends are
 * dropped, `\r\n` becomes `\n`. `decode(encode(x)) === normalizeText(x)` for every text made of characters the
 * tokenizer has seen (all printable ASCII is always in the vocabulary; other characters are added when fitting).
 *
 * Pieces: a word `[A-Za-z]+`, one digit, one other symbol, a tag, or a newline — each optionally preceded by one
 * space, which is part of the piece (" up" and "up" are different tokens, as in GPT-2). A word the vocabulary does
 * not hold falls back to its characters, so unseen words still round-trip.
 *
 * Version 2 adds identifier pieces: letters followed by digits (`b01048`, a shop product id) are one piece, and a
 * space before one is a piece of its own, so an id is the same token in a page (" b01048"), inside `click[b01048]`
 * and at the start of a rationale. Why: the policy must copy ids from the observation into its action; with ids
 * spelt digit by digit a tiny model invents digits instead (session 3 measured 300/300 shop clicks on ids not on
 * the page). One token per id makes the copy a single attention-and-tied-embedding step. Version 1 tokenizers
 * (every checkpoint written before) keep version 1's pieces, so they encode exactly as before.
 */

export const TOKENIZER_FORMAT = 'arlarena-wordsym-tokenizer';
/** The version `fit` writes. */
export const TOKENIZER_VERSION = 2;
/** Versions this build reads; each selects its pretokenizer. */
export const TOKENIZER_VERSIONS = [1, 2] as const;
export type TokenizerVersion = (typeof TOKENIZER_VERSIONS)[number];

export const PAD = '<pad>';
export const BOS = '<bos>';
export const EOS = '<eos>';
export const UNK = '<unk>';
export const THINK_OPEN = '<think>';
export const THINK_CLOSE = '</think>';
export const ACTION_OPEN = '<action>';
export const ACTION_CLOSE = '</action>';

/** Special tokens, in id order (ids 0..7 in every tokenizer). */
export const SPECIAL_TOKENS = [PAD, BOS, EOS, UNK, THINK_OPEN, THINK_CLOSE, ACTION_OPEN, ACTION_CLOSE] as const;
const CONTROL = new Set<string>([PAD, BOS, EOS, UNK]);
const TAGS = [THINK_OPEN, THINK_CLOSE, ACTION_OPEN, ACTION_CLOSE];

/** Persisted form (tokenizer.json). */
export interface TokenizerJson {
  format: typeof TOKENIZER_FORMAT;
  version: number;
  /** Token strings in id order. */
  vocab: string[];
}

export interface FitOptions {
  /** Keep a word piece only if it occurs at least this often (default 1). */
  minCount?: number;
  /** Upper bound on the vocabulary size (most frequent pieces kept; ties broken alphabetically). */
  maxVocab?: number;
  /**
   * Pieces that enter the vocabulary whatever their count, before the counted ones and outside `maxVocab` — an
   * env's closed set of identifiers (the shop's product ids), most of which a fitting corpus never shows.
   */
  extraPieces?: readonly string[];
  /** Pretokenizer version to fit (default TOKENIZER_VERSION). */
  version?: TokenizerVersion;
}

export function normalizeText(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[\t\f\v ]+/g, ' ')
    .replace(/ +\n/g, '\n')
    .replace(/ +$/g, '');
}

// A tag, a newline, or an optional single space followed by a word / digit / one symbol. A lone trailing space
// cannot occur after normalisation except before a newline, which normalisation removes.
const PIECE_RE_V1 = /\n| ?<\/?(?:think|action)>| ?[A-Za-z]+| ?[0-9]| ?[^\sA-Za-z0-9]| /gu;
// Version 2: an identifier (letters then digits) is one piece and never carries the space before it, which is a
// piece of its own (the lookahead alternative), so every occurrence of an id is the same token.
const PIECE_RE_V2 = /\n| ?<\/?(?:think|action)>|[A-Za-z]+[0-9]+| (?=[A-Za-z]+[0-9])| ?[A-Za-z]+| ?[0-9]| ?[^\sA-Za-z0-9]| /gu;

/** Split normalised text into pieces (the unit the vocabulary is made of), by a tokenizer version's rules. */
export function pretokenize(normalized: string, version: TokenizerVersion = TOKENIZER_VERSION): string[] {
  return normalized.match(version === 1 ? PIECE_RE_V1 : PIECE_RE_V2) ?? [];
}

function isTokenizerVersion(v: unknown): v is TokenizerVersion {
  return (TOKENIZER_VERSIONS as readonly unknown[]).includes(v);
}

function baseSymbols(): string[] {
  const out: string[] = ['\n', ' '];
  for (let c = 33; c < 127; c++) out.push(String.fromCharCode(c));
  return out;
}

export class Tokenizer {
  readonly vocab: readonly string[];
  private readonly index: Map<string, number>;
  readonly padId = 0;
  readonly bosId = 1;
  readonly eosId = 2;
  readonly unkId = 3;
  readonly thinkOpenId = 4;
  readonly thinkCloseId = 5;
  readonly actionOpenId = 6;
  readonly actionCloseId = 7;

  constructor(
    vocab: readonly string[],
    readonly version: TokenizerVersion = TOKENIZER_VERSION,
  ) {
    for (let i = 0; i < SPECIAL_TOKENS.length; i++) {
      if (vocab[i] !== SPECIAL_TOKENS[i]) {
        throw new Error(`Tokenizer: vocab[${i}] must be ${SPECIAL_TOKENS[i]}, got ${JSON.stringify(vocab[i])}`);
      }
    }
    this.vocab = [...vocab];
    this.index = new Map();
    vocab.forEach((t, i) => {
      if (this.index.has(t)) throw new Error(`Tokenizer: duplicate token ${JSON.stringify(t)} at ids ${this.index.get(t)} and ${i}`);
      this.index.set(t, i);
    });
  }

  get size(): number {
    return this.vocab.length;
  }

  id(token: string): number | undefined {
    return this.index.get(token);
  }

  /** Token ids of normalised `text` (no <bos>/<eos> added). */
  encode(text: string): number[] {
    const out: number[] = [];
    for (const piece of pretokenize(normalizeText(text), this.version)) this.encodePiece(piece, out);
    return out;
  }

  private encodePiece(piece: string, out: number[]): void {
    const direct = this.index.get(piece);
    if (direct !== undefined) {
      out.push(direct);
      return;
    }
    let rest = piece;
    if (piece.startsWith(' ') && piece.length > 1) {
      rest = piece.slice(1);
      const bare = this.index.get(rest);
      out.push(this.index.get(' ') ?? this.unkId);
      if (bare !== undefined) {
        out.push(bare);
        return;
      }
    }
    for (const ch of rest) out.push(this.index.get(ch) ?? this.unkId);
  }

  /** Text of ids. Control tokens (<pad>, <bos>, <eos>) are dropped unless `keepSpecial`; <unk> prints as itself. */
  decode(ids: ArrayLike<number>, keepSpecial = false): string {
    let s = '';
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      const t = this.vocab[id];
      if (t === undefined) throw new RangeError(`Tokenizer.decode: id ${id} outside vocabulary of ${this.vocab.length}`);
      if (!keepSpecial && CONTROL.has(t) && t !== UNK) continue;
      s += t;
    }
    return s;
  }

  toJSON(): TokenizerJson {
    return { format: TOKENIZER_FORMAT, version: this.version, vocab: [...this.vocab] };
  }

  static fromJSON(json: unknown): Tokenizer {
    const j = json as Partial<TokenizerJson> | null;
    if (!j || j.format !== TOKENIZER_FORMAT) {
      throw new Error(`Tokenizer.fromJSON: format must be "${TOKENIZER_FORMAT}", got ${JSON.stringify(j?.format)}`);
    }
    if (!isTokenizerVersion(j.version)) {
      throw new Error(
        `Tokenizer.fromJSON: version ${j.version} is not supported (this build reads versions ${TOKENIZER_VERSIONS.join(', ')})`,
      );
    }
    if (!Array.isArray(j.vocab) || !j.vocab.every((t) => typeof t === 'string')) {
      throw new Error('Tokenizer.fromJSON: vocab must be an array of strings');
    }
    return new Tokenizer(j.vocab, j.version);
  }

  /**
   * Fit a vocabulary to a corpus. Deterministic: the specials, then the base symbols (printable ASCII, space,
   * newline), then every other character seen (sorted), then the extra pieces (in the order given), then pieces by
   * descending count (ties alphabetical).
   */
  static fit(corpus: Iterable<string>, opts: FitOptions = {}): Tokenizer {
    const minCount = opts.minCount ?? 1;
    const version = opts.version ?? TOKENIZER_VERSION;
    const counts = new Map<string, number>();
    const extraChars = new Set<string>();
    for (const text of corpus) {
      for (const piece of pretokenize(normalizeText(text), version)) {
        counts.set(piece, (counts.get(piece) ?? 0) + 1);
        for (const ch of piece) extraChars.add(ch);
      }
    }
    const vocab: string[] = [...SPECIAL_TOKENS];
    const have = new Set<string>(vocab);
    const add = (t: string): void => {
      if (!have.has(t)) {
        have.add(t);
        vocab.push(t);
      }
    };
    for (const s of baseSymbols()) add(s);
    for (const ch of [...extraChars].sort()) add(ch);
    for (const tag of TAGS) add(` ${tag}`);
    const beforeExtra = vocab.length;
    for (const p of opts.extraPieces ?? []) {
      const pieces = pretokenize(normalizeText(p), version);
      if (pieces.length !== 1 || pieces[0] !== p) {
        throw new Error(
          `Tokenizer.fit: extra piece ${JSON.stringify(p)} is not one version-${version} piece (it splits into ${JSON.stringify(pieces)})`,
        );
      }
      add(p);
    }
    const nExtra = vocab.length - beforeExtra;
    const ranked = [...counts.entries()]
      .filter(([p, c]) => c >= minCount && !have.has(p))
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    for (const [p] of ranked) {
      if (opts.maxVocab !== undefined && vocab.length - nExtra >= opts.maxVocab) break;
      add(p);
    }
    return new Tokenizer(vocab, version);
  }
}
