/**
 * New run's "Hugging Face model folder": the form as a models.inspect request, and the Start gate — a run starts
 * only once the folder was checked with the form as it is now, the estimate fits this machine (models.inspect's
 * `fits`, decided main-side by core/llm/memoryFit.ts, the same check the run's own preflight makes), and this
 * build's run config has the trainer's model fields (`model.source`, `model.lora.*`, listed by catalog.configFields).
 */
import { LORA_TARGET_MODULES } from '../../shared/loraTargets';
import type { LoraRequest, ModelInspection } from '../../shared/models';

export type LoraTargetName = (typeof LORA_TARGET_MODULES)[number];
export const LORA_TARGETS: readonly LoraTargetName[] = LORA_TARGET_MODULES;

type Value = string | number | boolean | null;

/** The form as typed (text fields stay text until checked, so a half-typed number is not lost). */
export interface HfForm {
  /** The model folder's path on the machine the lab runs on (the desktop app: the one its folder dialog chose, shown only). */
  path: string;
  /**
   * The desktop app: the grant its folder dialog answered (imports.pick, purpose 'model'); the folder is named by it,
   * since the app refuses a path sent by its window. Null in browser mode, where the path is typed or picked from a list.
   */
  grant: string | null;
  lora: boolean;
  rank: string;
  alpha: string;
  dropout: string;
  targets: readonly LoraTargetName[];
  /** Rows differentiated together; empty = what the run's mini-batch and activation budget give. */
  rows: string;
  /** Context in tokens, prompt + response (model.maxSeqLen); empty = min(2048, the model's). */
  context: string;
}

export const DEFAULT_HF_FORM: HfForm = {
  path: '',
  grant: null,
  lora: true,
  rank: '16',
  alpha: '32',
  dropout: '0.05',
  targets: [...LORA_TARGETS],
  rows: '',
  context: '',
};

/** The run the estimate is for: the preset and env a Start would run, with the overrides it would send. */
export interface RunRef {
  preset: string;
  env: string;
  overrides?: Record<string, Value>;
}

export interface InspectArg {
  path?: string;
  grant?: string;
  lora: LoraRequest | null;
  run?: RunRef;
  rows?: number;
  seqLen?: number;
}

export type Checked<T> = { ok: true; value: T } | { ok: false; field: string; message: string };

const num = (s: string): number | null => (/^\s*-?(\d+\.?\d*|\.\d+)(e-?\d+)?\s*$/i.test(s) ? Number(s) : null);

/** The models.inspect argument for the form, or the first field that needs fixing (one line, with an example). */
export function inspectRequest(form: HfForm, run: RunRef | null, opts: { desktop?: boolean } = {}): Checked<InspectArg> {
  if (form.grant === null && form.path.trim() === '')
    return {
      ok: false,
      field: 'path',
      // The desktop app takes no typed path: its folder dialog names the folder.
      message: opts.desktop
        ? 'Choose the model folder (the one holding config.json) with "Choose folder…".'
        : 'Give the model folder: the one holding config.json, e.g. /models/qwen2.5-0.5b.',
    };
  let rows: number | undefined;
  if (form.rows.trim() !== '') {
    const n = num(form.rows);
    if (n === null || !Number.isInteger(n) || n < 1 || n > 65_536)
      return {
        ok: false,
        field: 'rows',
        message: `Rows is a whole number from 1 to 65536, e.g. 1 (got "${form.rows.trim()}"); leave it empty for the run's.`,
      };
    rows = n;
  }
  let seqLen: number | undefined;
  if (form.context.trim() !== '') {
    const n = num(form.context);
    if (n === null || !Number.isInteger(n) || n < 2 || n > 1_048_576)
      return {
        ok: false,
        field: 'context',
        message: `Context is a whole number of tokens from 2, e.g. 512 (got "${form.context.trim()}"); leave it empty for the model's.`,
      };
    seqLen = n;
  }
  let lora: LoraRequest | null = null;
  if (form.lora) {
    const rank = num(form.rank);
    if (rank === null || !Number.isInteger(rank) || rank < 1 || rank > 1024)
      return { ok: false, field: 'rank', message: `LoRA rank is a whole number from 1 to 1024, e.g. 16 (got "${form.rank.trim()}").` };
    const alpha = num(form.alpha);
    if (alpha === null || !(alpha > 0) || alpha > 65_536)
      return { ok: false, field: 'alpha', message: `LoRA alpha is a number above 0, e.g. 32 = 2 × rank (got "${form.alpha.trim()}").` };
    const dropout = num(form.dropout);
    if (dropout === null || dropout < 0 || dropout >= 1)
      return {
        ok: false,
        field: 'dropout',
        message: `LoRA dropout is a number from 0 up to (not including) 1, e.g. 0.05 (got "${form.dropout.trim()}").`,
      };
    if (form.targets.length === 0)
      return { ok: false, field: 'targets', message: 'Tick at least one layer for the LoRA adapters, e.g. q_proj and v_proj.' };
    lora = { rank, alpha, dropout, targetModules: LORA_TARGETS.filter((t) => form.targets.includes(t)) };
  }
  return {
    ok: true,
    value: {
      ...(form.grant !== null ? { grant: form.grant } : { path: form.path.trim() }),
      lora,
      ...(run ? { run } : {}),
      ...(rows !== undefined ? { rows } : {}),
      ...(seqLen !== undefined ? { seqLen } : {}),
    },
  };
}

