/**
 * TRL / Hugging Face Trainer logs, two shapes:
 * - 'trl-console': the dicts the Trainer prints at every logging step,
 *   `{'loss': 0.0042, 'grad_norm': 0.108, 'learning_rate': 9.1e-06, 'reward': 0.018, …, 'epoch': 0.09}`
 *   (Python reprs, sometimes glued to a tqdm bar on the same line). They carry no step number. Choice: the
 *   step is the log line's ordinal (1, 2, 3, …) unless the dict has `step` / `global_step`; multiplying by the
 *   run's `logging_steps` gives trainer steps, but the console does not print it, and deriving steps from
 *   `epoch` needs steps-per-epoch that the log does not state either — an ordinal is honest and monotone.
 *   An `eval_*` dict joins the training step before it; the closing `train_runtime` dict is a summary
 *   (meta.finalMetrics), not a step.
 * - 'trainer-state': `trainer_state.json` (a whole-file JSON, written at each checkpoint): `log_history`
 *   entries with their own `step`. Its lines are collected and parsed on end(); the file is small (a few KB
 *   per thousand logging steps), so holding it is fine. `parseTrainerState` does the same for a whole text.
 */
import { parsePyLiteral, type PyValue } from './pyLiteral';
import { bump, parseMetricNumber, StepAccumulator } from './steps';
import type { LineParser, SourceMeta, StepSink } from './types';

function numericEntries(o: Record<string, unknown>, nonNumeric: Set<string>, skip: readonly string[] = []): Record<string, number> {
  const out: Record<string, number> = {};
  for (const key in o) {
    if (skip.includes(key)) continue;
    const v = o[key];
    if (typeof v === 'number') out[key] = v;
    else if (typeof v === 'string' && /^(?:tensor|np\.|numpy\.)/.test(v)) {
      const n = parseMetricNumber(v);
      if (n === undefined) nonNumeric.add(key);
      else out[key] = n;
    } else if (v === null) out[key] = Number.NaN;
    else nonNumeric.add(key);
  }
  return out;
}

/** The Trainer's end-of-training summary (train_runtime, train_samples_per_second, total_flos, train_loss). */
function isSummary(o: Record<string, unknown>): boolean {
  return 'train_runtime' in o || ('train_loss' in o && 'total_flos' in o);
}

function isEval(o: Record<string, unknown>): boolean {
  const keys = Object.keys(o).filter((k) => k !== 'epoch' && k !== 'step');
  return keys.length > 0 && keys.every((k) => k.startsWith('eval_'));
}

function nonNumericNote(meta: SourceMeta, keys: Set<string>): void {
  if (keys.size === 0) return;
  const list = [...keys];
  meta.notes.push(`${list.length} non-numeric field(s) ignored: ${list.slice(0, 5).join(', ')}${list.length > 5 ? ', …' : ''}`);
}

export function createTrlConsoleParser(onStep: StepSink): LineParser {
  const skipped: Record<string, number> = {};
  const acc = new StepAccumulator(onStep, skipped);
  const meta: SourceMeta = { framework: 'trl', notes: [] };
  const nonNumeric = new Set<string>();
  let ordinal = 0;
  let usedOrdinal = false;

  return {
    format: 'trl-console',
    skipped,
    meta,
    push(raw: string): void {
      // tqdm rewrites its bar with \r; the dict is what follows the last one.
      const line = raw.slice(raw.lastIndexOf('\r') + 1).trimEnd();
      const at = line.indexOf("{'");
      if (at < 0 || !line.endsWith('}')) return;
      let v: PyValue;
      try {
        v = parsePyLiteral(line.slice(at));
      } catch {
        bump(skipped, 'unparsable log dict');
        return;
      }
      if (v === null || typeof v !== 'object' || Array.isArray(v)) {
        bump(skipped, 'unparsable log dict');
        return;
      }
      const o = v as Record<string, unknown>;
      if (isSummary(o)) {
        meta.finalMetrics = { ...meta.finalMetrics, ...numericEntries(o, nonNumeric) };
        meta.notes.push('end-of-training summary dict read (train_runtime, train_loss, …)');
        return;
      }
      const explicit = typeof o.step === 'number' ? o.step : typeof o.global_step === 'number' ? o.global_step : undefined;
      const values = numericEntries(o, nonNumeric, ['step', 'global_step']);
      if (Object.keys(values).length === 0) {
        bump(skipped, 'log dict without numbers');
        return;
      }
      if (isEval(o)) {
        const pending = acc.pendingStep;
        acc.add(explicit ?? (Number.isNaN(pending) ? ordinal : pending), values);
        return;
      }
      let step: number;
      if (explicit !== undefined) step = explicit;
      else {
        step = ++ordinal;
        usedOrdinal = true;
      }
      acc.add(step, values);
    },
    flushPending: () => acc.flushPending(),
    end(): void {
      acc.flush();
      if (usedOrdinal)
        meta.notes.push(
          "TRL console dicts carry no step: steps are log-line numbers (1, 2, …); multiply by the run's logging_steps for trainer steps",
        );
      nonNumericNote(meta, nonNumeric);
    },
  };
}

