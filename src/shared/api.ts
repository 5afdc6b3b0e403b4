/**
 * The one API contract between the renderer and the main-side services.
 *
 * Two verbs, as in VS Code's IPC: `call` (request → typed Result) and `subscribe` (live events). Method and
 * event names are `area.verb`. Every request and reply has a zod schema; main validates every argument at the
 * door (src/main/api/router.ts) and both transports — Electron IPC through the preload and browser mode's
 * HTTP + WebSocket — carry exactly these shapes.
 *
 * Run configs cross the boundary as plain JSON: their full schema, doc comments and cross-field validation
 * live in the engine (src/core/config); main resolves and validates them and reports field-level errors.
 */
import { z } from 'zod';
import type { Result } from './result';
import { ModelFolders, ModelInspection, ModelsInspectInput } from './models';
import { LadderInfo, LadderListItem, LadderName, LadderSource } from './ladders';
import { StudyInfo } from './studies';
import { WorkspacePatchSchema, WorkspaceReply } from './workspace';

// ---------------------------------------------------------------------------------------------------------
// Shared records
// ---------------------------------------------------------------------------------------------------------

export const RunId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a run id is 1–64 letters, digits, "_" or "-"');

export const RunStatus = z.enum(['queued', 'running', 'paused', 'completed', 'failed', 'stopped', 'interrupted']);
export type RunStatus = z.infer<typeof RunStatus>;

export const Severity = z.enum(['info', 'warning', 'critical']);
export type Severity = z.infer<typeof Severity>;

/** A dotted-path override of the resolved config, e.g. `{"optim.lr": 1e-5, "clip.epsHigh": 0.004}`. */
export const ConfigOverrides = z.record(z.string().min(1), z.union([z.string(), z.number(), z.boolean(), z.null()]));
export type ConfigOverrides = z.infer<typeof ConfigOverrides>;

export const Alert = z.object({
  id: z.string(),
  runId: z.string(),
  /** Rule id from the detector catalog (e.g. `grad_norm_spike`). */
  rule: z.string(),
  severity: Severity,
  /** Metric key the rule fired on. */
  metric: z.string(),
  firstStep: z.number().int(),
  lastStep: z.number().int(),
  /** Plain-language statement of what happened. */
  message: z.string(),
  /** What to try (e.g. "tolerant clipping is collapsing: try SAMPO or GSPO, or sequence masking"). */
  hint: z.string(),
  /** The evidence window: steps and the metric's values there (non-finite values kept as null). */
  evidence: z.object({ steps: z.array(z.number()), values: z.array(z.number().nullable()) }),
  /**
   * The point the message cites (the spike, or the best level it fell from), inside the evidence window; absent
   * on alerts stored before it was recorded and for rules that cite none (non_finite).
   */
  peak: z.object({ step: z.number(), value: z.number() }).optional(),
  /** The level the rule's finding crossed, in the metric's units (the evidence chart draws it as a line). */
  threshold: z.number().optional(),
  acknowledged: z.boolean(),
});
export type Alert = z.infer<typeof Alert>;

export const ComputeBackendInfo = z.object({
  /** The tfjs backend training runs on: `tensorflow-gpu`, `tensorflow`, `wasm` or `cpu`. */
  training: z.string(),
  /** The rollout engine: `onnxruntime-cpu` or `tfjs`. */
  rollout: z.string(),
  /** One line for the user, e.g. "tfjs-wasm (SIMD, 1 thread); @tensorflow/tfjs-node-gpu not installed". */
  detail: z.string(),
  available: z.array(z.string()),
  /**
   * Data-parallel gradient workers (compute.workers): for a run, the K it trained with; for app.info, the
   * K a run with compute.workers = 0 gets here (the machine's cores). Absent in records made before it existed.
   */
  workers: z.number().int().positive().optional(),
  /**
   * Native TensorFlow (tfjs-node / tfjs-node-gpu) when training ran on it: libtensorflow's version, the thread pools
   * it was given (compute.intraOpThreads / interOpThreads, fixed when it first loads in a process), whether its
   * deterministic ops were on, and the GPU's name (null on the CPU). Absent for other backends and older records.
   */
  tensorflow: z
    .object({
      version: z.string(),
      package: z.string(),
      intraOpThreads: z.number().int(),
      interOpThreads: z.number().int(),
      deterministicOps: z.boolean(),
      gpu: z.string().nullable(),
    })
    .optional(),
});
export type ComputeBackendInfo = z.infer<typeof ComputeBackendInfo>;

/** Where a run came from: trained in this lab, or imported from an external training log. */
export const RunKind = z.enum(['lab', 'imported']);
export type RunKind = z.infer<typeof RunKind>;

/**
 * An imported run's source: what was read, how, and what was made of it. `keyMap` maps each catalog key the run
 * holds to the source key that fed it (source keys the catalog does not know are stored under their own names
 * and are not listed); `skipped` counts inputs that did not make it in, by reason.
 */
