/**
 * Loading a Hugging Face model folder from the local disk (never a download): config.json, model.safetensors or a
 * sharded model.safetensors.index.json, tokenizer.json + tokenizer_config.json (+ chat_template.jinja when present).
 *
 * Order of checks (each refusal names the file, the problem and the fix, before any weight is read): the folder and
 * config.json exist → config.json parses and describes a supported architecture → the tokenizer loads and fits the
 * vocabulary → every weight file's header parses and the file is long enough for every tensor it promises → the
 * tensor names and shapes match the config. Only then are tensors read, one at a time (a positioned read of its byte
 * range, widened to float32): peak memory is the float32 weights plus one tensor's raw bytes, never a whole file.
 *
 * Each weight file's SHA-256 and the tokenizer's are computed while reading (streamed), for the run record.
 */
import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { parseLlmConfig, type LlmConfig } from '../../../core/llm/config';
import { checkLlmTensors, type LlmTensors } from '../../../core/llm/causalLm';
import {
  parseSafetensorsHeader,
  parseShardIndex,
  safetensorsHeaderLength,
  toFloat32,
  type SafetensorsHeader,
} from '../../../core/llm/safetensors';
import { checkTokenizerFitsVocab, HfTokenizer } from '../../../core/llm/tokenizer';
import { loraSettingsFromPeft, type LoraSettings } from '../../../core/llm/lora';

export class HfFolderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HfFolderError';
  }
}

export interface HfFolderInfo {
  dir: string;
  config: LlmConfig;
  /** config.json as read (for the run record). */
  rawConfig: Record<string, unknown>;
  weightFiles: string[];
  tokenizer: HfTokenizer;
  /** sha256 of tokenizer.json, tokenizer_config.json (and chat_template.jinja) by file name. */
  tokenizerHashes: Record<string, string>;
  /** Parsed headers by weight file. */
  headers: Map<string, SafetensorsHeader>;
}

export interface HfLoaded extends HfFolderInfo {
  tensors: LlmTensors;
  /** sha256 of each weight file, by file name. */
  weightHashes: Record<string, string>;
}

