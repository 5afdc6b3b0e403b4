/**
 * W&B's `.wandb` transaction log → source steps (format 'wandb'). The framing is wandbLog.ts; each payload is a
 * `wandb_internal.Record` (wandbProto.ts). What is read:
 *
 * - history rows: one step each. A row's items carry `key` or `nested_key` (wandb-core writes `nested_key`; a
 *   nested dict logged as `{"timing": {"gen": 1}}` is `nested_key: ["timing", "gen"]`, which W&B itself shows as
 *   `timing.gen`, so the parts join with '.') and a JSON value. The step is the row's `_step` item (else its
 *   `step.num`); `_timestamp` is the wall time; `_runtime` stays a value. W&B writes NaN / ±inf as the JSON
 *   tokens `NaN` / `Infinity` / `-Infinity`; they are kept. Strings, lists, booleans and media are not metrics:
 *   counted in the notes.
 * - config records (and the config inside the run record): applied in order (update, remove) onto one nested
 *   object — a verl run's Hydra config, as the trainer passed it to `wandb.init(config=…)`. W&B's own `_wandb`
 *   entry is left out.
 * - summary records: numeric values (not `_…`) → `meta.finalMetrics`.
 * - the run record: id, name, project, entity, group, tags, start time (→ `meta.run`).
 * - the exit record: exit code 0 → finished, else failed; a file that ends without one is a run that crashed
 *   (or, while followed, one still running).
 */
import { RecordShapes } from './recordShape';
import { bump, MAX_RUN_KEYS, SKIP_KEYS_PAST_RUN_LIMIT, StepAccumulator } from './steps';
import type { ByteParser, SourceMeta, SourceRunInfo, StepSink } from './types';
import { decodeWandbRecord, int64, type WandbItem, type WandbRecordMsg } from './wandbProto';
import { decimalAt, KeySlots, utf8At, Wire, WireError } from './wandbWire';
import { WandbLogReader, type Crc32 } from './wandbLog';

export const SKIP_UNDECODABLE = 'W&B record that is not a valid protobuf Record';
export const SKIP_NO_STEP = 'W&B history row without a step';
/** Skip reason: a summary value whose key is new after the summary already held MAX_RUN_KEYS keys (per value). */
export const SKIP_SUMMARY_PAST_RUN_LIMIT = `W&B summary value of a key past the first ${MAX_RUN_KEYS} keys`;

/**
 * Most slots the reader's KeySlots makes on its own (history and summary keys, nested keys' parts): past it a new
 * key is decoded and looked up by its string, not remembered. A run's first MAX_RUN_KEYS history keys always get
 * theirs (ofString), so this bounds only what rows past the key bound could add.
 */
const KEY_SLOTS_CAP = 2 * MAX_RUN_KEYS;

/** A history item's key path: the nested parts when present, else the flat key. */
export function itemPath(it: WandbItem): string[] {
  return it.nestedKey && it.nestedKey.length > 0 ? it.nestedKey : [it.key ?? ''];
}

/** W&B's JSON value, with Python's NaN / Infinity tokens allowed (they are what W&B writes). */
export function parseValueJson(s: string): unknown {
  const c = s.charCodeAt(0);
  // Fast path: a plain number (most history values).
  if ((c >= 48 && c <= 57) || c === 45) {
    const n = Number(s);
    if (!Number.isNaN(n)) return n;
    if (s === '-Infinity') return Number.NEGATIVE_INFINITY;
  }
  if (s === 'NaN') return Number.NaN;
  if (s === 'Infinity') return Number.POSITIVE_INFINITY;
  try {
    return JSON.parse(s);
  } catch {
    try {
      return JSON.parse(s.replace(/"(?:[^"\\]|\\.)*"|-Infinity|Infinity|NaN/g, (m) => (m.charCodeAt(0) === 34 ? m : 'null')));
    } catch {
      return undefined;
    }
  }
}

function setPath(o: Record<string, unknown>, path: readonly string[], v: unknown): void {
  let cur = o;
  for (let i = 0; i < path.length - 1; i++) {
    const k = path[i];
    const next = cur[k];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) cur[k] = {};
    cur = cur[k] as Record<string, unknown>;
  }
  cur[path[path.length - 1]] = v;
}