export const ImportSource = z.object({
  /** Detected (or forced) log format, e.g. `verl-console`, `tensorboard`, `wandb-csv`. */
  format: z.string(),
  /** The training framework the keys point to (`verl`, `trl`, `openrlhf`, …; `unknown`). */
  framework: z.string(),
  /** The source file(s) on the machine that imported them, in read order. */
  paths: z.array(z.string()),
  /** SHA-256 (hex) of each source file, same order as `paths`: duplicate imports are refused by these. */
  sha256: z.array(z.string()),
  /** Total bytes read. */
  bytes: z.number().int(),
  importedAt: z.string(),
  keyMap: z.record(z.string(), z.string()),
  skipped: z.record(z.string(), z.number().int()),
  /** True while `arlarena follow` / follow.start tails the source (the run's status is then `running`). */
  following: z.boolean(),
  /** Short notes from the parser and importer (e.g. "resumed at step 101", "3 out-of-order steps dropped"). */
  notes: z.array(z.string()),
});
export type ImportSource = z.infer<typeof ImportSource>;

export const RunSummary = z.object({
  id: RunId,
  /** Absent on records written before imports existed: read it as 'lab'. */
  kind: RunKind.optional(),
  name: z.string(),
  tags: z.array(z.string()),
  env: z.string(),
  preset: z.string(),
  seed: z.number().int(),
  status: RunStatus,
  step: z.number().int(),
  totalSteps: z.number().int(),
  createdAt: z.string(),
  updatedAt: z.string(),
  /** Headline numbers: last/best success, last valid-format ratio, … (keys from the metric catalog, plus `best/…`). */
  summary: z.record(z.string(), z.number().nullable()),
  alertCount: z.number().int(),
  worstSeverity: Severity.nullable(),
  /**
   * The last step the collapse detector has checked: live while a lab run trains, as an import or a follow reads
   * the log, or by runs.detect with `save` (`arlarena check --save`). Null or absent: never checked (a synthetic
   * run, a record from before this was kept), so an empty alert list says nothing about collapse.
   */
  detectedThrough: z.number().int().nullable().optional(),
  /** The record's estimate of the seconds left (RunRecord.etaSeconds), for the runs table's ETA column. */
  etaSeconds: z.number().nullable().optional(),
  /** The config's training.valTemperature (0 = greedy validation); null for runs without one (imports, synthetic). */
  valTemperature: z.number().nullable().optional(),
  /** False for an imported run whose log named no seed (`seed` is then a stored 0, not the source's): "unknown". */
  seedKnown: z.boolean().optional(),
  /** The researcher's notes on the run (runs.note), free text; absent when none were written. */
  notes: z.string().max(10_000).optional(),
  /**
   * The run config's values by dotted path (`training.lr`, `algorithm.loss`; shared/configValues.ts), for the runs
   * table's config columns and queries without loading each run. Set by runs.list; absent in stored records.
   */
  configValues: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).optional(),
});
export type RunSummary = z.infer<typeof RunSummary>;

/**
 * The base model of a model.source = hf:PATH run, as the run read it: never the weights, only what identifies them.
 * A bundle carries this record and the trained adapters (or weights); reproduce and resume check a folder's hashes
 * against it and refuse, naming the file, when one differs.
 */
export const HfModelRecord = z.object({
  /** The folder the run read. */
  path: z.string(),
  /** config.json's architecture (Qwen2ForCausalLM, Qwen3ForCausalLM, LlamaForCausalLM). */
  architecture: z.string(),
  /** config.json as read. */
  config: z.record(z.string(), z.unknown()),
  /** SHA-256 (hex) of each weight file, by file name. */
  weights: z.record(z.string(), z.string()),
  /** SHA-256 (hex) of tokenizer.json, tokenizer_config.json (and chat_template.jinja), by file name. */
  tokenizer: z.record(z.string(), z.string()),
  /** Parameters of the base model, and those the run trains (the adapters' under LoRA). */
  params: z.number().int(),
  trainableParams: z.number().int(),
  /** LoRA settings; null = every weight trained. */
  lora: z.object({ rank: z.number().int(), alpha: z.number(), dropout: z.number(), targets: z.array(z.string()) }).nullable(),
});
export type HfModelRecord = z.infer<typeof HfModelRecord>;

export const RunRecord = RunSummary.extend({
  /** The resolved, validated, frozen run config (engine schema). */
  config: z.record(z.string(), z.unknown()),
  appVersion: z.string(),
  appCommit: z.string(),
  backend: ComputeBackendInfo,
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
  error: z.string().nullable(),
  alerts: z.array(Alert),
  /** Seconds of training wall time so far and an estimate of what remains. */
  wallSeconds: z.number(),
  etaSeconds: z.number().nullable(),
  /** Imported runs only (kind 'imported'): the source log and what the importer made of it. */
  source: ImportSource.nullable().optional(),
  /**
   * Runs that came from a reproducibility bundle: the SHA-256 of the bundle file and the id the run had where it
   * was exported. Importing a bundle file whose SHA-256 a run records is refused as a duplicate unless `again`.
   */
  importedBundle: z
    .object({ sha256: z.string().regex(/^[0-9a-f]{64}$/), originalId: z.string() })
    .nullable()
    .optional(),
  /** Runs of a Hugging Face model (config model.source = hf:PATH): the base model's identity. Absent otherwise. */
  model: HfModelRecord.optional(),
});
export type RunRecord = z.infer<typeof RunRecord>;

