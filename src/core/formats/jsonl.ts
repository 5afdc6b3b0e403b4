/**
 * JSON-lines metric streams, one JSON object per line:
 * - 'verl-jsonl': verl's file logger, `{"step": N, "data": {"actor/pg_loss": …, …}}` (README §4: a compact,
 *   orjson-like writer that serialises NaN as `null`);
 * - 'jsonl': flat records, a step field plus metrics, as Tinker's `metrics.jsonl` and many scripts write; also
 *   ms-swift's `logging.jsonl`, whose step is only in `"global_step/max_steps": "300/1296"` (framework
 *   'ms-swift'; its progress fields `percentage`, `elapsed_time`, `remaining_time`, `memory(GiB)`,
 *   `train_speed(iter/s)` and, since ms-swift 4, `train_speed(s/it)` are dropped). Its last two records are
 *   summaries, not steps (as ms-swift 4.6.0's `swift sft` and `swift rlhf` write them, tested against that
 *   writer in src/main/imports/swift.integration.test.ts): the Trainer's end-of-training log (`train_runtime`,
 *   `train_loss`, …, with the last step's `global_step/max_steps`) goes to meta.finalMetrics, and the run
 *   summary ms-swift appends after training (`global_step`, `log_history`, checkpoints, `memory`; no
 *   `global_step/max_steps`) is noted and left out.
 *
 * Tolerated beyond strict JSON: Python's `json.dumps` default of bare `NaN` / `Infinity` / `-Infinity`.
 * `null` is NaN (verl's writer). String values are not metrics: they are ignored and listed in the notes,
 * the record still counts. Nested objects flatten with '/'. A line that is not a JSON object (a truncated
 * last line, a stray print) is skipped and counted.
 */
import { bump, flattenNumeric, RecordLimitError, StepAccumulator } from './steps';
import type { LineParser, LogFormat, SourceMeta, StepSink } from './types';

/**
 * Step fields of flat records, first match wins: `step` (Tinker, most scripts), `global_step` (HF-style),
 * `_step` (a W&B history dump), `train/global_step`, `iteration` / `iter`, `progress/batch` (Tinker's own
 * batch counter when a record has no `step`).
 */
export const FLAT_STEP_KEYS = [
  'step',
  'global_step',
  '_step',
  'train/global_step',
  'trainer/global_step',
  'global_step/max_steps',
  'iteration',
  'iter',
  'progress/batch',
] as const;

/**
 * ms-swift's logging.jsonl: its step field, and the progress fields it adds to every record that are not metrics
 * (swift/trainers/patcher.py's add_train_message; ms-swift 3 wrote `percentage` and `train_speed(iter/s)`,
 * ms-swift 4 writes `train_speed(s/it)` and no percentage).
 */
export const SWIFT_STEP_KEY = 'global_step/max_steps';
export const SWIFT_PROGRESS_FIELDS: ReadonlySet<string> = new Set([
  'percentage',
  'elapsed_time',
  'remaining_time',
  'memory(GiB)',
  'train_speed(iter/s)',
  'train_speed(s/it)',
]);

/** The Hugging Face Trainer's end-of-training log (as trl.ts reads it): a summary, not a step. */
function isTrainEnd(o: Record<string, unknown>): boolean {
  return 'train_runtime' in o || ('train_loss' in o && 'total_flos' in o);
}

/**
 * The run summary ms-swift appends to logging.jsonl after training (swift/pipelines/train/sft.py's
 * _save_trainer_state: `last_model_checkpoint`, `global_step`, the Trainer's whole `log_history`, `memory`): every
 * step in it was already logged as its own record.
 */
function isSwiftRunSummary(o: Record<string, unknown>): boolean {
  return !(SWIFT_STEP_KEY in o) && 'last_model_checkpoint' in o && Array.isArray(o.log_history);
}

const NAN_MARK = '\u0000NaN';
const INF_MARK = '\u0000+Inf';
const NINF_MARK = '\u0000-Inf';

/**
 * Python's non-standard tokens outside strings become marker strings JSON.parse accepts; strings are matched
 * first so a NaN inside a string stays text. Only run when the fast JSON.parse failed.
 */
function pythonJson(line: string): unknown {
  const fixed = line.replace(/"(?:[^"\\]|\\.)*"|-Infinity|Infinity|NaN/g, (m) => {
    if (m.charCodeAt(0) === 34) return m;
    // JSON.stringify escapes the marker's NUL (a raw control character is not allowed inside JSON strings).
    return JSON.stringify(m === 'NaN' ? NAN_MARK : m === 'Infinity' ? INF_MARK : NINF_MARK);
  });
  return JSON.parse(fixed);
}

function markValue(s: string): number | undefined {
  if (s.charCodeAt(0) !== 0) return undefined;
  return s === NAN_MARK ? Number.NaN : s === INF_MARK ? Number.POSITIVE_INFINITY : s === NINF_MARK ? Number.NEGATIVE_INFINITY : undefined;
}

