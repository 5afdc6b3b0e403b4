/**
 * verl console logs: what verl's console logger prints once per step, `step:N - key:value - key:value …`,
 * inside Ray's stdout stream.
 *
 * What real logs contain besides those lines (../shared/data/real-runs/verl-console, README §1):
 * - every line may carry ANSI colour codes and a Ray worker prefix, `\x1b[36m(TaskRunner pid=14640)\x1b[0m `
 *   (older verl: `(main_task pid=…)`), sometimes a dim code first (`\x1b[2m`);
 * - the Hydra config, pprint-ed as a Python dict over hundreds of prefixed lines before training;
 * - validation samples and model completions, whose text contains "step:" ("Let's start with the first
 *   step:") — a step line is only one whose content, after the prefix, *starts* with `step:<digits> - `;
 * - a validation-only line sharing its step with the training line (merged into one step);
 * - `"Final validation metrics: {…}"`, pprint-wrapped over several lines in newer verl (→ meta.finalMetrics);
 * - NUL bytes inside NCCL lines (harmless: those lines are noise).
 *
 * Values: plain numbers, `nan`/`inf`/`-inf`, numpy ≥ 2 reprs (`np.float64(0.1)`); key names may contain
 * parentheses (`actor/lr(1e-4)`), so the key is everything before the segment's last ':'.
 *
 * Hot path: a line without "step:" costs one indexOf (plus two more before training starts); step lines are
 * cut with indexOf, not regexes, so nothing backtracks and noise lines allocate nothing.
 */
import { literalEnd, LiteralScanner, parsePprintDict, parsePyLiteral, PyLiteralError, toJsonSafe, type PyValue } from './pyLiteral';
import { bump, fastDecimal, parseMetricNumber, StepAccumulator } from './steps';
import type { LineParser, SourceMeta, StepSink } from './types';

/** Longest config/final-metrics block collected before giving up on it (a config is ~20 KB). */
const MAX_BLOCK_CHARS = 4 << 20;

/**
 * Where a line's own text starts, after ANSI colour codes and one Ray worker prefix `(<name> pid=<n>[, ip=…])`.
 * Text before a carriage return belongs to an overwritten tqdm bar and is ignored.
 */
export function rayContentStart(line: string): number {
  let i = line.lastIndexOf('\r') + 1;
  let sawPrefix = false;
  while (i < line.length) {
    const c = line.charCodeAt(i);
    if (c === 27 /* ESC */) {
      const m = line.indexOf('m', i);
      if (m < 0 || m - i > 12) return i;
      i = m + 1;
    } else if (c === 32 /* space */) {
      // Spaces count as the line's own text unless a colour code follows them (`…pid=1)\x1b[0m \x1b[32mstep:1`).
      let j = i;
      while (j < line.length && line.charCodeAt(j) === 32) j++;
      if (line.charCodeAt(j) !== 27) return i;
      i = j;
    } else if (c === 40 /* ( */ && !sawPrefix) {
      const close = line.indexOf(')', i);
      if (close < 0 || close - i > 200) return i;
      const pid = line.indexOf(' pid=', i);
      if (pid < 0 || pid > close) return i;
      sawPrefix = true;
      i = close + 1;
    } else return i;
  }
  return i;
}

/** The line without the colour codes (and spaces) that close it (`…critic/score/mean:0.3\x1b[0m`). */
function withoutTrailingCodes(line: string): string {
  let end = line.length;
  for (;;) {
    while (end > 0 && line.charCodeAt(end - 1) === 32) end--;
    if (end === 0 || line.charCodeAt(end - 1) !== 109 /* m */) break;
    const esc = line.lastIndexOf('\x1b', end - 1);
    if (esc < 0 || end - esc > 12 || line[esc + 1] !== '[') break;
    let ok = true;
    for (let k = esc + 2; k < end - 1; k++) {
      const c = line.charCodeAt(k);
      if (!((c >= 48 && c <= 57) || c === 59)) ok = false;
    }
    if (!ok) break;
    end = esc;
  }
  return end === line.length ? line : line.slice(0, end);
}

function skipSpaces(line: string, i: number): number {
  while (i < line.length && line.charCodeAt(i) === 32) i++;
  return i;
}

/** A dict being collected over several lines; `scanner` finds its end, `start` is where it begins in `text`. */
type Block = { kind: 'config' | 'final'; prefix: string; text: string; start: number; scanner: LiteralScanner | null };

