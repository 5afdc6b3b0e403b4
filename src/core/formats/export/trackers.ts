/**
 * A lab run handed back to the trackers researchers already use (pure: bytes and texts out, main writes them).
 *
 * - W&B: the bytes of an offline run's transaction log, `run-<id>.wandb` — what `wandb.init(mode="offline")`
 *   leaves for `wandb sync` (core/formats/wandbLog.ts frames it; wandbProto.ts encodes the Records): a header
 *   record, the run record (id, project, name, start time, config), one history record per step (items keyed by
 *   `nested_key` as wandb-core writes them, `_step` and `_timestamp` items; NaN / ±inf as W&B's `NaN` /
 *   `Infinity` / `-Infinity`), a summary record (the last value of each key), an exit record (exit code 0 for a
 *   completed run, 1 otherwise) and the final record.
 * - MLflow: the files of one run in MLflow's file store (`<experiment id>/<run id>/meta.yaml`, `metrics/<key>`
 *   with `timestamp value step` lines, `params/<key>`, `tags/<key>`), which MLflow's client reads with
 *   `MLFLOW_ALLOW_FILE_STORE=true` and a `file://` tracking URI. Values are written in Python's float spelling
 *   (`nan`, `inf`, `-inf`, shortest round-trip digits) so MLflow reads back the same doubles. MLflow refuses `@`
 *   in names, so `@` is written `_at_` as verl's MLflow logger does (the importer turns it back).
 */
import type { MetricRecord } from '../../../shared/metrics';
import { encodeWandbRecord, type WandbItem } from '../wandbProto';
import { WandbLogWriter } from '../wandbLog';
import { CHUNK_BYTES } from './keys';

export interface TrackerExportRun {
  /** The lab run id. */
  readonly id: string;
  readonly name: string;
  readonly tags: readonly string[];
  /** ISO 8601 start. */
  readonly startedAt: string;
  readonly finishedAt?: string;
  readonly completed: boolean;
  readonly config: Readonly<Record<string, unknown>>;
}

/** W&B's JSON for a number: its NaN / Infinity tokens for the non-finite ones. */
export function wandbNumberJson(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Number.POSITIVE_INFINITY) return 'Infinity';
  if (v === Number.NEGATIVE_INFINITY) return '-Infinity';
  return String(v);
}

/**
 * JSON of a config value (finite numbers, strings, booleans, null, lists, objects); non-finite numbers become
 * W&B's tokens, as its own JSON encoder writes them.
 */
function configJson(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'number' && !Number.isFinite(x) ? `\u0000${wandbNumberJson(x)}` : x)).replace(
    /"\\u0000(NaN|Infinity|-Infinity)"/g,
    '$1',
  );
}

/** An 8-character W&B run id ([a-z0-9]) derived from the lab run id (FNV-1a, so the same run gets the same id). */
export function wandbRunId(labId: string): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  for (let i = 0; i < labId.length; i++) {
    h1 = Math.imul(h1 ^ labId.charCodeAt(i), 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ labId.charCodeAt(i), 0x811c9dc5) >>> 0;
  }
  return (h1.toString(36) + h2.toString(36)).padEnd(8, '0').slice(0, 8);
}

/** `offline-run-YYYYMMDD_HHMMSS-<id>`, the folder name wandb gives an offline run (from the start time, UTC). */
export function wandbRunFolder(startedAt: string, wandbId: string): string {
  const d = new Date(startedAt);
  const t = Number.isNaN(d.getTime()) ? new Date(0) : d;
  const p = (n: number) => String(n).padStart(2, '0');
  return `offline-run-${t.getUTCFullYear()}${p(t.getUTCMonth() + 1)}${p(t.getUTCDate())}_${p(t.getUTCHours())}${p(t.getUTCMinutes())}${p(t.getUTCSeconds())}-${wandbId}`;
}