export const GridRender = z.object({
  kind: z.literal('grid'),
  cells: z.array(z.array(z.string())),
  legend: z.record(z.string(), z.string()),
});

export const TrajectoryTurn = z.object({
  turn: z.number().int(),
  observation: z.string(),
  prompt: z.string().optional(),
  response: z.string(),
  think: z.string().nullable(),
  action: z.string().nullable(),
  formatValid: z.boolean(),
  actionValid: z.boolean(),
  reward: z.number(),
  advantage: z.number().nullable().optional(),
  render: GridRender.nullable().optional(),
});

export const Trajectory = z.object({
  step: z.number().int(),
  /** `train` rollout or `val`idation episode. */
  split: z.enum(['train', 'val']),
  env: z.string(),
  taskId: z.string(),
  taskType: z.string().optional(),
  uid: z.string(),
  trajUid: z.string(),
  won: z.boolean(),
  episodeReturn: z.number(),
  turns: z.array(TrajectoryTurn),
});
export type Trajectory = z.infer<typeof Trajectory>;

export const PresetInfo = z.object({
  name: z.string(),
  label: z.string(),
  why: z.string(),
  recommended: z.boolean(),
  /** The paper's four dimensions, as short human strings. */
  dimensions: z.object({ aggregation: z.string(), clipping: z.string(), advantage: z.string(), filtering: z.string() }),
  overrides: z.record(z.string(), z.unknown()),
});
export type PresetInfo = z.infer<typeof PresetInfo>;

export const EnvInfo = z.object({
  name: z.string(),
  label: z.string(),
  description: z.string(),
  tests: z.string(),
  rewardRange: z.tuple([z.number(), z.number()]),
  horizon: z.number().int(),
  /** Default prompt history window k on this env (env.historyWindow follows it unless overridden). */
  historyWindow: z.number().int(),
  solvable: z.string(),
  settings: z.record(z.string(), z.unknown()),
  /**
   * Grid worlds only: what each symbol of the text grid observation means (e.g. `#` wall), so the trajectory
   * viewer can draw the grid as a picture; null for text worlds (and absent from older backends).
   */
  gridLegend: z.record(z.string(), z.string()).nullable().optional(),
});
export type EnvInfo = z.infer<typeof EnvInfo>;

/** One documented config field, for the "Customise" editor. */
export const ConfigFieldDoc = z.object({
  path: z.string(),
  type: z.enum(['number', 'integer', 'boolean', 'enum', 'string']),
  doc: z.string(),
  default: z.unknown(),
  choices: z.array(z.string()).optional(),
  min: z.number().optional(),
  max: z.number().optional(),
  /** Editor section: the four dimensions, the stability recipe, model, compute, batch, … */
  section: z.string(),
});
export type ConfigFieldDoc = z.infer<typeof ConfigFieldDoc>;

export const ConfigIssue = z.object({ field: z.string(), value: z.unknown(), message: z.string() });
export type ConfigIssue = z.infer<typeof ConfigIssue>;

export const MetricDefSchema = z.object({
  key: z.string(),
  label: z.string(),
  meaning: z.string(),
  unit: z.string(),
  group: z.string(),
  better: z.enum(['higher', 'lower']).optional(),
});

export const XAxis = z.enum(['step', 'wall', 'tokens']);

/** One run's series for one metric: x values and y values (null = non-finite, kept so charts can mark it). */
export const Series = z.object({
  runId: z.string(),
  key: z.string(),
  x: z.array(z.number()),
  y: z.array(z.number().nullable()),
  /** Original step of each point (downsampling keeps the step so alerts can be placed). */
  steps: z.array(z.number()),
  /** Steps whose value was NaN / ±Infinity, with which: the compare view marks them. */
  nonFinite: z.array(z.object({ step: z.number(), value: z.enum(['NaN', 'Infinity', '-Infinity']) })),
  totalPoints: z.number().int(),
});
export type Series = z.infer<typeof Series>;

/**
 * What a running session is doing: `warmstart` (behaviour cloning before RL, or loading the shipped warm start),
 * `rl`, `validation`, `done`; null before the worker reports. `detail` is its one-line progress (e.g. the BC
 * update and loss) — step/totalSteps count RL steps only.
 */
export const SessionPhase = z.enum(['warmstart', 'rl', 'validation', 'done']).nullable();
export type SessionPhase = z.infer<typeof SessionPhase>;
export const SessionInfo = z.object({
  runId: z.string(),
  status: RunStatus,
  step: z.number().int(),
  totalSteps: z.number().int(),
  etaSeconds: z.number().nullable(),
  /** Seconds this run has been running, behaviour cloning included, pauses not (earlier sessions included). */
  elapsedSeconds: z.number(),
  queuePosition: z.number().int().nullable(),
  phase: SessionPhase,
  detail: z.string().nullable(),
});
export type SessionInfo = z.infer<typeof SessionInfo>;