function deletePath(o: Record<string, unknown>, path: readonly string[]): void {
  let cur: unknown = o;
  for (let i = 0; i < path.length - 1; i++) {
    if (cur === null || typeof cur !== 'object') return;
    cur = (cur as Record<string, unknown>)[path[i]];
  }
  if (cur !== null && typeof cur === 'object') delete (cur as Record<string, unknown>)[path[path.length - 1]];
}

/** W&B config values arrive as `{"value": …, "desc": …}` in older clients' config.yaml; the records hold the value itself. */
function applyConfig(into: Record<string, unknown>, rec: { update?: WandbItem[]; remove?: WandbItem[] } | null | undefined): void {
  if (!rec) return;
  for (const it of rec.update ?? []) {
    const path = itemPath(it);
    if (path[0] === '_wandb') continue;
    setPath(into, path, parseValueJson(it.valueJson ?? 'null'));
  }
  for (const it of rec.remove ?? []) deletePath(into, itemPath(it));
}

function addNumbers(prefix: string, v: unknown, out: Record<string, number>, onIgnored: (k: string) => void): void {
  if (typeof v === 'number') out[prefix] = v;
  else if (typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    // A W&B media or table value (`{"_type": "image-file", …}`) is not a metric.
    if (typeof o._type === 'string') {
      onIgnored(prefix);
      return;
    }
    for (const [k, x] of Object.entries(o)) addNumbers(`${prefix}.${k}`, x, out, onIgnored);
  } else onIgnored(prefix);
}

const RECORD_FIELDS_DECODED = new Set([5, 17, 18, 21]); // config, run, exit, header: rare, decoded whole
const FIELD_HISTORY = 2;
const FIELD_SUMMARY = 3;
/** Fields of Record that are not its record type (num, control, uuid, _info). */
const NOT_A_TYPE = new Set([1, 16, 19, 200]);

/**
 * The record type's field number and the byte range of its message, without decoding anything else (history
 * and summary records are walked by hand below; everything W&B writes that the lab does not read — output,
 * stats, telemetry, files, requests — is skipped unread).
 */
function recordType(bytes: Uint8Array): { field: number; start: number; end: number } | null {
  const w = new Wire(bytes, 0, bytes.length);
  while (w.p < w.end) {
    const tag = w.varint();
    const field = tag >>> 3;
    const wt = tag & 7;
    if (wt !== 2) {
      w.skip(wt);
      continue;
    }
    const start = w.span();
    if (!NOT_A_TYPE.has(field)) return { field, start, end: w.p };
  }
  return null;
}

/**
 * Walks the repeated items of a HistoryRecord / SummaryRecord (`bytes[start, end)`): `onItem(field, slot, from, to,
 * name)` for each item of field 1 (a history's items, a summary's updates) or 2 (a summary's removals), with the
 * key's slot (its parts joined with '.' as itemPath does) and the item's value_json as a byte range of `bytes` (empty
 * when absent); a key new after `keys` is full has slot -1 and its string in `name`. Returns the HistoryStep's num
 * when the record has one (field 2 of a history, `stepField`).
 */
function walkItems(
  bytes: Uint8Array,
  start: number,
  end: number,
  keys: KeySlots,
  onItem: (field: number, slot: number, from: number, to: number, name: string) => void,
  stepField = 0,
): number | undefined {
  const w = new Wire(bytes, start, end);
  let step: number | undefined;
  while (w.p < end) {
    const tag = w.varint();
    const field = tag >>> 3;
    const wt = tag & 7;
    if ((field === 1 || (field === 2 && stepField === 0)) && wt === 2) {
      const itemEnd = w.varint() + w.p;
      if (itemEnd > end) throw new WireError();
      let key = -1;
      let keyName = '';
      let hasKey = false;
      let nested = -1;
      let nestedName = '';
      let parts = 0;
      let joined: string | null = null;
      let vs = 0;
      let ve = 0;
      while (w.p < itemEnd) {
        const t = w.varint();
        const f = t >>> 3;
        if (f === 1 && (t & 7) === 2) {
          const s = w.span();
          key = keys.of(bytes, s, w.p);
          if (key < 0) keyName = keys.missed;
          hasKey = true;
        } else if (f === 2 && (t & 7) === 2) {
          const s = w.span();
          const part = keys.of(bytes, s, w.p);
          const partName = part >= 0 ? keys.keys[part] : keys.missed;
          // One part (how wandb-core writes a flat key) is that part's slot; more are joined as itemPath joins them.
          if (parts++ === 0) {
            nested = part;
            nestedName = partName;
          } else joined = `${joined ?? nestedName}.${partName}`;
        } else if (f === 16 && (t & 7) === 2) {
          vs = w.span();
          ve = w.p;
        } else w.skip(t & 7);
      }
      if (w.p > itemEnd) throw new WireError();
      if (joined !== null) {
        const slot = keys.ofStringIfRoom(joined);
        onItem(field, slot, vs, ve, slot < 0 ? joined : '');
      } else if (parts > 0) onItem(field, nested, vs, ve, nestedName);
      else if (hasKey) onItem(field, key, vs, ve, keyName);
      else onItem(field, keys.ofString(''), vs, ve, '');
    } else if (field === stepField && stepField !== 0 && wt === 2) {
      const stepEnd = w.varint() + w.p;
      if (stepEnd > end) throw new WireError();
      while (w.p < stepEnd) {
        const t = w.varint();
        if (t >>> 3 === 1 && (t & 7) === 0) step = w.int64();
        else w.skip(t & 7);
      }
    } else w.skip(wt);
  }
  return step;
}