/** A request's identity: an inspection answers the form only while the form asks the same. */
export function requestKey(req: unknown): string {
  return JSON.stringify(req);
}

export type StartGate =
  | {
      allowed: true;
      /**
       * What a run of this model needs unless the user set it otherwise, as `train --model hf:` sets them; the rollout
       * engine is left to the config (onnxruntime on the CPU, the tfjs engine on a GPU: docs/guides/llm.md).
       */
      defaults: Record<string, Value>;
      /** The model itself: always sent. */
      model: Record<string, Value>;
      /** The desktop app: the folder dialog's grant for the folder, sent as sessions.start's modelGrant; else null. */
      grant: string | null;
    }
  | { allowed: false; reason: string };

/** The run-config fields a Hugging Face run needs from the trainer (catalog.configFields lists them once they exist). */
export const HF_RUN_FIELDS = ['model.source', 'model.lora.rank', 'model.lora.alpha', 'model.lora.dropout', 'model.lora.targets'] as const;

/**
 * May Start run on the folder? `inspection` must answer the form as it is now (`current`); the refusal is one
 * sentence, and for a run that will not fit it carries the estimate.
 */
export function startGate(s: {
  request: Checked<unknown>;
  current: boolean;
  checking: boolean;
  error: string | null;
  inspection: ModelInspection | null;
  configFields: ReadonlySet<string>;
  /** The desktop app's grant for the folder (HfForm.grant). */
  grant?: string | null;
}): StartGate {
  if (!s.request.ok) return { allowed: false, reason: s.request.message };
  if (s.checking || (s.inspection && !s.current))
    return { allowed: false, reason: 'Still checking the model folder; Start when its estimate shows.' };
  if (s.error) return { allowed: false, reason: `The model folder cannot be used: ${s.error}` };
  if (!s.inspection) return { allowed: false, reason: 'The model folder has not been checked yet.' };
  const i = s.inspection;
  if (!i.fits) return { allowed: false, reason: `Not started: the run ${i.verdict}` };
  const missing = HF_RUN_FIELDS.filter((f) => !s.configFields.has(f));
  if (missing.length)
    return {
      allowed: false,
      reason: `Not started: this build's trainer cannot train a Hugging Face model yet (its run config has no ${missing.join(', ')}); the estimate above is what the run would need.`,
    };
  return {
    allowed: true,
    grant: s.grant ?? null,
    defaults: {
      'compute.logProbEngine': 'trainer',
      'compute.refLogProbEngine': 'trainer',
      'compute.workers': 1,
      'warmStart.source': 'none',
      'model.maxSeqLen': i.work.seqLen,
    },
    model: {
      'model.source': `hf:${i.dir}`,
      'model.lora.rank': i.lora ? i.lora.rank : 0,
      ...(i.lora
        ? { 'model.lora.alpha': i.lora.alpha, 'model.lora.dropout': i.lora.dropout, 'model.lora.targets': i.lora.targetModules.join('+') }
        : {}),
    },
  };
}

/** The overrides a Start sends: the model's defaults, then the user's own, then the model itself. */
export function startOverrides(gate: StartGate, user: Record<string, Value>): Record<string, Value> {
  return gate.allowed ? { ...gate.defaults, ...user, ...gate.model } : user;
}

const GiB = 2 ** 30;
/** Bytes for the estimate table: GiB from 1 GiB up, MiB below. */
export function fmtMem(bytes: number): string {
  return bytes >= GiB ? `${(bytes / GiB).toFixed(2)} GiB` : `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

/** A parameter count in words: 494.0 M, 1.23 B, 86.0 k. */
export function fmtParams(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)} B`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)} k`;
  return String(n);
}