/** A success rate on n held-out tasks with its 95 % Wilson interval. */
export const SuccessInterval = z.object({ rate: z.number(), lo: z.number(), hi: z.number(), n: z.number().int() });
export type SuccessInterval = z.infer<typeof SuccessInterval>;

/**
 * What a run's validation success should be read against: the uniform-random and expert
 * policies on the very held-out tasks its validation uses (heldOutSeeds(training.valEpisodes)), and what its
 * warm start (π_ref) scored when that is a shipped checkpoint — on that checkpoint's own held-out set, so each
 * interval carries its own n.
 */
export const RunBaselines = z.object({
  env: z.string(),
  /** Held-out tasks of the run's validation (training.valEpisodes); random and expert were run on these. */
  episodes: z.number().int(),
  random: SuccessInterval,
  expert: SuccessInterval,
  /** null unless warmStart.source = 'shipped'. */
  warmStart: z
    .object({
      /** The checkpoint, as the trainer names it: `shipped:<env>@<weights SHA-256 prefix>`. */
      source: z.string(),
      greedy: SuccessInterval.optional(),
      sampled: SuccessInterval.optional(),
      /** Temperature of the `sampled` evaluation. */
      sampledTemperature: z.number().nullable(),
      /** Why numbers are missing, or how the checkpoint's evaluation differs from this run's validation. */
      note: z.string().nullable(),
    })
    .nullable(),
});
export type RunBaselines = z.infer<typeof RunBaselines>;

// ---------------------------------------------------------------------------------------------------------
// Methods: name → { input, output }
// ---------------------------------------------------------------------------------------------------------

const NoInput = z.object({}).strict().optional();
const RunRef = z.object({ runId: RunId }).strict();

/**
 * An opaque grant the desktop app's file dialog answered (imports.pick): it names the file the user chose there.
 * Grants last until the app quits.
 */
const PathGrant = z.string().regex(/^[A-Za-z0-9_-]{16,64}$/, 'a grant is the opaque id imports.pick answered');

/** Options shared by imports.file / imports.path (the CLI's `arlarena import` flags). */
const ImportOptions = {
  /** Force a format instead of detecting it from the content (an unknown name is refused with the list). */
  format: z.string().min(1).max(40).optional(),
  /** Run name (several source runs: each gets " · <source run>" appended). */
  name: z.string().trim().min(1).max(200).optional(),
  tags: z.array(z.string().trim().min(1).max(50)).max(50).optional(),
  /** Import even when a run already holds a source file with the same SHA-256. */
  again: z.boolean().optional(),
};

/**
 * What an import made. `steps` counts stored metric records over all new runs; `skipped` counts inputs left out
 * by reason. A source some run already holds (same SHA-256) is not imported again unless `again`: its holder's
 * id is listed in `duplicateOf` (with nothing new, `runIds` is empty). Bundles report format 'bundle'.
 */
export const ImportResult = z.object({
  runIds: z.array(RunId),
  format: z.string(),
  steps: z.number().int(),
  skipped: z.record(z.string(), z.number().int()),
  duplicateOf: z.array(RunId).optional(),
  /**
   * Of `duplicateOf`, the runs a bundle holds itself: the run it was exported from (or a copy of it) with the same
   * metrics, so importing it would only make a look-alike under a new id (`again` does, as a copy).
   */
  exportedFrom: z.array(RunId).optional(),
  /** Runs found in trackers' stores, by tracker format (e.g. { wandb: 3, 'mlflow-sqlite': 2, trackio: 1 }). */
  trackers: z.record(z.string(), z.number().int()).optional(),
});
export type ImportResult = z.infer<typeof ImportResult>;

/** A run being live-followed (follow.start / `arlarena follow`). */
export const FollowInfo = z.object({
  runId: RunId,
  path: z.string(),
  format: z.string(),
  /** Last stored step (the high-water mark replayed lines must exceed). */
  step: z.number().int(),
  /** Metric records stored so far. */
  steps: z.number().int(),
  startedAt: z.string(),
  status: RunStatus,
  /**
   * A tracker's database (MLflow SQLite store, Trackio database): every lab run the follow feeds, one per tracker
   * run, oldest first. follow.stop on any of them stops them all and releases the database. Absent for a log.
   */
  runIds: z.array(RunId).optional(),
});
export type FollowInfo = z.infer<typeof FollowInfo>;

/** A named compute target (a Ray cluster): never its token, only whether one is stored. */
export const RemoteInfo = z.object({ name: z.string(), url: z.string(), hasToken: z.boolean(), addedAt: z.string() });
export type RemoteInfo = z.infer<typeof RemoteInfo>;

/** A remote's name as the CLI takes it (`arlarena remote add NAME …`). */
const RemoteName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$/, "a remote name is 1–40 letters, digits, '.', '_' or '-', starting with a letter or digit");