export function createVerlConsoleParser(onStep: StepSink): LineParser {
  const skipped: Record<string, number> = {};
  const acc = new StepAccumulator(onStep, skipped);
  const meta: SourceMeta = { framework: 'verl', notes: [] };
  const nonNumeric = new Map<string, number>();
  let block: Block | null = null;
  let configChars = 0;
  let firstStep = Number.NaN;
  let lastStep = Number.NaN;
  let restarts = 0;

  /** `complete`: the braces closed; otherwise the block was cut short and only the layout can be trusted. */
  function finishConfig(text: string, complete: boolean): void {
    // Several dicts may be printed before training; the echoed config is by far the largest.
    if (text.length <= configChars) return;
    let v: PyValue | undefined;
    let why = '';
    if (complete) {
      try {
        v = parsePyLiteral(text);
      } catch (e) {
        why = e instanceof PyLiteralError ? e.message : String(e);
      }
    } else why = 'its closing braces never came';
    if (v === undefined) {
      const r = parsePprintDict(text);
      if (Object.keys(r.value).length === 0) {
        meta.notes.push(`the config dict printed before training did not parse (${why}); config left out`);
        return;
      }
      v = r.value;
      meta.notes.push(
        `the config dict printed before training is damaged in the log (${why}); rebuilt from its pprint layout${r.lost > 0 ? `, ${r.lost} damaged line(s) left out` : ''}`,
      );
    }
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      meta.config = toJsonSafe(v) as Record<string, unknown>;
      configChars = text.length;
    }
  }

  function finishFinal(text: string): void {
    // Three spellings: a bare `Final validation metrics: {…}`, its str repr in quotes, or (newer verl, pprint
    // of a long string) a parenthesised run of adjacent string literals.
    let s = text.trim();
    try {
      if (s.startsWith('(') || s.startsWith('"') || s.startsWith("'")) {
        const v = parsePyLiteral(s);
        if (typeof v === 'string') s = v;
      }
      const at = s.indexOf('{', s.indexOf('Final validation metrics'));
      const end = at < 0 ? -1 : literalEnd(s, at);
      if (end < 0) throw new PyLiteralError('no complete {…} after "Final validation metrics:"', at);
      const v = parsePyLiteral(s.slice(at, end)) as PyValue;
      const final: Record<string, number> = {};
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
        for (const k in v) if (typeof v[k] === 'number') final[k] = v[k] as number;
      }
      meta.finalMetrics = { ...meta.finalMetrics, ...final };
      meta.notes.push(
        `final validation metrics read: ${Object.entries(final)
          .map(([k, x]) => `${k}=${x}`)
          .join(', ')}`,
      );
    } catch (e) {
      bump(skipped, 'unparsable final validation line');
      meta.notes.push(`the "Final validation metrics" line did not parse (${e instanceof Error ? e.message : String(e)})`);
    }
  }

  function closeUnfinished(): void {
    const b = block;
    block = null;
    if (b === null) return;
    if (b.kind === 'config') finishConfig(b.text, false);
    else {
      bump(skipped, 'unparsable final validation line');
      meta.notes.push('a "Final validation metrics" block never closed; left out');
    }
  }

  /** Feeds a line to the open block; returns true when the line belonged to it. */
  function feedBlock(b: Block, line: string, cs: number): boolean {
    if (line.slice(0, cs) !== b.prefix) return false;
    b.text += '\n' + line.slice(cs);
    tryClose(b);
    return true;
  }

  function tryClose(b: Block): void {
    const t = b.text;
    if (b.scanner === null) {
      if (b.kind === 'config') b.start = t.indexOf('{');
      else {
        const lead = skipSpacesAny(t, 0);
        b.start = t[lead] === '(' ? lead : t.indexOf('{');
      }
      if (b.start >= 0) b.scanner = new LiteralScanner(b.start);
    }
    const end = b.scanner === null ? -1 : b.scanner.scan(t);
    if (end >= 0) {
      block = null;
      if (b.kind === 'config') finishConfig(t.slice(b.start, end), true);
      else finishFinal(t);
    } else if (t.length > MAX_BLOCK_CHARS) {
      block = null;
      meta.notes.push(
        `a ${b.kind === 'config' ? 'config dict' : '"Final validation metrics" block'} ran past ${MAX_BLOCK_CHARS >> 20} MB without closing; left out`,
      );
    }
  }

  function stepLine(line: string, at: number): void {
    // at points at "step:"; digits follow.
    let i = at + 5;
    const digitsStart = i;
    while (i < line.length) {
      const c = line.charCodeAt(i);
      if (c < 48 || c > 57) break;
      i++;
    }
    if (i === digitsStart || !line.startsWith(' - ', i)) return; // "step:" text that is not a metrics line
    const step = Number(line.slice(digitsStart, i));
    const values: Record<string, number> = {};
    let n = 0;
    let bad = 0;
    // Ray's log deduplication appends " [repeated 3x across cluster]" to a line it folded.
    let len = line.length;
    if (line.charCodeAt(len - 1) === 93 /* ] */) {
      const rep = line.lastIndexOf(' [repeated ');
      if (rep > i) len = rep;
    }
    while (i < len && line.startsWith(' - ', i)) {
      const from = i + 3;
      let to = line.indexOf(' - ', from);
      if (to < 0 || to > len) to = len;
      const colon = line.lastIndexOf(':', to - 1);
      if (colon <= from) bad++;
      else {
        const key = line.slice(from, colon);
        const v = fastDecimal(line, colon + 1, to) ?? parseMetricNumber(line.slice(colon + 1, to));
        if (v === undefined) nonNumeric.set(key, (nonNumeric.get(key) ?? 0) + 1);
        else {
          values[key] = v;
          n++;
        }
      }
      i = to;
    }
    if (n === 0) {
      bump(skipped, 'step line without numeric metrics');
      return;
    }
    if (bad > 0) bump(skipped, 'unparsable key:value segment', bad);
    if (Number.isNaN(firstStep)) firstStep = step;
    else if (step < lastStep) restarts++;
    lastStep = step;
    acc.add(step, values);
  }

  return {
    format: 'verl-console',
    skipped,
    meta,
    push(line: string): void {
      const at = line.indexOf('step:');
      if (block !== null) {
        const cs = rayContentStart(line);
        if (at < 0 || !line.startsWith('step:', skipSpaces(line, cs))) {
          if (feedBlock(block, line, cs)) return;
        } else {
          // A step line inside an unclosed block: the log lost the block's end.
          closeUnfinished();
        }
      }
      if (at >= 0) {
        const cs = skipSpaces(line, rayContentStart(line));
        if (cs === at) {
          stepLine(withoutTrailingCodes(line), at);
          return;
        }
      }
      // Before training: the echoed config dict. After: the final validation metrics.
      if (Number.isNaN(firstStep) && line.indexOf("{'") >= 0) {
        const cs = rayContentStart(line);
        const c = skipSpaces(line, cs);
        if (line.startsWith("{'", c)) {
          // Keep the spaces after the prefix: pprint's columns are counted from the prefix's end.
          block = { kind: 'config', prefix: line.slice(0, cs), text: line.slice(cs), start: -1, scanner: null };
          tryClose(block);
        }
        return;
      }
      if (line.indexOf('Final validation metrics') >= 0) {
        const cs = rayContentStart(line);
        block = { kind: 'final', prefix: line.slice(0, cs), text: line.slice(skipSpaces(line, cs)), start: -1, scanner: null };
        tryClose(block);
      }
    },
    flushPending: () => acc.flushPending(),
    end(): void {
      if (block !== null) closeUnfinished();
      acc.flush();
      if (!Number.isNaN(firstStep) && firstStep > 1) meta.notes.push(`first step is ${firstStep}: the run was resumed`);
      if (restarts > 0) meta.notes.push(`step numbers went back ${restarts} time(s): a restarted process appended to the log`);
      if (nonNumeric.size > 0) {
        const keys = [...nonNumeric.keys()];
        meta.notes.push(
          `${keys.length} key(s) with non-numeric values ignored: ${keys.slice(0, 5).join(', ')}${keys.length > 5 ? ', …' : ''}`,
        );
      }
      if (meta.config && looksLikeSft(meta.config)) meta.notes.push('the config is an SFT trainer config (fsdp_sft_trainer), not RL');
      // verl-agent's config adds an `env` section (environment name, rollout group size, max turns) to verl's.
      const env = meta.config?.env as Record<string, unknown> | undefined;
      if (env && typeof env === 'object' && ('max_steps' in env || 'env_name' in env)) meta.framework = 'verl-agent';
    },
  };
}

function skipSpacesAny(t: string, i: number): number {
  while (i < t.length && (t[i] === ' ' || t[i] === '\n')) i++;
  return i;
}

function looksLikeSft(config: Record<string, unknown>): boolean {
  const data = config.data as Record<string, unknown> | undefined;
  return !('actor_rollout_ref' in config) && data !== undefined && 'response_key' in data;
}
