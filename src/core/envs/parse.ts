/**
 * Response parsing (spec §2.2 strict format, §3.3 projections).
 *
 * Strict format: `^\s*<think>(.*?)</think>\s*<action>(.*?)</action>\s*$`, tags case-insensitive, exactly one
 * opening and one closing tag of each kind, no CJK (U+4E00–U+9FFF). Implemented as one linear scan over the
 * tag positions instead of a backtracking regex, so a 1 MB response costs a few milliseconds at most.
 *
 * Two projections follow the paper's `env_package/*\/projection.py`:
 * - `projectStrict` (household, shop): strict → action = group 2 trimmed and lower-cased; non-strict with an
 *   `<action>…</action>` block → that text is still sent, format- and action-invalid; no action tag → the raw
 *   output's last 30 characters are sent, invalid.
 * - `projectKeywords` (Sokoban, FrozenLake): the first action block whose text contains a keyword gives the
 *   move; invalid (→ "still") when there is no think block, no action block or no keyword. `formatValid` is
 *   still the strict check, so the lab's format ratio means the same thing on every env (the paper's Sokoban
 *   reports 1 here; we report the strict check — a deliberate, documented deviation).
 */
import type { ActionProjection } from './types';

/** The history window and UI show at most this many characters of an applied action. */
export const MAX_APPLIED_CHARS = 100;

const TAG_RE = /<(\/?)(think|action)>/gi;
const CJK_RE = /[\u4e00-\u9fff]/;

interface TagScan {
  thinkOpen: number[];
  thinkClose: number[];
  actionOpen: number[];
  actionClose: number[];
}

/** Positions (index of `<`) of the four tags; stops recording a kind after 3 hits (only counts ≤ 2 matter). */
function scanTags(text: string): TagScan {
  const scan: TagScan = { thinkOpen: [], thinkClose: [], actionOpen: [], actionClose: [] };
  TAG_RE.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = TAG_RE.exec(text)) !== null) {
    const closing = m[1] === '/';
    const think = m[2].length === 5;
    const list = think ? (closing ? scan.thinkClose : scan.thinkOpen) : closing ? scan.actionClose : scan.actionOpen;
    if (list.length < 3) list.push(m.index);
  }
  return scan;
}

function isBlank(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    // \s in JS regex: ASCII whitespace plus the Unicode spaces; the ASCII set covers the model's vocabulary,
    // and anything exotic only makes the format invalid, never crashes.
    if (!(c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0xfeff || c === 0x2028 || c === 0x2029)) return false;
  }
  return true;
}

function clip(s: string): string {
  return s.length > MAX_APPLIED_CHARS ? s.slice(0, MAX_APPLIED_CHARS) : s;
}

function toText(input: unknown): string {
  if (typeof input === 'string') return input;
  try {
    return String(input ?? '');
  } catch {
    return '';
  }
}

export interface StrictParse {
  readonly formatValid: boolean;
  readonly think: string | null;
  /** First `<action>…</action>` block's text (trimmed, lower-cased) or null. */
  readonly actionBlock: string | null;
  /** First `<think>…</think>` block exists. */
  readonly hasThink: boolean;
}

/** The strict format check (spec §2.2) plus the first think/action blocks. Linear time; never throws. */
export function parseStrictFormat(input: unknown): StrictParse {
  const text = toText(input);
  return strictFromScan(text, scanTags(text));
}

function strictFromScan(text: string, s: TagScan): StrictParse {
  const firstThink = firstBlock(text, s.thinkOpen, s.thinkClose, 7);
  const firstAction = firstBlock(text, s.actionOpen, s.actionClose, 8);
  const actionBlock = firstAction === null ? null : firstAction.trim().toLowerCase();
  const exactlyOne = s.thinkOpen.length === 1 && s.thinkClose.length === 1 && s.actionOpen.length === 1 && s.actionClose.length === 1;
  let formatValid = false;
  if (exactlyOne) {
    const to = s.thinkOpen[0];
    const tc = s.thinkClose[0];
    const ao = s.actionOpen[0];
    const ac = s.actionClose[0];
    formatValid =
      to < tc &&
      tc < ao &&
      ao < ac &&
      isBlank(text, 0, to) &&
      isBlank(text, tc + 8, ao) &&
      isBlank(text, ac + 9, text.length) &&
      !CJK_RE.test(text);
  }
  return {
    formatValid,
    think: formatValid ? text.slice(s.thinkOpen[0] + 7, s.thinkClose[0]) : firstThink,
    actionBlock,
    hasThink: firstThink !== null,
  };
}

/** Text of the first open tag followed by a close tag of the same kind, or null. */
function firstBlock(text: string, opens: number[], closes: number[], openLen: number): string | null {
  if (opens.length === 0) return null;
  const o = opens[0];
  for (const c of closes) if (c > o) return text.slice(o + openLen, c);
  // A third close tag beyond the recorded ones may exist only if ≥ 3 closes were seen before it; fall back.
  const idx = text.toLowerCase().indexOf(openLen === 7 ? '</think>' : '</action>', o + openLen);
  return idx < 0 ? null : text.slice(o + openLen, idx);
}

/** Household / shop projection (spec §3.3, ALFWorld and WebShop). */
export function projectStrict(input: unknown): ActionProjection {
  const text = toText(input);
  const p = parseStrictFormat(text);
  if (p.actionBlock !== null) {
    return {
      think: p.think,
      action: clip(p.actionBlock),
      formatValid: p.formatValid,
      applied: clip(p.actionBlock),
      parsedValid: p.formatValid,
    };
  }
  const tail = text.slice(-30).trim().toLowerCase();
  return { think: p.think, action: null, formatValid: false, applied: tail, parsedValid: false };
}

/**
 * Grid-world projection (spec §3.3, Sokoban): the first action block containing a keyword; the earliest
 * keyword in that block wins. Invalid when there is no think block, no action block or no keyword.
 */
export function projectKeywords(input: unknown, keywords: readonly string[], fallback: string): ActionProjection {
  const text = toText(input);
  const s = scanTags(text);
  const p = strictFromScan(text, s);
  let found: string | null = null;
  // Walk the action blocks in order (only the first three opens are recorded; enough for real outputs).
  for (const o of s.actionOpen) {
    const c = s.actionClose.find((x) => x > o);
    if (c === undefined) break;
    found = earliestKeyword(text.slice(o + 8, c).toLowerCase(), keywords);
    if (found !== null) break;
  }
  const parsedValid = found !== null && p.hasThink;
  const applied = parsedValid ? (found as string) : fallback;
  return {
    think: p.think,
    action: parsedValid ? applied : p.actionBlock === null ? null : clip(p.actionBlock),
    formatValid: p.formatValid,
    applied,
    parsedValid,
  };
}

function earliestKeyword(block: string, keywords: readonly string[]): string | null {
  let best: string | null = null;
  let bestAt = Infinity;
  for (const k of keywords) {
    const at = block.indexOf(k);
    if (at >= 0 && at < bestAt) {
      best = k;
      bestAt = at;
    }
  }
  return best;
}

/** Render an expert move in the strict format. */
export function formatResponse(think: string, action: string): string {
  return `<think>${think}</think><action>${action}</action>`;
}
