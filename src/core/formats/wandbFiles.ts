/**
 * The run folder W&B clients before 0.10 left on disk (`wandb/run-<date>-<id>/`, `wandb/dryrun-<date>-<id>/`),
 * which has no `.wandb` transaction log: the history is `wandb-history.jsonl` (one JSON object per `wandb.log`
 * row, with W&B's own `_step`, `_runtime` and `_timestamp` keys), the last values are `wandb-summary.json` (one
 * JSON object), the config is `config.yaml` (`wandb_version: 1`, then one `key: {desc, value}` entry per config
 * key, W&B's own under `_wandb`), and `wandb-metadata.json` says where and how the run ran (`startedAt`,
 * `state`, `exitcode`, `project`, `name`).
 *
 * Facts from the old Python client (wandb ≤ 0.9: `wandb/history.py` wrote the history rows with `json.dumps`, so
 * NaN and ±inf appear as the bare tokens `NaN` / `Infinity` / `-Infinity`; `wandb/wandb_config.py` wrote
 * config.yaml with PyYAML's block style). Pure: text in, values out, no files.
 */
import { MAX_RECORD_DEPTH, MAX_RECORD_KEYS, RecordLimitError } from './steps';

const NAN_MARK = '\u0000NaN';
const INF_MARK = '\u0000+Inf';
const NINF_MARK = '\u0000-Inf';

/** JSON with Python's bare NaN / Infinity / -Infinity allowed (outside strings they become numbers). */
export function parsePythonJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const fixed = text.replace(/"(?:[^"\\]|\\.)*"|-Infinity|Infinity|NaN/g, (m) =>
      m.charCodeAt(0) === 34 ? m : JSON.stringify(m === 'NaN' ? NAN_MARK : m === 'Infinity' ? INF_MARK : NINF_MARK),
    );
    return unmark(JSON.parse(fixed));
  }
}

function unmark(v: unknown): unknown {
  if (typeof v === 'string' && v.charCodeAt(0) === 0)
    return v === NAN_MARK ? Number.NaN : v === INF_MARK ? Number.POSITIVE_INFINITY : v === NINF_MARK ? Number.NEGATIVE_INFINITY : v;
  if (Array.isArray(v)) return v.map(unmark);
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) o[k] = unmark(o[k]);
  }
  return v;
}

/**
 * The first line of a file is a W&B history row: a JSON object with an integer `_step` and W&B's `_runtime` or
 * `_timestamp` beside it (what every row the old client wrote carries).
 */
export function isWandbHistoryHead(text: string): boolean {
  const nl = text.indexOf('\n');
  const line = (nl < 0 ? text : text.slice(0, nl)).trim();
  if (!line.startsWith('{') || !line.includes('"_step"')) return false;
  let o: unknown;
  try {
    o = parsePythonJson(line);
  } catch {
    return false;
  }
  if (o === null || typeof o !== 'object' || Array.isArray(o)) return false;
  const r = o as Record<string, unknown>;
  return Number.isSafeInteger(r._step) && (typeof r._runtime === 'number' || typeof r._timestamp === 'number');
}

/** W&B's config.yaml starts with `wandb_version: 1` (PyYAML may put it after other keys: any top-level line). */
export function isWandbConfigYaml(text: string): boolean {
  return /^wandb_version:\s*1\s*$/m.test(text);
}

/**
 * One history row: its step (`_step`), wall time (`_timestamp`, seconds) and numeric values — nested dicts as
 * `a.b` (as W&B shows them, and as the `.wandb` reader names them), `_runtime` kept as a value, media and other
 * non-numbers left out (their keys go to `onIgnored`). Null when the row has no integer `_step`.
 */
export function wandbHistoryRow(
  o: Record<string, unknown>,
  onIgnored: (key: string) => void,
): { step: number; wallTime?: number; values: Record<string, number> } | null {
  const step = o._step;
  if (typeof step !== 'number' || !Number.isSafeInteger(step)) return null;
  const values: Record<string, number> = {};
  const count = { n: 0 };
  for (const k in o) {
    if (k === '_step' || k === '_timestamp') continue;
    numbers(k, o[k], values, onIgnored, 1, count);
  }
  const ts = o._timestamp;
  return typeof ts === 'number' && Number.isFinite(ts) ? { step, wallTime: ts, values } : { step, values };
}

