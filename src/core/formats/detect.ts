/**
 * Format detection from content — the first ~64 KB of a file, never its name (real files are renamed:
 * README 2a's event file lacks the usual suffix, the W&B exports were renamed). Checked from the most
 * certain signature to the least:
 *
 * 1. a zip (`PK\x03\x04`) is a reproducibility bundle: null here, main's bundle importer owns zips;
 * 2. a W&B transaction log (`:W&B` + magic 0xBEE1, wandbLog.ts);
 * 2b. a TensorBoard event file: a TFRecord — 8-byte little-endian length, then the masked CRC32C of those
 *    8 bytes (crc32c.ts), then an Event proto; the length's CRC is a 32-bit check no text passes by chance;
 * 3. JSON: verl's file logger (`{"step":…,"data":{…}}`), a flat JSONL stream, or a trainer_state.json;
 * 4. console logs: a verl `step:N - key:value` line, DeepSpeed-Chat's `epoch: E|step: N|…`, a TRL / HF
 *    Trainer printed dict; then CSV headers (W&B's `"<run> - <metric>"` columns, or a step column);
 * 5. a verl log whose head is still all start-up (config echo, Ray worker prefixes) and has no step yet.
 */
import { maskedCrc32c } from './crc32c';
import { isWandbLog } from './wandbLog';
import { parsePyLiteral } from './pyLiteral';
import { rayContentStart } from './verlConsole';
import { FLAT_STEP_KEYS, stepFrom } from './jsonl';
import { csvHeader, CSV_STEP_COLUMNS, isWandbHeader } from './csv';
import type { LogFormat } from './types';

export const HEAD_BYTES = 64 * 1024;

/** One line per format, for the "no known format" refusal and `--format` help. */
export const FORMAT_DESCRIPTIONS: Readonly<Record<LogFormat, string>> = {
  'verl-console': 'verl console log: "step:N - key:value - …" lines (Ray prefixes and ANSI colours allowed)',
  'verl-jsonl': 'verl file-logger JSONL: one {"step": N, "data": {…}} object per line',
  jsonl: 'flat JSONL metrics: one object per line with a step field (step, global_step, _step, …) and numbers',
  'trl-console': "TRL / Hugging Face Trainer console log: printed dicts such as {'loss': …, 'epoch': …}",
  'trainer-state': 'Hugging Face trainer_state.json: a JSON object with a "log_history" list',
  tensorboard: 'TensorBoard event file: TFRecord framing (length + masked CRC32C) of Event protos',
  wandb: 'W&B run transaction log (run-<id>.wandb): the ":W&B" header, then LevelDB-log records of W&B protobuf Records',
  'mlflow-file': 'MLflow file store: a folder (mlruns/) of <experiment>/<run>/meta.yaml with metrics/, params/, tags/',
  'mlflow-sqlite': 'MLflow SQLite store (mlflow.db): a SQLite database with runs, metrics, params, tags, experiments tables',
  trackio: 'Trackio database (<project>.db): a SQLite database with a metrics table of JSON payloads',
  'wandb-files':
    'run folder of a W&B client before 0.10 (no .wandb file): wandb-history.jsonl rows with _step and _runtime / _timestamp, beside a config.yaml that starts "wandb_version: 1"',
  'wandb-csv': 'W&B "Export CSV": a "Step" column and "<run> - <metric>" columns',
  csv: 'CSV with a header row holding a step column (step, Step, global_step, _step, iteration)',
  'deepspeed-chat': 'DeepSpeed-Chat step-3 RLHF log: "epoch: E|step: N|ppo_ep: …|act_loss: …" lines',
};

/** Every format this layer parses, one per line (what "formats tried" lists). */
export function describeFormats(): string {
  return (Object.keys(FORMAT_DESCRIPTIONS) as LogFormat[]).map((f) => `${f}: ${FORMAT_DESCRIPTIONS[f]}`).join('\n');
}

export function isZip(head: Uint8Array): boolean {
  return head.length >= 4 && head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04;
}

/** A TFRecord header at offset 0 whose length CRC checks out. */
function isTfRecord(head: Uint8Array): boolean {
  if (head.length < 12) return false;
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const lenLo = view.getUint32(0, true);
  const lenHi = view.getUint32(4, true);
  if (lenHi !== 0 || lenLo === 0) return false;
  return maskedCrc32c(head.subarray(0, 8)) === view.getUint32(8, true);
}

const VERL_STEP = /^step:\d+ - [^:]+:/;
const DEEPSPEED_STEP = /^epoch: \d+\|step: \d+\|/;

/**
 * What the head says, or null when it is in no known format. The name (`opts.name`, or the file name passed
 * directly) never decides anything: it only appears in the explanation.
 */
