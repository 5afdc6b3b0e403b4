/**
 * The contract of the external-log parsers: bytes or lines in, source steps out — pure, no files.
 *
 * Reading files, walking folders, tailing and writing the run store live in src/main/imports; this layer only
 * turns a format into `SourceStep`s that carry the source's own metric keys. Mapping those keys onto the lab's
 * metric catalog is a separate pure step (mapping.ts), so a parser never needs to know the catalog.
 */

/** Formats the importer detects from content (a reproducibility bundle is a zip handled by main, not here). */
export type LogFormat =
  | 'verl-console'
  | 'verl-jsonl'
  | 'jsonl'
  | 'trl-console'
  | 'trainer-state'
  | 'tensorboard'
  | 'wandb-csv'
  | 'csv'
  | 'deepspeed-chat'
  | 'wandb'
  | TrackerStoreFormat;

/**
 * Trackers' stores that are read as stores, not streamed as one file (main's src/main/imports reads them with
 * SQLite or by walking the folder): an MLflow file store (`mlruns/`), an MLflow SQLite store, a Trackio database, an
 * older W&B client's run folder (`wandb-history.jsonl`, `wandb-summary.json`, `config.yaml`; no `.wandb` file).
 */
export type TrackerStoreFormat = 'mlflow-file' | 'mlflow-sqlite' | 'trackio' | 'wandb-files';
export const TRACKER_STORE_FORMATS: readonly TrackerStoreFormat[] = ['mlflow-file', 'mlflow-sqlite', 'trackio', 'wandb-files'];

/** The formats a single file streams through a parser of this layer. */
export const LOG_FORMATS: readonly LogFormat[] = [
  'verl-console',
  'verl-jsonl',
  'jsonl',
  'trl-console',
  'trainer-state',
  'tensorboard',
  'wandb',
  'wandb-csv',
  'csv',
  'deepspeed-chat',
];

/** The training framework a log came from, as far as its keys and shape tell. */
export type Framework = 'verl' | 'verl-agent' | 'arlarena' | 'openrlhf' | 'trl' | 'ms-swift' | 'tinker' | 'deepspeed-chat' | 'unknown';

/** The tracker run a source step stream came from (W&B, MLflow, Trackio): who it was there. */
export interface SourceRunInfo {
  readonly tracker: 'wandb' | 'mlflow' | 'trackio';
  /** The tracker's run id (W&B's 8-character id, MLflow's run UUID, Trackio's run id or name). */
  readonly id: string;
  readonly name?: string;
  /** W&B project, MLflow experiment, Trackio project. */
  readonly project?: string;
  readonly entity?: string;
  readonly group?: string;
  readonly tags?: readonly string[];
  /** ISO 8601. */
  readonly startTime?: string;
  readonly resumed?: boolean;
  /** How the tracker saw the run end: finished, failed (non-zero exit / FAILED), crashed (no exit record), killed, or still running. */
  readonly state?: 'finished' | 'failed' | 'crashed' | 'killed' | 'running';
  readonly exitCode?: number;
}

/**
 * One step of one source run with the source's own keys. Values are numbers; a source's NaN / ±Infinity (and
 * JSON `null` where the writer encodes NaN that way) are kept as NaN / ±Infinity, never dropped, because a
 * non-finite loss is exactly what the collapse detector must see.
 */
export interface SourceStep {
  /** The run inside a multi-run source (a W&B CSV's `<run> - ` prefix); '' for a single-run source. */
  readonly run: string;
  readonly step: number;
  readonly values: Readonly<Record<string, number>>;
  /** Seconds since the epoch when the source records it (TensorBoard wall_time), else undefined. */
  readonly wallTime?: number;
}

/** What a parser learnt about the run beyond its steps. */
export interface SourceMeta {
  framework: Framework;
  /** Config the log reveals (a verl console log's echoed Hydra config, TRL args), as plain JSON. */
  config?: Record<string, unknown>;
  /** Short human notes (e.g. "resumed at step 101", "final validation line read"). */
  notes: string[];
  /**
   * End-of-run summary metrics the log prints outside any step (verl's "Final validation metrics: {…}", the
   * HF Trainer's `train_runtime` / `train_loss` dict), with the source's own keys; absent when none was read.
   */
  finalMetrics?: Record<string, number>;
  /** The tracker run behind the source (W&B run record, MLflow run, Trackio run), when the source says. */
  run?: SourceRunInfo;
}

/**
 * Every parser is incremental so a 1 GB log streams with bounded memory: steps go to `onStep` as soon as they
 * are complete (a step is complete when a later step begins or `end()` is called), in the order the source
 * wrote them. Lines or records that do not parse are skipped and counted by reason in `skipped`.
 */
export interface ParserBase {
  readonly format: LogFormat;
  /** Flush what is pending (the last step). Call once, after the last push. */
  end(): void;
  /**
   * Live follow, when the source has been quiet: send the step still waiting for more lines now, so the newest
   * step shows without waiting for the next one. Parsers that hold nothing back (CSV) or read on end() only
   * (trainer_state.json) leave it out. Text parsers count later lines for a step sent this way (steps.ts
   * SKIP_LATE_VALUES) instead of sending the step twice; TensorBoard's parser may send it again (its reorder
   * policy) and main drops the repeat.
   */
  flushPending?(): void;
  /** Skipped inputs by reason, e.g. `{ "unparsable line": 3, "bad crc": 1 }`. */
  readonly skipped: Readonly<Record<string, number>>;
  readonly meta: SourceMeta;
}

/** Text formats: fed one line at a time, without its line terminator (main splits on \n and strips \r). */
export interface LineParser extends ParserBase {
  push(line: string): void;
}

/** Binary formats (TensorBoard event files): fed arbitrary chunks of one file, in order. */
export interface ByteParser extends ParserBase {
  push(chunk: Uint8Array): void;
}

export type StepSink = (s: SourceStep) => void;