/** A summary's numeric values (W&B's own `_…` keys left out), nested dicts as `a.b`. */
export function wandbSummaryValues(o: Record<string, unknown>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k in o) if (k.charCodeAt(0) !== 95 /* _ */) numbers(k, o[k], out, () => undefined);
  return out;
}

/**
 * `v`'s numbers into `out` under `key`. A row is bounded as a JSONL record is (MAX_RECORD_DEPTH, MAX_RECORD_KEYS:
 * RecordLimitError, which the reader skips and counts): a row nested 20,000 deep overflowed the stack and aborted
 * the whole import.
 */
function numbers(
  key: string,
  v: unknown,
  out: Record<string, number>,
  onIgnored: (key: string) => void,
  depth = 1,
  count = { n: 0 },
): void {
  if (++count.n > MAX_RECORD_KEYS) throw new RecordLimitError(`record with more than ${MAX_RECORD_KEYS} values`);
  if (typeof v === 'number') out[key] = v;
  else if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    // A media or table value (`{"_type": "image-file", …}`) is not a metric.
    if (typeof o._type === 'string') {
      onIgnored(key);
      return;
    }
    if (depth >= MAX_RECORD_DEPTH) throw new RecordLimitError(`record nested deeper than ${MAX_RECORD_DEPTH} levels`);
    for (const k in o) numbers(`${key}.${k}`, o[k], out, onIgnored, depth + 1, count);
  } else onIgnored(key);
}

/**
 * config.yaml as the config W&B shows: each top-level entry's `value` (W&B wrote `{desc, value}` per key),
 * `wandb_version` and W&B's own `_wandb` left out. Reads the block YAML PyYAML writes (mappings by indentation,
 * `- ` sequences, plain / quoted scalars, `{}` / `[]` for empty ones); throws on what it cannot read.
 */
export function wandbConfigFromYaml(text: string): Record<string, unknown> {
  const doc = parseBlockYaml(text);
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new Error('config.yaml is not a mapping');
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(doc as Record<string, unknown>)) {
    if (k === 'wandb_version' || k === '_wandb') continue;
    const isEntry = v !== null && typeof v === 'object' && !Array.isArray(v) && 'value' in (v as Record<string, unknown>);
    out[k] = isEntry ? (v as Record<string, unknown>).value : v;
  }
  return out;
}

interface Line {
  readonly indent: number;
  readonly text: string;
  readonly no: number;
}

/** The subset of YAML that PyYAML's `yaml.dump(…, default_flow_style=False)` produces for plain data. */
export function parseBlockYaml(text: string): unknown {
  const lines: Line[] = [];
  text.split('\n').forEach((raw, i) => {
    const s = raw.replace(/\r$/, '');
    const t = s.trim();
    if (t === '' || t.startsWith('#') || t === '---' || t === '...') return;
    lines.push({ indent: s.length - s.trimStart().length, text: t, no: i + 1 });
  });
  let pos = 0;

  const fail = (l: Line, why: string): never => {
    throw new Error(`config.yaml line ${l.no}: ${why}`);
  };

  function block(indent: number): unknown {
    const first = lines[pos];
    if (first.text.startsWith('- ') || first.text === '-') return seq(first.indent);
    return map(indent);
  }

  function map(indent: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    while (pos < lines.length && lines[pos].indent === indent && !lines[pos].text.startsWith('- ') && lines[pos].text !== '-') {
      const l = lines[pos];
      const m = /^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^:#]+?|):(?:\s+(.*))?$/.exec(l.text);
      if (!m) fail(l, `expected "key: value", got ${JSON.stringify(l.text.slice(0, 40))}`);
      const key = String(scalar(m![1]));
      pos++;
      const rest = m![2];
      if (rest !== undefined && rest !== '') {
        // PyYAML folds a long plain scalar onto deeper-indented lines: they continue the value.
        let full = rest;
        while (pos < lines.length && lines[pos].indent > indent) full += ` ${lines[pos++].text}`;
        out[key] = scalar(full);
      } else if (pos < lines.length && (lines[pos].indent > indent || (lines[pos].indent === indent && lines[pos].text.startsWith('-'))))
        out[key] = block(lines[pos].indent);
      else out[key] = null;
    }
    return out;
  }

  function seq(indent: number): unknown[] {
    const out: unknown[] = [];
    while (pos < lines.length && lines[pos].indent === indent && (lines[pos].text.startsWith('- ') || lines[pos].text === '-')) {
      const l = lines[pos];
      const rest = l.text === '-' ? '' : l.text.slice(2).trim();
      if (rest === '') {
        pos++;
        out.push(pos < lines.length && lines[pos].indent > indent ? block(lines[pos].indent) : null);
      } else if (/^[^'"[{][^:]*:(\s|$)/.test(rest) || /^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'):(\s|$)/.test(rest)) {
        // `- key: value` opens a mapping whose further keys sit under the first one's column.
        const col = indent + (l.text.length - rest.length);
        lines[pos] = { indent: col, text: rest, no: l.no };
        out.push(map(col));
      } else {
        pos++;
        out.push(scalar(rest));
      }
    }
    return out;
  }

  if (lines.length === 0) return null;
  const v = block(lines[0].indent);
  if (pos < lines.length) fail(lines[pos], 'unexpected indentation');
  return v;
}