export interface WandbExportOptions {
  readonly keys: readonly string[];
  readonly project: string;
  readonly wandbId: string;
  /** The version the header record names as producer. */
  readonly producer: string;
}

/** The `.wandb` file's bytes, in chunks of about CHUNK_BYTES. */
export function* wandbRunChunks(run: TrackerExportRun, records: Iterable<MetricRecord>, opts: WandbExportOptions): Generator<Uint8Array> {
  const w = new WandbLogWriter();
  const startMs = Date.parse(run.startedAt);
  const start = Number.isFinite(startMs) ? startMs : 0;
  let num = 1;
  const write = (msg: Parameters<typeof encodeWandbRecord>[0]) => w.write(encodeWandbRecord({ num: num++, ...msg }));
  write({ header: { versionInfo: { producer: opts.producer, minConsumer: '' } } });
  write({
    run: {
      runId: opts.wandbId,
      project: opts.project,
      displayName: run.name,
      tags: [...run.tags],
      startTime: { seconds: Math.floor(start / 1000), nanos: (start % 1000) * 1e6 },
      config: { update: Object.entries(run.config).map(([k, v]) => ({ key: k, valueJson: configJson(v) })) },
    },
  });
  const last: Record<string, number> = {};
  let pending = 0;
  let lastStep = 0;
  for (const r of records) {
    const items: WandbItem[] = [];
    for (const k of opts.keys) {
      const v = r.values[k];
      if (v === undefined) continue;
      items.push({ nestedKey: [k], valueJson: wandbNumberJson(v) });
      last[k] = v;
    }
    const wall = r.values['perf/wall_s'];
    const ts = start / 1000 + (wall !== undefined && Number.isFinite(wall) ? wall : 0);
    items.push({ nestedKey: ['_step'], valueJson: String(r.step) }, { nestedKey: ['_timestamp'], valueJson: String(ts) });
    write({ history: { item: items, step: { num: r.step } } });
    lastStep = r.step;
    pending += 64 + items.length * 24;
    if (pending >= CHUNK_BYTES) {
      pending = 0;
      yield w.take();
    }
  }
  write({
    summary: {
      update: [
        ...Object.entries(last).map(([k, v]) => ({ nestedKey: [k], valueJson: wandbNumberJson(v) })),
        { nestedKey: ['_step'], valueJson: String(lastStep) },
      ],
    },
  });
  write({ exit: { exitCode: run.completed ? 0 : 1 } });
  write({ final: {} });
  yield w.take();
}

/** MLflow's metric / param name for a lab key: `@` → `_at_` (verl's spelling), other refused characters → `_`. */
export function mlflowKey(key: string): string {
  return key
    .split('@')
    .join('_at_')
    .replace(/[^A-Za-z0-9_\-. /:]/g, '_');
}

/** Python's repr of a float, the spelling MLflow's file store writes. */
export function pythonFloat(v: number): string {
  if (Number.isNaN(v)) return 'nan';
  if (v === Number.POSITIVE_INFINITY) return 'inf';
  if (v === Number.NEGATIVE_INFINITY) return '-inf';
  if (Number.isInteger(v) && Math.abs(v) < 1e16) return `${v}.0`;
  // JS and Python both print the shortest round-trip digits; only the exponent spelling differs (1e-7 vs 1e-07).
  return String(v).replace(/e([-+])(\d)$/, 'e$10$2');
}

/** Python's str() of a param value (MLflow stores params as strings): True / False / None like verl's logger. */
function paramString(v: unknown): string {
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (v === null || v === undefined) return 'None';
  // An integer-valued number is written as an int (a config's batch sizes and seeds are ints in Python).
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : pythonFloat(v);
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
}