const utf8 = new TextDecoder('utf-8');

/** A history value: a plain decimal read from its bytes, anything else parsed from its text as W&B's JSON. */
function valueAt(b: Uint8Array, s: number, e: number): unknown {
  return decimalAt(b, s, e) ?? parseValueJson(utf8At(b, s, e));
}

export interface WandbParserOptions {
  /** Live follow: a missing exit record means "still running", not "crashed". */
  readonly following?: boolean;
  /** CRC-32 for the framing's checks (wandbLog.ts `Crc32`); the crc-32 package's when not given. */
  readonly crc32?: Crc32;
}

export interface WandbByteParser extends ByteParser {
  /** The W&B run this file belongs to (from its run record), once read. */
  readonly runInfo: SourceRunInfo | null;
  /** Whether the file ended with W&B's exit record. */
  readonly exited: boolean;
}

export function createWandbParser(onStep: StepSink, opts: WandbParserOptions = {}): WandbByteParser {
  const skipped: Record<string, number> = {};
  const acc = new StepAccumulator(onStep, skipped);
  const config: Record<string, unknown> = {};
  const summary = new Map<string, Uint8Array>();
  const keys = new KeySlots(KEY_SLOTS_CAP);
  const meta: SourceMeta = { framework: 'unknown', notes: [] };
  // Non-numeric keys, named in the notes: the first MAX_RUN_KEYS of them, as the numeric ones are bounded.
  const ignored = new Set<string>();
  let ignoredPast = false;
  const onIgnored = (k: string): void => {
    if (ignored.size < MAX_RUN_KEYS) ignored.add(k);
    else if (!ignored.has(k)) ignoredPast = true;
  };
  let run: SourceRunInfo | null = null;
  let exitCode: number | null = null;
  let producer: string | null = null;
  let rows = 0;

  // A row's values by key slot: written in place, marked present in this row by its generation, and the row's
  // object built once from them. Only the run's first MAX_RUN_KEYS history keys (first seen first, `order`) are
  // kept, the ones StepAccumulator's RunKeyBound would keep: a later key's values are counted while the row is
  // read and the key is never kept, so memory stays within the bound however many keys the rows bring (it kept
  // every key until the end: 2,000 rows of 500 new keys held 89 MB). wandb-core writes a row's items in Go map
  // order, which differs from row to row; steps leave with their keys in one order (first seen first), so that
  // consecutive steps share a key order and the mapping table's plan cache (mapping.ts) recognises them instead of
  // planning every row again.
  const STEP = keys.ofString('_step');
  const WALL = keys.ofString('_timestamp');
  let vals = new Float64Array(256);
  let seen = new Int32Array(256);
  /** Slot → its place in `order` (first seen first), -1 before it was a history value. */
  let orderAt = new Int32Array(256).fill(-1);
  const order: number[] = [];
  const present: number[] = [];
  let gen = 0;
  // The row's object is a copy of its key list's shape (recordShape.ts: fast-mode objects for what comes after).
  const shapes = new RecordShapes();
  const rowSlots: number[] = [];
  let lastSlots: number[] = [];
  let shape: Record<string, number> = {};

  function grow(slot: number): void {
    let n = vals.length;
    while (n <= slot) n *= 2;
    const v = new Float64Array(n);
    v.set(vals);
    vals = v;
    const g = new Int32Array(n);
    g.set(seen);
    seen = g;
    const o = new Int32Array(n).fill(-1);
    o.set(orderAt);
    orderAt = o;
  }

  /** Values of this row whose keys are past the bound (each key once per row, as RunKeyBound counts them). */
  let pastBound = 0;
  /** This row's keys past the bound that have no slot. */
  const pastNames = new Set<string>();

  function put(slot: number, v: number): void {
    if (slot >= vals.length) grow(slot);
    if (seen[slot] !== gen) {
      seen[slot] = gen;
      if (orderAt[slot] < 0) {
        if (order.length >= MAX_RUN_KEYS) {
          pastBound++;
          return;
        }
        orderAt[slot] = order.length;
        order.push(slot);
      }
      present.push(slot);
    }
    vals[slot] = v;
  }

  /** A value by its key's string (a dict's numbers, a key without a slot): a slot made only for a key kept. */
  function putNamed(key: string, v: number): void {
    const slot = order.length < MAX_RUN_KEYS ? keys.ofString(key) : keys.find(key);
    if (slot >= 0) put(slot, v);
    else if (!pastNames.has(key)) {
      pastNames.add(key);
      pastBound++;
    }
  }

  function history(bytes: Uint8Array, start: number, end: number): void {
    gen++;
    present.length = 0;
    pastBound = 0;
    if (pastNames.size > 0) pastNames.clear();
    let step: number | undefined;
    let wall: number | undefined;
    // The record's text, decoded once when a value is not a plain decimal of ≤ 15 digits (a double's repr has up
    // to 17): one decoder call per row instead of one string built per value. Used while it holds one character
    // per byte (ASCII, as W&B's keys and JSON nearly always are), so a value's byte range is its text's range.
    let text: string | null | undefined;
    const valueOf = (b: Uint8Array, s: number, e: number): unknown => {
      const d = decimalAt(b, s, e);
      if (d !== undefined) return d;
      if (text === undefined) {
        const t = utf8.decode(b.subarray(start, end));
        text = t.length === end - start ? t : null;
      }
      return text !== null ? parseValueJson(text.slice(s - start, e - start)) : valueAt(b, s, e);
    };
    const stepNum = walkItems(
      bytes,
      start,
      end,
      keys,
      (_field, slot, s, e, name) => {
        const v = valueOf(bytes, s, e);
        if (slot === STEP) {
          if (typeof v === 'number' && Number.isSafeInteger(v)) step = v;
        } else if (slot === WALL) {
          if (typeof v === 'number') wall = v;
        } else if (typeof v === 'number') {
          if (slot >= 0) put(slot, v);
          else putNamed(name, v);
        } else {
          const more: Record<string, number> = {};
          addNumbers(slot >= 0 ? keys.keys[slot] : name, v, more, onIgnored);
          for (const k in more) putNamed(k, more[k]);
        }
      },
      2,
    );
    if (step === undefined) step = stepNum;
    if (step === undefined) {
      bump(skipped, SKIP_NO_STEP);
      return;
    }
    rows++;
    if (pastBound > 0) bump(skipped, SKIP_KEYS_PAST_RUN_LIMIT, pastBound);
    // This row's slots in first-seen order.
    const names = keys.keys;
    let n = 0;
    if (4 * present.length >= order.length) {
      for (let i = 0; n < present.length && i < order.length; i++) if (seen[order[i]] === gen) rowSlots[n++] = order[i];
    } else {
      // A row with few of the run's keys: its own slots, sorted.
      present.sort((a, b) => orderAt[a] - orderAt[b]);
      for (const slot of present) rowSlots[n++] = slot;
    }
    rowSlots.length = n;
    let same = n === lastSlots.length;
    for (let i = 0; same && i < n; i++) same = rowSlots[i] === lastSlots[i];
    if (!same) {
      lastSlots = rowSlots.slice();
      shape = shapes.get(lastSlots.map((slot) => names[slot]));
    }
    const out = { ...shape };
    for (let i = 0; i < n; i++) out[names[rowSlots[i]]] = vals[rowSlots[i]];
    acc.add(step, out, '', wall);
  }

  function record(payload: Uint8Array): void {
    let r: WandbRecordMsg;
    try {
      const kind = recordType(payload);
      if (kind === null) return;
      if (kind.field === FIELD_HISTORY) {
        history(payload, kind.start, kind.end);
        return;
      }
      if (kind.field === FIELD_SUMMARY) {
        // W&B writes a summary update with every history row: keep the latest JSON bytes per key (in a buffer
        // of the key's own, reused while the value's length stays) and parse them once, at the end. Field 1
        // holds updates, field 2 removals.
        const removed: string[] = [];
        walkItems(payload, kind.start, kind.end, keys, (field, slot, s, e, name) => {
          const key = slot >= 0 ? keys.keys[slot] : name;
          if (field === 2) {
            removed.push(key);
            return;
          }
          if (key.charCodeAt(0) === 95 /* _ */) return;
          const cur = summary.get(key);
          if (cur !== undefined && cur.length === e - s) for (let i = 0; i < cur.length; i++) cur[i] = payload[s + i];
          else if (cur !== undefined || summary.size < MAX_RUN_KEYS) summary.set(key, payload.slice(s, e));
          // The summary is bounded as the history is: its first MAX_RUN_KEYS keys (a removed one frees its place).
          else bump(skipped, SKIP_SUMMARY_PAST_RUN_LIMIT);
        });
        for (const key of removed) summary.delete(key);
        return;
      }
      if (!RECORD_FIELDS_DECODED.has(kind.field)) return;
      r = decodeWandbRecord(payload);
    } catch {
      bump(skipped, SKIP_UNDECODABLE);
      return;
    }
    if (r.config) applyConfig(config, r.config);
    else if (r.run) {
      const x = r.run;
      applyConfig(config, x.config);
      const start = x.startTime ? int64(x.startTime.seconds) * 1000 + Math.floor((x.startTime.nanos ?? 0) / 1e6) : 0;
      run = {
        tracker: 'wandb',
        id: x.runId ?? '',
        ...(x.displayName ? { name: x.displayName } : {}),
        ...(x.project ? { project: x.project } : {}),
        ...(x.entity ? { entity: x.entity } : {}),
        ...(x.runGroup ? { group: x.runGroup } : {}),
        ...(x.tags && x.tags.length > 0 ? { tags: [...x.tags] } : {}),
        ...(start > 0 ? { startTime: new Date(start).toISOString() } : {}),
        ...(x.resumed ? { resumed: true } : {}),
        state: 'running',
      };
    } else if (r.exit) exitCode = r.exit.exitCode ?? 0;
    else if (r.header?.versionInfo?.producer) producer = r.header.versionInfo.producer;
  }

  const reader = new WandbLogReader(record, skipped, opts.crc32);

  return {
    format: 'wandb',
    skipped,
    meta,
    get runInfo() {
      return run;
    },
    get exited() {
      return exitCode !== null;
    },
    push(chunk: Uint8Array): void {
      reader.push(chunk);
      if (Object.keys(config).length > 0) meta.config = config;
      if (run) meta.run = run;
    },
    flushPending: () => acc.flushPending(),
    end(): void {
      reader.end();
      acc.flush();
      if (Object.keys(config).length > 0) meta.config = config;
      const final: Record<string, number> = {};
      for (const [k, json] of summary) addNumbers(k, parseValueJson(utf8At(json, 0, json.length)), final, () => undefined);
      if (Object.keys(final).length > 0) meta.finalMetrics = final;
      if (run) {
        const r = run as SourceRunInfo;
        const state = exitCode === null ? (opts.following ? 'running' : 'crashed') : exitCode === 0 ? 'finished' : 'failed';
        run = { ...r, state, ...(exitCode !== null ? { exitCode } : {}) };
        meta.run = run;
      }
      if (producer) meta.notes.push(`written by W&B ${producer.split('+')[0]}`);
      if (exitCode === null && !opts.following)
        meta.notes.push('the W&B file ends without an exit record: the run crashed or was killed (or its writer is still running)');
      else if (exitCode !== null && exitCode !== 0) meta.notes.push(`the W&B run exited with code ${exitCode}`);
      if (rows === 0) meta.notes.push('no history rows');
      if (ignored.size > 0) {
        const keys = [...ignored];
        meta.notes.push(
          `${ignoredPast ? `more than ${keys.length}` : keys.length} non-numeric history key(s) ignored (strings, lists, booleans, media): ${keys.slice(0, 5).join(', ')}${keys.length > 5 ? ', …' : ''}`,
        );
      }
    },
  };
}