async function readJson(path: string, what: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new HfFolderError(`${what}: cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new HfFolderError(`${what}: ${path} is not valid JSON (${(e as Error).message})`);
  }
}

function sha256(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Read and check everything but the tensor data (cheap: headers only). */
export async function inspectHfFolder(dirIn: string): Promise<HfFolderInfo> {
  const dir = resolve(dirIn);
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new HfFolderError(`model folder ${dir} does not exist (give the folder that holds config.json)`);
  const cfgPath = join(dir, 'config.json');
  if (!existsSync(cfgPath)) {
    throw new HfFolderError(
      `${dir} has no config.json — not a Hugging Face model folder (expected config.json, model.safetensors or model.safetensors.index.json, tokenizer.json, tokenizer_config.json)`,
    );
  }
  const rawConfig = (await readJson(cfgPath, 'config.json')) as Record<string, unknown>;
  let config: LlmConfig;
  try {
    config = parseLlmConfig(rawConfig);
  } catch (e) {
    throw new HfFolderError(`${dir}: ${(e as Error).message}`);
  }

  const tjPath = join(dir, 'tokenizer.json');
  if (!existsSync(tjPath))
    throw new HfFolderError(
      `${dir} has no tokenizer.json (the fast-tokenizer file; save the tokenizer with save_pretrained next to the model)`,
    );
  const tcPath = join(dir, 'tokenizer_config.json');
  const tjText = await readFile(tjPath, 'utf8');
  const tcText = existsSync(tcPath) ? await readFile(tcPath, 'utf8') : '{}';
  const jinjaPath = join(dir, 'chat_template.jinja');
  const jinja = existsSync(jinjaPath) ? await readFile(jinjaPath, 'utf8') : null;
  const tokenizerHashes: Record<string, string> = { 'tokenizer.json': sha256(tjText), 'tokenizer_config.json': sha256(tcText) };
  if (jinja !== null) tokenizerHashes['chat_template.jinja'] = sha256(jinja);
  let tokenizer: HfTokenizer;
  try {
    tokenizer = new HfTokenizer(JSON.parse(tjText), JSON.parse(tcText), jinja);
    checkTokenizerFitsVocab(tokenizer, config.vocabSize);
  } catch (e) {
    throw new HfFolderError(`${dir}: ${(e as Error).message}`);
  }

  let weightFiles: string[];
  const indexPath = join(dir, 'model.safetensors.index.json');
  if (existsSync(join(dir, 'model.safetensors'))) weightFiles = ['model.safetensors'];
  else if (existsSync(indexPath)) {
    try {
      weightFiles = [...parseShardIndex(await readJson(indexPath, 'model.safetensors.index.json')).keys()].sort();
    } catch (e) {
      throw new HfFolderError(`${dir}: ${(e as Error).message}`);
    }
    for (const f of weightFiles)
      if (!existsSync(join(dir, f)))
        throw new HfFolderError(`${dir}: model.safetensors.index.json names ${f}, which is not in the folder (copy every shard)`);
  } else if (existsSync(join(dir, 'pytorch_model.bin'))) {
    throw new HfFolderError(
      `${dir} has pytorch_model.bin but no safetensors weights; convert it (model.save_pretrained(dir, safe_serialization=True))`,
    );
  } else {
    throw new HfFolderError(`${dir} has no model.safetensors or model.safetensors.index.json`);
  }

  const headers = new Map<string, SafetensorsHeader>();
  const shapes = new Map<string, number[]>();
  for (const f of weightFiles) {
    const path = join(dir, f);
    const fh = await open(path, 'r');
    try {
      const size = (await fh.stat()).size;
      const first = new Uint8Array(8);
      const r = await fh.read(first, 0, 8, 0);
      const n = safetensorsHeaderLength(first.subarray(0, r.bytesRead), f);
      if (8 + n > size)
        throw new HfFolderError(`${f} is truncated: ${size} bytes, shorter than its own ${n}-byte header; copy the file again`);
      const hb = new Uint8Array(n);
      await fh.read(hb, 0, n, 8);
      const h = parseSafetensorsHeader(hb, size, f);
      headers.set(f, h);
      for (const t of h.tensors) {
        if (shapes.has(t.name)) throw new HfFolderError(`${dir}: tensor "${t.name}" appears in two weight files`);
        shapes.set(t.name, t.shape);
      }
    } catch (e) {
      throw e instanceof HfFolderError ? e : new HfFolderError(`${dir}: ${(e as Error).message}`);
    } finally {
      await fh.close();
    }
  }
  try {
    checkLlmTensors(config, shapes.keys(), (n) => shapes.get(n));
  } catch (e) {
    throw new HfFolderError(`${dir}: ${(e as Error).message}`);
  }
  return { dir, config, rawConfig, weightFiles, tokenizer, tokenizerHashes, headers };
}

/** Inspect, then read every tensor (one positioned read each) into float32, hashing each file as it goes. */
export async function loadHfFolder(
  dirIn: string,
  opts: { onTensor?: (name: string, done: number, total: number) => void } = {},
): Promise<HfLoaded> {
  const info = await inspectHfFolder(dirIn);
  const tensors: LlmTensors = {};
  const weightHashes: Record<string, string> = {};
  const total = [...info.headers.values()].reduce((s, h) => s + h.tensors.length, 0);
  let done = 0;
  for (const f of info.weightFiles) {
    const h = info.headers.get(f)!;
    const fh = await open(join(info.dir, f), 'r');
    const hash = createHash('sha256');
    try {
      // The hash covers the whole file in order: header bytes, then each tensor's bytes (tensors are contiguous in
      // offset order; any gap bytes are hashed too).
      let at = 0;
      const hashUpTo = async (end: number): Promise<void> => {
        while (at < end) {
          const n = Math.min(end - at, 1 << 24);
          const buf = new Uint8Array(n);
          const r = await fh.read(buf, 0, n, at);
          if (r.bytesRead === 0) throw new HfFolderError(`${f} ended early at byte ${at}; copy the file again`);
          hash.update(buf.subarray(0, r.bytesRead));
          at += r.bytesRead;
        }
      };
      await hashUpTo(h.dataStart);
      for (const t of h.tensors) {
        await hashUpTo(h.dataStart + t.begin);
        const bytes = new Uint8Array(t.end - t.begin);
        const r = await fh.read(bytes, 0, bytes.length, h.dataStart + t.begin);
        if (r.bytesRead !== bytes.length) throw new HfFolderError(`${f} is truncated inside tensor "${t.name}"; copy the file again`);
        hash.update(bytes);
        at = h.dataStart + t.end;
        if (t.name === 'lm_head.weight' && info.config.tieWordEmbeddings) continue;
        if (t.name.endsWith('rotary_emb.inv_freq')) continue;
        tensors[t.name] = toFloat32(bytes, t.dtype);
        opts.onTensor?.(t.name, ++done, total);
      }
      await hashUpTo((await fh.stat()).size);
    } finally {
      await fh.close();
    }
    weightHashes[basename(f)] = hash.digest('hex');
  }
  return { ...info, tensors, weightHashes };
}

/** Every tensor of one safetensors file as float32 (small files: adapters). Refuses truncated or corrupt files. */
export async function readSafetensorsFile(path: string): Promise<LlmTensors> {
  const f = basename(path);
  const fh = await open(path, 'r');
  try {
    const size = (await fh.stat()).size;
    const first = new Uint8Array(8);
    const r = await fh.read(first, 0, 8, 0);
    const n = safetensorsHeaderLength(first.subarray(0, r.bytesRead), f);
    if (8 + n > size) throw new HfFolderError(`${f} is truncated: ${size} bytes, shorter than its own ${n}-byte header`);
    const hb = new Uint8Array(n);
    await fh.read(hb, 0, n, 8);
    const h = parseSafetensorsHeader(hb, size, f);
    const out: LlmTensors = {};
    for (const t of h.tensors) {
      const bytes = new Uint8Array(t.end - t.begin);
      await fh.read(bytes, 0, bytes.length, h.dataStart + t.begin);
      out[t.name] = toFloat32(bytes, t.dtype);
    }
    return out;
  } catch (e) {
    throw e instanceof HfFolderError ? e : new HfFolderError(`${path}: ${(e as Error).message}`);
  } finally {
    await fh.close();
  }
}

/** A PEFT LoRA adapter folder (adapter_config.json + adapter_model.safetensors), as PeftModel.save_pretrained writes it. */
export async function loadPeftAdapter(dirIn: string): Promise<{ settings: LoraSettings; tensors: LlmTensors; sha256: string }> {
  const dir = resolve(dirIn);
  const cfgPath = join(dir, 'adapter_config.json');
  const wPath = join(dir, 'adapter_model.safetensors');
  if (!existsSync(cfgPath) || !existsSync(wPath))
    throw new HfFolderError(`${dir} is not a LoRA adapter folder (expected adapter_config.json and adapter_model.safetensors)`);
  let settings: LoraSettings;
  try {
    settings = loraSettingsFromPeft(await readJson(cfgPath, 'adapter_config.json'));
  } catch (e) {
    throw new HfFolderError(`${dir}: ${(e as Error).message}`);
  }
  return { settings, tensors: await readSafetensorsFile(wPath), sha256: sha256(await readFile(wPath)) };
}