/** A step value: an integer number, or a `"300/1296"` (global_step/max_steps) or `"300"` string. */
export function stepFrom(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isInteger(v) && v >= 0 ? v : undefined;
  if (typeof v === 'string') {
    const m = /^\s*(\d+)\s*(?:\/\s*\d+\s*)?$/.exec(v);
    if (m) return Number(m[1]);
  }
  return undefined;
}

function createJsonParser(format: LogFormat, onStep: StepSink): LineParser {
  const skipped: Record<string, number> = {};
  const acc = new StepAccumulator(onStep, skipped);
  const meta: SourceMeta = { framework: format === 'verl-jsonl' ? 'verl' : 'unknown', notes: [] };
  const ignored = new Map<string, number>();
  let stepKey: string | null = null;
  let swiftRunSummary = false;
  // Only the first few names are ever shown: a file of ever-new string fields does not grow this without bound.
  const onIgnored = (key: string): void => {
    if (ignored.size < 1000 || ignored.has(key)) ignored.set(key, (ignored.get(key) ?? 0) + 1);
  };

  function record(o: Record<string, unknown>): void {
    let step: number | undefined;
    let data: Record<string, unknown>;
    let skip: string | undefined;
    if (format === 'verl-jsonl') {
      step = stepFrom(o.step);
      if (o.data === null || typeof o.data !== 'object' || Array.isArray(o.data)) {
        bump(skipped, 'record without a "data" object');
        return;
      }
      data = o.data as Record<string, unknown>;
    } else {
      if (isSwiftRunSummary(o)) {
        swiftRunSummary = true;
        return;
      }
      let key: string | null = null;
      for (const k of FLAT_STEP_KEYS)
        if (k in o && stepFrom(o[k]) !== undefined) {
          key = k;
          break;
        }
      if (key === null) {
        bump(skipped, `record without a step field (${FLAT_STEP_KEYS.join(', ')})`);
        return;
      }
      if (stepKey === null) {
        stepKey = key;
        if (key === SWIFT_STEP_KEY) meta.framework = 'ms-swift';
      }
      step = stepFrom(o[key]);
      data = o;
      skip = key;
      if (key === SWIFT_STEP_KEY) {
        // ms-swift's progress fields (time strings, memory, iterations per second) are not training metrics.
        const rest: Record<string, unknown> = {};
        for (const k in o) if (!SWIFT_PROGRESS_FIELDS.has(k)) rest[k] = o[k];
        data = rest;
        if (isTrainEnd(o)) {
          const final: Record<string, number> = {};
          try {
            flattenNumeric(data, final, onIgnored, markValue, '', skip);
          } catch (e) {
            if (!(e instanceof RecordLimitError)) throw e;
            bump(skipped, e.reason);
            return;
          }
          meta.finalMetrics = { ...meta.finalMetrics, ...final };
          return;
        }
      }
    }
    if (step === undefined) {
      bump(skipped, 'record whose step is not a non-negative integer');
      return;
    }
    const values: Record<string, number> = {};
    try {
      flattenNumeric(data, values, onIgnored, markValue, '', skip);
    } catch (e) {
      if (!(e instanceof RecordLimitError)) throw e;
      bump(skipped, e.reason);
      return;
    }
    acc.add(step, values);
  }

  return {
    format,
    skipped,
    meta,
    push(line: string): void {
      let i = 0;
      while (i < line.length && (line.charCodeAt(i) === 32 || line.charCodeAt(i) === 9)) i++;
      if (i === line.length) return; // blank lines are not records
      if (line.charCodeAt(i) !== 123 /* { */) {
        bump(skipped, 'line that is not a JSON object');
        return;
      }
      let o: unknown;
      try {
        o = JSON.parse(line);
      } catch {
        try {
          o = pythonJson(line);
        } catch {
          bump(skipped, 'unparsable JSON line');
          return;
        }
      }
      if (o === null || typeof o !== 'object' || Array.isArray(o)) {
        bump(skipped, 'line that is not a JSON object');
        return;
      }
      record(o as Record<string, unknown>);
    },
    flushPending: () => acc.flushPending(),
    end(): void {
      acc.flush();
      if (stepKey !== null && stepKey !== 'step') meta.notes.push(`step taken from the "${stepKey}" field`);
      if (meta.finalMetrics) {
        const e = Object.entries(meta.finalMetrics);
        meta.notes.push(
          `end-of-training summary (not a step): ${e
            .slice(0, 8)
            .map(([k, v]) => `${k}=${v}`)
            .join(', ')}${e.length > 8 ? `, … (${e.length} values)` : ''}`,
        );
      }
      if (swiftRunSummary)
        meta.notes.push("ms-swift's run summary after training (global_step, log_history) read; its steps are the records above");
      if (ignored.size > 0) {
        const keys = [...ignored.keys()];
        meta.notes.push(
          `${keys.length} non-numeric field(s) ignored (strings, lists or booleans): ${keys.slice(0, 5).join(', ')}${keys.length > 5 ? ', …' : ''}`,
        );
      }
    },
  };
}

export function createVerlJsonlParser(onStep: StepSink): LineParser {
  return createJsonParser('verl-jsonl', onStep);
}

export function createJsonlParser(onStep: StepSink): LineParser {
  return createJsonParser('jsonl', onStep);
}