/** A YAML 1.1 plain or quoted scalar as PyYAML writes them (plus the empty flow collections). */
function scalar(s: string): unknown {
  const t = s.trim();
  if (t === '' || t === '~' || t === 'null' || t === 'Null' || t === 'NULL') return null;
  if (t === '{}') return {};
  if (t === '[]') return [];
  if (t.startsWith("'") && t.endsWith("'") && t.length >= 2) return t.slice(1, -1).replace(/''/g, "'");
  if (t.startsWith('"') && t.endsWith('"') && t.length >= 2) {
    try {
      return JSON.parse(t) as unknown;
    } catch {
      return t.slice(1, -1);
    }
  }
  if (t.startsWith('[') || t.startsWith('{')) {
    // A short flow collection (PyYAML writes these only when asked): read as JSON where it is JSON.
    try {
      return JSON.parse(t) as unknown;
    } catch {
      return t;
    }
  }
  if (/^(true|True|TRUE)$/.test(t)) return true;
  if (/^(false|False|FALSE)$/.test(t)) return false;
  if (/^[-+]?\.(inf|Inf|INF)$/.test(t)) return t.startsWith('-') ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  if (/^\.(nan|NaN|NAN)$/.test(t)) return Number.NaN;
  if (/^[-+]?(0|[1-9][0-9_]*)$/.test(t)) return Number(t.replace(/_/g, ''));
  if (/^[-+]?([0-9][0-9_]*)?\.[0-9_]*([eE][-+]?[0-9]+)?$/.test(t) || /^[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+$/.test(t)) {
    const n = Number(t.replace(/_/g, ''));
    if (!Number.isNaN(n)) return n;
  }
  // A plain string; a trailing comment is cut (PyYAML writes none, a hand edit may).
  const hash = t.indexOf(' #');
  return hash >= 0 ? t.slice(0, hash).trimEnd() : t;
}

/** What wandb-metadata.json says about the run (fields absent when the file does not have them). */
export interface WandbMetadata {
  readonly name?: string;
  readonly project?: string;
  readonly startedAt?: string;
  readonly state?: string;
  readonly exitcode?: number;
}

export function wandbMetadata(o: unknown): WandbMetadata {
  if (o === null || typeof o !== 'object' || Array.isArray(o)) return {};
  const r = o as Record<string, unknown>;
  const str = (k: string) => (typeof r[k] === 'string' && (r[k] as string).length > 0 ? (r[k] as string) : undefined);
  const out: { -readonly [K in keyof WandbMetadata]: WandbMetadata[K] } = {};
  const name = str('name') ?? str('display_name');
  if (name) out.name = name;
  const project = str('project');
  if (project) out.project = project;
  const startedAt = str('startedAt');
  if (startedAt) out.startedAt = startedAt;
  const state = str('state');
  if (state) out.state = state;
  if (typeof r.exitcode === 'number' && Number.isInteger(r.exitcode)) out.exitcode = r.exitcode;
  return out;
}

/** The W&B run id in a run folder's name (`run-20190101_120000-abcd1234`, `dryrun-…`, `offline-run-…`). */
export function wandbRunIdFromFolder(name: string): string | null {
  const m = /^(?:offline-run|dryrun|run)-\d{8}_\d{6}-([A-Za-z0-9]+)$/.exec(name);
  return m ? m[1] : null;
}