export function detectFormat(head: Uint8Array, opts: { name?: string } | string = {}): { format: LogFormat; why: string } | null {
  const name = typeof opts === 'string' ? opts : opts.name;
  const named = name ? ` (${name})` : '';
  if (isZip(head)) return null;
  if (isWandbLog(head)) return { format: 'wandb', why: `the ":W&B" transaction-log header (magic 0xBEE1)${named}` };
  if (isTfRecord(head))
    return { format: 'tensorboard', why: `TFRecord framing with a valid masked CRC32C of the first record's length${named}` };
  const bytes = head.length > HEAD_BYTES ? head.subarray(0, HEAD_BYTES) : head;
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes).replace(/^\ufeff/, '');
  // Other binary data: NUL bytes near the start (real verl logs carry a couple deep inside, README 1b).
  if (text.slice(0, 512).includes('\u0000')) return null;
  const lines = text.split('\n');
  // The last line of a 64 KB head is usually cut; use it only when the head is the whole file.
  if (head.length >= HEAD_BYTES && lines.length > 1) lines.pop();

  const json = detectJson(text, lines);
  if (json) return { ...json, why: json.why + named };

  let rayLines = 0;
  let verlConfig = false;
  let deepspeedBanner = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].endsWith('\r') ? lines[i].slice(0, -1) : lines[i];
    const cs = rayContentStart(line);
    const content = line.slice(cs).trimStart();
    if (VERL_STEP.test(content))
      return { format: 'verl-console', why: `line ${i + 1} is a verl "step:N - key:value" metrics line${named}` };
    if (DEEPSPEED_STEP.test(content))
      return { format: 'deepspeed-chat', why: `line ${i + 1} is a DeepSpeed-Chat "epoch: E|step: N|…" line${named}` };
    if (isTrlDict(content)) return { format: 'trl-console', why: `line ${i + 1} is a printed TRL / HF Trainer log dict${named}` };
    if (cs > 0 && / pid=\d+/.test(line.slice(0, cs))) rayLines++;
    if (content.startsWith("{'actor_rollout_ref'") || content.startsWith("{'data': {")) verlConfig = true;
    // DeepSpeed-Chat step 3 announces its generation batches before the first step line.
    if (content.startsWith('Beginning of Epoch ') && content.includes('Total Generation Batches')) deepspeedBanner = true;
  }
  const header = lines.find((l) => l.trim() !== '');
  if (header !== undefined && header.includes(',')) {
    const cols = csvHeader(header.endsWith('\r') ? header.slice(0, -1) : header);
    if (cols && isWandbHeader(cols))
      return { format: 'wandb-csv', why: `CSV header with a "Step" column and "<run> - <metric>" columns${named}` };
    const step = cols?.find((c) => CSV_STEP_COLUMNS.includes(c.trim()));
    if (cols && step !== undefined) return { format: 'csv', why: `CSV header with the step column "${step}"${named}` };
  }
  if (deepspeedBanner)
    return {
      format: 'deepspeed-chat',
      why: `the head has DeepSpeed-Chat's "Beginning of Epoch …, Total Generation Batches" banner (no step line yet)${named}`,
    };
  if (verlConfig) return { format: 'verl-console', why: `the head echoes a verl config dict (no step line yet)${named}` };
  if (rayLines >= 3) return { format: 'verl-console', why: `the head is Ray worker output (no step line yet)${named}` };
  return null;
}

function detectJson(text: string, lines: string[]): { format: LogFormat; why: string } | null {
  const first = text.trimStart();
  if (!first.startsWith('{')) return null;
  // The first few records decide: a stream may open with a record that carries no step (a config header).
  const records: Record<string, unknown>[] = [];
  for (const line of lines) {
    if (line.trim() === '') continue;
    if (records.length >= 8) break;
    let o: unknown;
    try {
      o = JSON.parse(line);
    } catch {
      try {
        o = JSON.parse(line.replace(/\bNaN\b|-?\bInfinity\b/g, 'null'));
      } catch {
        o = undefined;
      }
    }
    if (o === null || typeof o !== 'object' || Array.isArray(o)) break;
    records.push(o as Record<string, unknown>);
  }
  for (let i = 0; i < records.length; i++) {
    const r = records[i];
    const which = i === 0 ? 'the first record' : `record ${i + 1}`;
    if (stepFrom(r.step) !== undefined && r.data !== null && typeof r.data === 'object' && !Array.isArray(r.data)) {
      return { format: 'verl-jsonl', why: `${which} is a {"step": N, "data": {…}} JSON object (verl file logger)` };
    }
    const key = FLAT_STEP_KEYS.find((k) => stepFrom(r[k]) !== undefined);
    if (key !== undefined) return { format: 'jsonl', why: `${which} is a JSON object with the step field "${key}"` };
    if ('log_history' in r) return { format: 'trainer-state', why: 'a one-line JSON object with "log_history"' };
  }
  if (records.length > 0) return null;
  // A pretty-printed whole-file JSON: the HF Trainer's trainer_state.json.
  if (/"log_history"\s*:\s*\[/.test(text))
    return { format: 'trainer-state', why: 'a JSON object with a "log_history" list (HF trainer_state.json)' };
  return null;
}

/** `{'loss': 0.1, 'grad_norm': …, 'epoch': 0.31}` and friends, possibly after a tqdm bar on the same line. */
function isTrlDict(content: string): boolean {
  const at = content.indexOf("{'");
  if (at < 0 || !content.endsWith('}')) return false;
  let v: unknown;
  try {
    v = parsePyLiteral(content.slice(at));
  } catch {
    return false;
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  return (
    typeof o.epoch === 'number' ||
    typeof o.train_runtime === 'number' ||
    (typeof o.loss === 'number' && typeof o.learning_rate === 'number')
  );
}