/** What `remote test` reports: the cluster answered, with the token, and this is what it has. */
export const ClusterSummary = z.object({
  url: z.string(),
  rayVersion: z.string(),
  nodes: z.number().int(),
  cpus: z.object({ total: z.number(), free: z.number() }),
  gpus: z.object({ total: z.number(), free: z.number() }),
});
export type ClusterSummary = z.infer<typeof ClusterSummary>;

/**
 * One of the lab's jobs on a cluster: a lab run (`runId`, submission id = run id) or a verl hand-off (`verl`,
 * its preset/env). Times are ISO strings; `node` is the driver's node address (null while pending).
 */
export const ClusterJob = z.object({
  submissionId: z.string(),
  kind: z.enum(['run', 'verl']),
  runId: z.string().nullable(),
  verl: z.string().nullable(),
  status: z.enum(['PENDING', 'RUNNING', 'STOPPED', 'SUCCEEDED', 'FAILED']),
  node: z.string().nullable(),
  startTime: z.string().nullable(),
  endTime: z.string().nullable(),
  message: z.string().nullable(),
});
export type ClusterJob = z.infer<typeof ClusterJob>;

export const apiMethods = {
  'app.info': {
    input: NoInput,
    output: z.object({
      name: z.string(),
      version: z.string(),
      commit: z.string(),
      compute: ComputeBackendInfo,
      dataDir: z.string(),
      transport: z.enum(['electron', 'browser']),
      platform: z.string(),
      electronAvailable: z.boolean(),
    }),
  },
  'catalog.presets': { input: NoInput, output: z.array(PresetInfo) },
  'catalog.envs': { input: NoInput, output: z.array(EnvInfo) },
  'catalog.metrics': { input: NoInput, output: z.array(MetricDefSchema) },
  'catalog.configFields': { input: NoInput, output: z.array(ConfigFieldDoc) },
  /** The formats an import can be forced to (imports.* `format`) when detection from the content fails. */
  'catalog.importFormats': { input: NoInput, output: z.array(z.object({ name: z.string(), description: z.string() })) },
  'config.resolve': {
    input: z.object({ preset: z.string().min(1), env: z.string().min(1), overrides: ConfigOverrides.optional() }).strict(),
    output: z.object({ config: z.record(z.string(), z.unknown()).nullable(), issues: z.array(ConfigIssue) }),
  },
  'runs.list': {
    input: z
      .object({
        status: z.array(RunStatus).optional(),
        env: z.string().optional(),
        preset: z.string().optional(),
        tag: z.string().optional(),
        /** Only lab-trained or only imported runs (records without a kind are lab runs). */
        kind: RunKind.optional(),
        search: z.string().max(200).optional(),
        sortBy: z.enum(['createdAt', 'updatedAt', 'name', 'step', 'success']).optional(),
        sortDir: z.enum(['asc', 'desc']).optional(),
      })
      .strict()
      .optional(),
    output: z.array(RunSummary),
  },
  'runs.get': { input: RunRef, output: RunRecord },
  /**
   * Several runs' records in one call (the compare view opens with up to 64): `runs` in the order asked, and the
   * ids with no run (deleted?) in `missing` instead of a NOT_FOUND for the whole call.
   */
  'runs.getMany': {
    input: z.object({ runIds: z.array(RunId).min(1).max(64) }).strict(),
    output: z.object({ runs: z.array(RunRecord), missing: z.array(z.string()) }),
  },
  'runs.rename': { input: z.object({ runId: RunId, name: z.string().trim().min(1).max(200) }).strict(), output: RunSummary },
  'runs.tag': { input: z.object({ runId: RunId, tags: z.array(z.string().trim().min(1).max(50)).max(50) }).strict(), output: RunSummary },
  'runs.delete': { input: RunRef, output: z.object({ deleted: z.boolean() }) },
  /** The run's notes, replaced (empty text clears them). */
  'runs.note': { input: z.object({ runId: RunId, notes: z.string().max(10_000) }).strict(), output: RunSummary },
  'runs.metrics': {
    input: z
      .object({
        runIds: z.array(RunId).min(1).max(64),
        keys: z.array(z.string().min(1)).min(1).max(64),
        xAxis: XAxis.optional(),
        /**
         * Any logged key as the x-axis instead (`training/epoch`, `perf/total_num_tokens`): each point's x is that
         * key's value at the same step; steps without it are left out. Wins over `xAxis`.
         */
        xKey: z.string().min(1).max(200).optional(),
        /** Downsample each series to at most this many points (LTTB, spikes kept). */
        maxPoints: z.number().int().min(10).max(100_000).optional(),
      })
      .strict(),
    output: z.array(Series),
  },
  /**
   * One metric of these runs as a CSV file's text, every logged point (not downsampled), in W&B's chart "Export
   * CSV" layout: a chart's CSV button. `fileName` is a suggestion; `rows` counts the distinct steps.
   */
  'runs.chartCsv': {
    input: z.object({ runIds: z.array(RunId).min(1).max(64), key: z.string().min(1) }).strict(),
    output: z.object({ fileName: z.string(), csv: z.string(), rows: z.number().int() }),
  },
  'runs.metricKeys': { input: RunRef, output: z.array(z.string()) },
  /**
   * Logged keys Compare can chart against instead of the step: progress counters (epoch, global step, tokens or
   * samples seen, elapsed time) that never decrease in any of these runs that logs them (src/main/store/axisKeys.ts).
   * Ids with no run add nothing.
   */
  'runs.axisKeys': { input: z.object({ runIds: z.array(RunId).min(1).max(64) }).strict(), output: z.array(z.string()) },
  'runs.trajectories': {
    input: z
      .object({ runId: RunId, step: z.number().int().min(0).optional(), limit: z.number().int().min(1).max(200).optional() })
      .strict(),
    output: z.object({ steps: z.array(z.number()), trajectories: z.array(Trajectory) }),
  },
  'runs.check': { input: RunRef, output: z.array(Alert) },
  /**
   * Runs the collapse detector over a stored run (lab or imported) and says which rules could run on its
   * metrics; with `save` the alerts are stored on the run (as `arlarena check --save` does) and announced as
   * run.alert events. `coverage` has one row per rule: not applicable when a metric it needs is missing.
   * `coverageOnly` answers from the run's keys alone (no detection, `alerts` empty): cheap on a long run.
   */
  'runs.detect': {
    input: z.object({ runId: RunId, save: z.boolean().optional(), coverageOnly: z.boolean().optional() }).strict(),
    output: z.object({
      alerts: z.array(Alert),
      /** `missing`: keys whose absence stops the rule; `needs` 'any' = any one of them would do, 'all' = each. */
      coverage: z.array(
        z.object({
          rule: z.string(),
          title: z.string(),
          applicable: z.boolean(),
          missing: z.array(z.string()),
          needs: z.enum(['all', 'any']),
        }),
      ),
      /** True when the alerts were stored on the run. */
      saved: z.boolean(),
    }),
  },
  /** Random and expert baselines on the run's validation tasks, and its shipped warm start's held-out score. */
  'runs.baselines': { input: RunRef, output: RunBaselines },
  'sessions.start': {
    input: z
      .object({
        preset: z.string().min(1),
        env: z.string().min(1),
        overrides: ConfigOverrides.optional(),
        seed: z
          .number()
          .int()
          .min(0)
          .max(2 ** 31 - 1)
          .optional(),
        name: z.string().trim().min(1).max(200).optional(),
        tags: z.array(z.string().trim().min(1).max(50)).max(50).optional(),
        /** Where it trains: absent or 'local' = this machine; a stored remote's name (or a dashboard URL) = that Ray cluster, as `train --on`. */
        on: z.string().min(1).max(2000).optional(),
        /**
         * The desktop app, for a run whose `model.source` is hf:PATH: the grant its folder dialog answered for that
         * folder (imports.pick, purpose 'model'); the app trains only a folder the user picked there. Browser mode
         * names the folder by path alone (inside `serve --allow-dir`) and refuses a grant.
         */
        modelGrant: PathGrant.optional(),
      })
      .strict(),
    output: z.object({ runId: RunId, status: RunStatus }),
  },
  'sessions.pause': { input: RunRef, output: SessionInfo },
  'sessions.resume': { input: RunRef, output: SessionInfo },
  'sessions.stop': { input: RunRef, output: SessionInfo },
  'sessions.list': { input: NoInput, output: z.array(SessionInfo) },
  'alerts.list': {
    input: z.object({ runId: RunId.optional(), acknowledged: z.boolean().optional() }).strict().optional(),
    output: z.array(Alert),
  },
  'alerts.ack': { input: z.object({ runId: RunId, alertId: z.string().min(1) }).strict(), output: Alert },
  'bundles.export': {
    input: z.object({ runId: RunId, includeCheckpoint: z.boolean().optional() }).strict(),
    /** `downloadUrl` is set in browser mode: GET it with the token header (the URL holds no token); `path` is the file on the main side. */
    output: z.object({
      fileName: z.string(),
      path: z.string(),
      bytes: z.number().int(),
      sha256: z.string(),
      downloadUrl: z.string().nullable(),
    }),
  },
  /**
   * Import a bundle sent as base64. One already in the lab (the same file imported before, or the run it was exported
   * from, same metrics) is refused with CONFLICT naming that run, as `arlarena import` refuses it; `again: true`
   * imports a copy under a new id, as its --again does.
   */
  'bundles.import': {
    input: z.object({ fileName: z.string().min(1).max(255), dataBase64: z.string().min(1), again: z.boolean().optional() }).strict(),
    output: z.object({ runId: RunId, name: z.string() }),
  },
  /**
   * Import an uploaded file (browser upload / drag-and-drop): any log format the importer detects from content,
   * or a bundle (zip). The bytes go to a temp file in the data dir, are imported, and the temp file is deleted.
   * Capped in size (the error says the cap; larger files go through imports.path or `arlarena import`).
   */
  'imports.file': {
    input: z.object({ fileName: z.string().min(1).max(255), dataBase64: z.string().min(1), ...ImportOptions }).strict(),
    output: ImportResult,
  },
  /**
   * The event files of one TensorBoard run folder from a picked or dropped folder (the UI's "Import folder…"
   * groups a tree by folder): one run, as TensorBoard and `arlarena import DIR` make of a folder whose writer was
   * restarted. `fileName` is each file's path inside the picked folder; all must share one folder. Trackers' files
   * (W&B run folders, MLflow runs and databases, recognised by their content) travel together instead, in their
   * folder layout, and come back as the tracker's runs (`trackers` counts them). Capped in total size as imports.file is.
   */
  'imports.files': {
    input: z
      .object({
        files: z
          .array(z.object({ fileName: z.string().min(1).max(255), dataBase64: z.string().min(1) }).strict())
          .min(1)
          .max(500),
        ...ImportOptions,
      })
      .strict(),
    output: ImportResult,
  },
  /**
   * Import a file or folder (a TensorBoard tree: one run per directory with event files) on the main side. In
   * browser mode only inside the folders `arlarena serve --allow-dir DIR` allowed (else VALIDATION on `path`). The
   * desktop app names it by `grant` (imports.pick) and refuses `path`: its window never names a file itself.
   */
  'imports.path': {
    input: z.object({ path: z.string().min(1).max(4096).optional(), grant: PathGrant.optional(), ...ImportOptions }).strict(),
    output: ImportResult,
  },
  /**
   * The desktop app only: opens the native file dialog on the main side (one file, or a folder; `purpose` sets its
   * title, and 'model' picks a model folder for New run) and answers an opaque grant naming what the user chose —
   * passed as `grant` to imports.path / follow.start / models.inspect — and the chosen path to show; null when the
   * dialog was cancelled. Browser mode has no such dialog: UNAVAILABLE.
   */
  'imports.pick': {
    input: z.object({ kind: z.enum(['file', 'folder']).optional(), purpose: z.enum(['import', 'follow', 'model']).optional() }).strict(),
    output: z.object({ grant: PathGrant, path: z.string() }).nullable(),
  },
  /**
   * Tail a growing log file (or a TensorBoard folder gaining files) into one new run: new metric records arrive
   * through `run.metrics`, alerts through `run.alert`; the run is `running` until follow.stop. The file is named as
   * for imports.path: by `path` in browser mode, by `grant` (imports.pick) in the desktop app.
   * A tracker's database (MLflow SQLite store, Trackio database; `format` not given) is polled read-only for new
   * rows, one lab run per tracker run (those that start later too; `name` prefixes each run's name), as
   * `arlarena follow` does: `runId` is the run that logged last, `runIds` all of them so far. A database with no
   * metric logged yet is refused (VALIDATION on `path`): there is no run to show until its writer logs one.
   */
  'follow.start': {
    input: z
      .object({
        path: z.string().min(1).max(4096).optional(),
        grant: PathGrant.optional(),
        format: ImportOptions.format,
        name: ImportOptions.name,
      })
      .strict(),
    output: z.object({ runId: RunId, runIds: z.array(RunId).optional() }),
  },
  /** Stop following: the run is marked completed (following false); for a database, every run of its follow. */
  'follow.stop': { input: RunRef, output: FollowInfo },
  'follow.list': { input: NoInput, output: z.array(FollowInfo) },
  /**
   * A local Hugging Face model folder as New run shows it before a run (shared/models.ts): architecture, parameter
   * count, the LoRA trainable count and the training memory estimate against this machine, with the verdict Start
   * obeys. Named as imports.path names a file: by `path` in browser mode (inside `serve --allow-dir`), by `grant`
   * (imports.pick, purpose 'model') in the desktop app. Reads config.json, tokenizer files and safetensors headers only.
   */
  'models.inspect': { input: ModelsInspectInput, output: ModelInspection },
  /** The model folders New run can offer: browser mode lists those under the `--allow-dir` folders; the desktop app none (its dialog picks). */
  'models.folders': { input: NoInput, output: ModelFolders },
  /** The arena studies in the data dir (`arlarena arena --study`) with their tables and runs. */
  'studies.list': { input: NoInput, output: z.array(StudyInfo) },
  /**
   * The pressure ladders in the data dir (`arlarena ladder --study NAME`: one arena study per level) with their
   * progress, then those committed in the checkout (resources/studies/NAME/summary.json), an unreadable one with its problem.
   */
  'ladders.list': { input: NoInput, output: z.array(LadderListItem) },
  /**
   * One ladder as the Ladder view draws it: per (env, level, cell) the statistics of its summary.json (collapsed share
   * with its 95 % interval, Kaplan–Meier curve and median, log-rank vs the baseline, held-out of survivors) over the
   * runs finished so far, and the run behind every seed. `source` picks a data-dir ladder or a committed summary
   * (resources/studies/NAME/summary.json: statistics only, no runs); without it the data dir's comes first. NOT_FOUND
   * (naming the ladders there) for an unknown name.
   */
  'ladders.get': { input: z.object({ name: LadderName, source: LadderSource.optional() }).strict(), output: LadderInfo },
  /** The project's workspace kept in the data directory (workspace.json): runs table, Compare, chart choices. */
  'workspace.get': { input: NoInput, output: WorkspaceReply },
  /** Changes it: each part given replaces the stored one (null removes it); compared sets merge by key. */
  'workspace.set': { input: WorkspacePatchSchema, output: WorkspaceReply },
  /** The named Ray clusters (`arlarena remote list`). */
  'remotes.list': { input: NoInput, output: z.array(RemoteInfo) },
  /**
   * Name a cluster by its dashboard address (`arlarena remote add`). `token` is pasted; it is copied owner-only into
   * the data dir and never sent back. `tokenFile` is refused (VALIDATION): a page must not make the lab read a file
   * as a token — `arlarena remote add --token-file F` is the terminal's way.
   */
  'remotes.add': {
    input: z
      .object({
        name: RemoteName,
        url: z.string().min(1).max(2000),
        token: z.string().max(4096).optional(),
        tokenFile: z.string().min(1).max(4096).optional(),
      })
      .strict(),
    output: RemoteInfo,
  },
  /** Reach the cluster with its token: Ray version, nodes, free CPUs and GPUs — or the error saying why not. */
  'remotes.test': { input: z.object({ name: RemoteName }).strict(), output: ClusterSummary },
  'remotes.remove': { input: z.object({ name: RemoteName }).strict(), output: z.object({ removed: z.boolean() }) },
  /** The lab's jobs on one cluster (lab runs and verl hand-offs), newest first. */
  'remotes.jobs': {
    input: z.object({ name: RemoteName }).strict(),
    output: z.object({ name: z.string(), url: z.string(), jobs: z.array(ClusterJob) }),
  },
  /** The last `lines` lines of a job's log (default 200). */
  'remotes.jobLog': {
    input: z
      .object({ name: RemoteName, submissionId: z.string().min(1).max(200), lines: z.number().int().min(1).max(2000).optional() })
      .strict(),
    output: z.object({ lines: z.array(z.string()), totalLines: z.number().int() }),
  },
  /**
   * Stop a job. A lab run this app is following is stopped through its session (Ray's stop, the checkpoint kept,
   * the run marked stopped here); any other job of the lab with Ray's `POST /api/jobs/{id}/stop`.
   */
  'remotes.stopJob': {
    input: z.object({ name: RemoteName, submissionId: z.string().min(1).max(200) }).strict(),
    output: z.object({ stopped: z.boolean(), via: z.enum(['session', 'ray']) }),
  },
} as const;

