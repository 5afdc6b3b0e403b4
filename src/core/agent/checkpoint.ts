/**
 * Model files: `model.json` (format, config, tensor table, SHA-256 of the other files), `weights.bin` (float32,
 * little-endian, tensors in weightSpecs order) and `tokenizer.json`. The bytes are returned as a file map so the
 * trainer can put them in a TrainerCheckpoint and main can write them wherever it stores runs.
 */
import { weightSpecs, type ModelConfig, type ModelWeights } from './model';
import { sha256Hex } from './sha256';
import { Tokenizer } from './tokenizer';

export const MODEL_FORMAT = 'arlarena-policy';
export const MODEL_FORMAT_VERSION = 1;

export interface ModelFileJson {
  format: typeof MODEL_FORMAT;
  version: number;
  config: ModelConfig;
  tensors: Array<{ name: string; shape: number[]; offset: number; length: number }>;
  sha256: { 'weights.bin': string; 'tokenizer.json': string };
  /** Free-form provenance (e.g. seed, step, recipe). */
  meta?: Record<string, unknown>;
}

export const MODEL_FILES = ['model.json', 'weights.bin', 'tokenizer.json'] as const;

export function serializeModel(weights: ModelWeights, tokenizer: Tokenizer, meta?: Record<string, unknown>): Record<string, Uint8Array> {
  if (tokenizer.size !== weights.config.vocabSize) {
    throw new Error(`serializeModel: tokenizer has ${tokenizer.size} tokens but the model's vocabSize is ${weights.config.vocabSize}`);
  }
  const specs = weightSpecs(weights.config);
  const total = specs.reduce((s, w) => s + w.shape.reduce((a, b) => a * b, 1), 0);
  const flat = new Float32Array(total);
  const table: ModelFileJson['tensors'] = [];
  let off = 0;
  for (const spec of specs) {
    const data = weights.tensors[spec.name];
    const n = spec.shape.reduce((a, b) => a * b, 1);
    if (!data || data.length !== n) throw new Error(`serializeModel: tensor "${spec.name}" missing or of wrong size`);
    flat.set(data, off);
    table.push({ name: spec.name, shape: spec.shape, offset: off, length: n });
    off += n;
  }
  const bin = toLittleEndianBytes(flat);
  const tok = new TextEncoder().encode(JSON.stringify(tokenizer.toJSON()));
  const model: ModelFileJson = {
    format: MODEL_FORMAT,
    version: MODEL_FORMAT_VERSION,
    config: weights.config,
    tensors: table,
    sha256: { 'weights.bin': sha256Hex(bin), 'tokenizer.json': sha256Hex(tok) },
    ...(meta ? { meta } : {}),
  };
  return {
    'model.json': new TextEncoder().encode(JSON.stringify(model, null, 1)),
    'weights.bin': bin,
    'tokenizer.json': tok,
  };
}

export interface LoadedModel {
  weights: ModelWeights;
  tokenizer: Tokenizer;
  meta: Record<string, unknown>;
}

/** Parse and verify model files (checksums, shapes, tokenizer size). Throws naming the file and the problem. */
export function deserializeModel(files: Record<string, Uint8Array>): LoadedModel {
  for (const f of MODEL_FILES) if (!(files[f] instanceof Uint8Array)) throw new Error(`loadModel: file "${f}" is missing`);
  let model: ModelFileJson;
  try {
    model = JSON.parse(new TextDecoder().decode(files['model.json'])) as ModelFileJson;
  } catch (e) {
    throw new Error(`loadModel: model.json is not valid JSON (${(e as Error).message})`);
  }
  if (model.format !== MODEL_FORMAT)
    throw new Error(`loadModel: model.json format must be "${MODEL_FORMAT}", got ${JSON.stringify(model.format)}`);
  if (model.version !== MODEL_FORMAT_VERSION)
    throw new Error(`loadModel: model.json version ${model.version} is not supported (this build reads ${MODEL_FORMAT_VERSION})`);
  for (const f of ['weights.bin', 'tokenizer.json'] as const) {
    const got = sha256Hex(files[f]);
    if (got !== model.sha256?.[f])
      throw new Error(`loadModel: ${f} is corrupted (SHA-256 ${got}, model.json expects ${model.sha256?.[f]})`);
  }
  const tokenizer = Tokenizer.fromJSON(JSON.parse(new TextDecoder().decode(files['tokenizer.json'])));
  if (tokenizer.size !== model.config.vocabSize)
    throw new Error(`loadModel: tokenizer has ${tokenizer.size} tokens, config.vocabSize is ${model.config.vocabSize}`);
  const flat = fromLittleEndianBytes(files['weights.bin']);
  const tensors: Record<string, Float32Array> = {};
  const byName = new Map(model.tensors.map((t) => [t.name, t]));
  for (const spec of weightSpecs(model.config)) {
    const t = byName.get(spec.name);
    const n = spec.shape.reduce((a, b) => a * b, 1);
    if (!t || t.length !== n || t.offset + n > flat.length)
      throw new Error(`loadModel: tensor "${spec.name}" missing or of wrong size in weights.bin`);
    tensors[spec.name] = flat.slice(t.offset, t.offset + n);
  }
  return { weights: { config: model.config, tensors }, tokenizer, meta: model.meta ?? {} };
}

function toLittleEndianBytes(a: Float32Array): Uint8Array {
  const out = new Uint8Array(a.length * 4);
  const dv = new DataView(out.buffer);
  for (let i = 0; i < a.length; i++) dv.setFloat32(i * 4, a[i], true);
  return out;
}

function fromLittleEndianBytes(b: Uint8Array): Float32Array {
  if (b.length % 4 !== 0) throw new Error(`loadModel: weights.bin has ${b.length} bytes, not a multiple of 4`);
  const out = new Float32Array(b.length / 4);
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  for (let i = 0; i < out.length; i++) out[i] = dv.getFloat32(i * 4, true);
  return out;
}
