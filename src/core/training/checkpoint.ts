/**
 * Trainer checkpoint format (version 1). A checkpoint is everything needed to continue a run as if it had
 * never stopped (resume-equivalence):
 *
 *   policy.bin   policy weights (tensorio format)
 *   ref.bin      π_ref weights (the behaviour-cloned start; frozen) — stored so a resume needs nothing else
 *   optim.bin    AdamW first/second moments (`m/<var>`, `v/<var>`)
 *   state.json   step, AdamW step count, every RNG stream's state, the task-seed cursor, the warm-start
 *                provenance and the config fingerprint the checkpoint belongs to
 *
 * `meta` duplicates the small facts (format, version, step, configHash, refSource) so the store can list
 * checkpoints without decoding files.
 */
import type { RngState } from '../util/rng';
import type { HfIdentity } from './hfRun';
import type { TrainerCheckpoint } from './types';
import { decodeJson, decodeTensors, encodeJson, encodeTensors, type NamedTensors } from './tensorio';

export const CHECKPOINT_FORMAT = 'arlarena-trainer-checkpoint';
export const CHECKPOINT_VERSION = 1;

export interface TrainerState {
  readonly step: number;
  readonly optimStep: number;
  /** Named RNG streams (rollout sampling, task seeds, mini-batch order, validation). */
  readonly rng: Record<string, RngState>;
  /** Next training-task index (tasks are drawn from a seeded stream of task seeds). */
  readonly taskCursor: number;
  /** Where π_ref came from: `shipped:<ref>` or `bc:<updates>` or `none`. */
  readonly refSource: string;
  readonly configHash: string;
  /** Cumulative counters carried across resume (tokens seen, wall seconds before this session). */
  readonly totals: { readonly tokens: number; readonly wallSeconds: number };
  /**
   * K, the gradient workers the run trained with. A resume with compute.workers = 0 ("one per core")
   * keeps this K instead of taking the cores of the machine it resumes on: K sets the float32 summation order.
   * Absent in checkpoints written before it was recorded.
   */
  readonly workers?: number;
  /**
   * model.source = hf:PATH runs: the base model's architecture and the SHA-256 of its weight and tokenizer files.
   * policy.bin then holds only what training changed (LoRA adapters, or every weight without LoRA) and ref.bin is
   * empty (π_ref is the base model); a resume checks the folder against these hashes. Absent for lab models.
   */
  readonly hfModel?: HfIdentity;
}

export interface CheckpointContent {
  readonly state: TrainerState;
  readonly policy: NamedTensors;
  readonly ref: NamedTensors;
  readonly optim: NamedTensors;
}

export function makeCheckpoint(c: CheckpointContent): TrainerCheckpoint {
  return {
    step: c.state.step,
    files: {
      'policy.bin': encodeTensors(c.policy),
      'ref.bin': encodeTensors(c.ref),
      'optim.bin': encodeTensors(c.optim),
      'state.json': encodeJson({ format: CHECKPOINT_FORMAT, version: CHECKPOINT_VERSION, ...c.state }),
    },
    meta: {
      format: CHECKPOINT_FORMAT,
      version: CHECKPOINT_VERSION,
      step: c.state.step,
      configHash: c.state.configHash,
      refSource: c.state.refSource,
    },
  };
}

export function readCheckpoint(ck: TrainerCheckpoint): CheckpointContent {
  const need = ['policy.bin', 'ref.bin', 'optim.bin', 'state.json'];
  const missing = need.filter((n) => !(n in ck.files));
  if (missing.length > 0) throw new Error(`checkpoint at step ${ck.step} lacks ${missing.join(', ')}; it cannot be resumed`);
  const raw = decodeJson<TrainerState & { format?: string; version?: number }>(ck.files['state.json']);
  if (raw.format !== CHECKPOINT_FORMAT)
    throw new Error(`checkpoint state.json has format ${String(raw.format)}, expected ${CHECKPOINT_FORMAT}`);
  if (raw.version !== CHECKPOINT_VERSION)
    throw new Error(`checkpoint version ${String(raw.version)} is not supported (this build reads version ${CHECKPOINT_VERSION})`);
  const { format: _f, version: _v, ...state } = raw;
  return {
    state,
    policy: decodeTensors(ck.files['policy.bin']),
    ref: decodeTensors(ck.files['ref.bin']),
    optim: decodeTensors(ck.files['optim.bin']),
  };
}

/** A short stable fingerprint of a JSON value (FNV-1a 32 over its canonical JSON, hex). Not cryptographic. */
export function fingerprint(value: unknown): string {
  const s = canonicalJson(value);
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}

/** JSON with object keys sorted at every level. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const obj = value as Record<string, unknown>;
  return `{${Object.keys(obj)
    .sort()
    .filter((k) => obj[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`)
    .join(',')}}`;
}