export type ApiMethodName = keyof typeof apiMethods;
export type ApiInput<M extends ApiMethodName> = z.input<(typeof apiMethods)[M]['input']>;
export type ApiOutput<M extends ApiMethodName> = z.output<(typeof apiMethods)[M]['output']>;

// ---------------------------------------------------------------------------------------------------------
// Events: name → payload schema. Subscribers receive them throttled (see src/main/sessions).
// ---------------------------------------------------------------------------------------------------------

export const apiEvents = {
  /** A run changed status or progress. */
  'session.status': z.object({
    runId: z.string(),
    status: RunStatus,
    step: z.number().int(),
    totalSteps: z.number().int(),
    etaSeconds: z.number().nullable(),
    elapsedSeconds: z.number(),
    error: z.string().nullable(),
    phase: SessionPhase,
    detail: z.string().nullable(),
  }),
  /**
   * New metric records of a run (batched). Values: numbers, null for non-finite; `nonFinite` says which kind each
   * null was (NaN, Infinity, -Infinity), absent when the record has none.
   */
  'run.metrics': z.object({
    runId: z.string(),
    records: z.array(
      z.object({
        step: z.number().int(),
        values: z.record(z.string(), z.number().nullable()),
        nonFinite: z.record(z.string(), z.enum(['NaN', 'Infinity', '-Infinity'])).optional(),
      }),
    ),
  }),
  /** A collapse alert was raised or updated. */
  'run.alert': z.object({ runId: z.string(), alert: Alert }),
  /** A sampled trajectory was stored. */
  'run.trajectory': z.object({ runId: z.string(), step: z.number().int(), trajUid: z.string() }),
  /** The run catalog changed (created, renamed, tagged, deleted, imported). */
  'runs.changed': z.object({ runId: z.string().nullable() }),
} as const;

export type ApiEventName = keyof typeof apiEvents;
export type ApiEventPayload<E extends ApiEventName> = z.output<(typeof apiEvents)[E]>;

/** The client-side surface both transports implement (preload bridge and the browser-mode client). */
export interface ArlArenaApi {
  call<M extends ApiMethodName>(method: M, input?: ApiInput<M>): Promise<Result<ApiOutput<M>>>;
  subscribe<E extends ApiEventName>(event: E, listener: (payload: ApiEventPayload<E>) => void): () => void;
  readonly transport: 'electron' | 'browser';
}

export function isApiMethod(name: string): name is ApiMethodName {
  return Object.prototype.hasOwnProperty.call(apiMethods, name);
}

export function isApiEvent(name: string): name is ApiEventName {
  return Object.prototype.hasOwnProperty.call(apiEvents, name);
}