/** What parseTrainerState learnt, beyond the steps it sent. */
export interface TrainerStateResult {
  readonly meta: SourceMeta;
  readonly skipped: Record<string, number>;
}

/** Parses a whole trainer_state.json; steps go to `onStep` in log_history order (eval entries merged). */
export function parseTrainerState(text: string, onStep: StepSink): TrainerStateResult {
  const skipped: Record<string, number> = {};
  const meta: SourceMeta = { framework: 'trl', notes: [] };
  // With `skipped`, the values its per-run key bound leaves out are counted too.
  const acc = new StepAccumulator(onStep, skipped);
  const nonNumeric = new Set<string>();
  let doc: unknown;
  try {
    // Python's json writes NaN/Infinity bare; trainer_state.json holds them when a loss diverged.
    doc = JSON.parse(text.replace(/"(?:[^"\\]|\\.)*"|-?Infinity|NaN/g, (m) => (m.charCodeAt(0) === 34 ? m : 'null')));
  } catch (e) {
    bump(skipped, 'unparsable trainer_state.json');
    meta.notes.push(`trainer_state.json is not valid JSON (${e instanceof Error ? e.message : String(e)})`);
    return { meta, skipped };
  }
  const root = doc as Record<string, unknown> | null;
  const history = root && typeof root === 'object' ? root.log_history : undefined;
  if (!Array.isArray(history)) {
    bump(skipped, 'no log_history list');
    meta.notes.push('trainer_state.json has no "log_history" list');
    return { meta, skipped };
  }
  const config: Record<string, unknown> = {};
  for (const key in root!) {
    const v = root![key];
    if (key !== 'log_history' && (v === null || typeof v !== 'object')) config[key] = v;
  }
  meta.config = config;
  for (const entry of history) {
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
      bump(skipped, 'log_history entry that is not an object');
      continue;
    }
    const o = entry as Record<string, unknown>;
    if (isSummary(o)) {
      meta.finalMetrics = { ...meta.finalMetrics, ...numericEntries(o, nonNumeric, ['step']) };
      continue;
    }
    if (typeof o.step !== 'number' || !Number.isInteger(o.step) || o.step < 0) {
      bump(skipped, 'log_history entry without an integer step');
      continue;
    }
    acc.add(o.step, numericEntries(o, nonNumeric, ['step']));
  }
  acc.flush();
  if (meta.finalMetrics) meta.notes.push('end-of-training summary entry read (train_runtime, train_loss, …)');
  nonNumericNote(meta, nonNumeric);
  return { meta, skipped };
}

/**
 * Largest trainer_state.json read (characters). Real ones hold a few KB per thousand logging steps; past this
 * the file is not a trainer state worth holding in memory whole (parsed whole, a document costs many times its
 * size: a 240 MB one took 6 GB and aborted).
 */
export const MAX_TRAINER_STATE_CHARS = 16 << 20;

/** The 'trainer-state' LineParser: collects the file's lines and parses them on end(). */
export function createTrainerStateParser(onStep: StepSink, opts: { maxChars?: number } = {}): LineParser {
  const maxChars = opts.maxChars ?? MAX_TRAINER_STATE_CHARS;
  const lines: string[] = [];
  let chars = 0;
  let tooBig = false;
  const skipped: Record<string, number> = {};
  const meta: SourceMeta = { framework: 'trl', notes: [] };
  return {
    format: 'trainer-state',
    skipped,
    meta,
    push(line: string): void {
      if (tooBig) return;
      chars += line.length + 1;
      if (chars > maxChars) {
        tooBig = true;
        lines.length = 0;
        return;
      }
      lines.push(line);
    },
    end(): void {
      if (tooBig) {
        bump(skipped, 'trainer_state.json too large to hold');
        meta.notes.push(`trainer_state.json is larger than ${maxChars} characters: not read (export the log history as JSONL instead)`);
        return;
      }
      const r = parseTrainerState(lines.join('\n'), onStep);
      lines.length = 0;
      Object.assign(skipped, r.skipped);
      meta.notes.push(...r.meta.notes);
      if (r.meta.config) meta.config = r.meta.config;
      if (r.meta.finalMetrics) meta.finalMetrics = r.meta.finalMetrics;
    },
  };
}