/** `a/b/c` → value for every leaf of a nested config (verl flattens its config into MLflow params this way). */
export function flattenConfig(o: Readonly<Record<string, unknown>>, prefix = '', out: Record<string, string> = {}): Record<string, string> {
  for (const [k, v] of Object.entries(o)) {
    const key = prefix ? `${prefix}/${k}` : k;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) flattenConfig(v as Record<string, unknown>, key, out);
    else out[key] = paramString(v);
  }
  return out;
}

export interface MlflowExportOptions {
  readonly keys: readonly string[];
  readonly experimentId: string;
  readonly runUuid: string;
  /** The folder the files go to, as a file:// URI's path (meta.yaml's artifact_uri). */
  readonly root: string;
  readonly user: string;
}

export interface ExportFile {
  /** Relative to the MLflow store root, '/'-separated. */
  readonly path: string;
  readonly text: string;
}

function yamlString(s: string): string {
  return /^[A-Za-z0-9_.\-/ ]*$/.test(s) && s.trim() === s && s !== '' && !/^[-\d.]/.test(s) ? s : `'${s.replace(/'/g, "''")}'`;
}

/** One run's files in MLflow's file store (the experiment's own meta.yaml is main's: it may already exist). */
export function* mlflowRunFiles(run: TrackerExportRun, records: readonly MetricRecord[], opts: MlflowExportOptions): Generator<ExportFile> {
  const base = `${opts.experimentId}/${opts.runUuid}`;
  const startMs = Date.parse(run.startedAt);
  const start = Number.isFinite(startMs) ? startMs : 0;
  const endMs = run.finishedAt ? Date.parse(run.finishedAt) : Number.NaN;
  const end = Number.isFinite(endMs) ? endMs : start;
  yield {
    path: `${base}/meta.yaml`,
    text: [
      `artifact_uri: file://${opts.root}/${base}/artifacts`,
      `end_time: ${end}`,
      "entry_point_name: ''",
      `experiment_id: '${opts.experimentId}'`,
      'lifecycle_stage: active',
      `run_id: ${opts.runUuid}`,
      `run_name: ${yamlString(run.name)}`,
      "source_name: ''",
      'source_type: 4',
      "source_version: ''",
      `start_time: ${start}`,
      `status: ${run.completed ? 3 : 4}`,
      'tags: []',
      `user_id: ${yamlString(opts.user)}`,
      '',
    ].join('\n'),
  };
  const seen = new Map<string, string>();
  for (const k of opts.keys) {
    const mk = mlflowKey(k);
    if (seen.has(mk))
      throw new Error(`metric keys "${seen.get(mk)}" and "${k}" both become "${mk}" in MLflow; rename one before exporting`);
    seen.set(mk, k);
    let text = '';
    for (const r of records) {
      const v = r.values[k];
      if (v === undefined) continue;
      const wall = r.values['perf/wall_s'];
      const ts = Math.round(start + (wall !== undefined && Number.isFinite(wall) ? wall * 1000 : 0));
      text += `${ts} ${pythonFloat(v)} ${r.step}\n`;
    }
    yield { path: `${base}/metrics/${mk}`, text };
  }
  for (const [k, v] of Object.entries(flattenConfig(run.config))) yield { path: `${base}/params/${mlflowKey(k)}`, text: v };
  yield { path: `${base}/tags/mlflow.runName`, text: run.name };
  yield { path: `${base}/tags/mlflow.user`, text: opts.user };
  yield { path: `${base}/tags/arlarena.run_id`, text: run.id };
  if (run.tags.length > 0) yield { path: `${base}/tags/arlarena.tags`, text: run.tags.join(',') };
}

/** An experiment's meta.yaml. */
export function mlflowExperimentMeta(experimentId: string, name: string, root: string, createdMs: number): string {
  return [
    `artifact_location: file://${root}/${experimentId}`,
    `creation_time: ${createdMs}`,
    `experiment_id: '${experimentId}'`,
    `last_update_time: ${createdMs}`,
    'lifecycle_stage: active',
    `name: ${yamlString(name)}`,
    '',
  ].join('\n');
}
