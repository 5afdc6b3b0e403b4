/**
 * The warm start of an LLM run: behaviour cloning of a local Hugging Face checkpoint on the environment's expert
 * turns through its chat template (core/llm/warmStart.ts; the paper starts RL from RFT checkpoints whose format
 * validity is already high, spec §3), resumable bit for bit, and written as what `train --model hf:PATH` starts
 * from: `<out>/model`, a float32 Hugging Face folder (with LoRA the adapters folded into the base; the trainer reads
 * only full folders), and with LoRA also `<out>/adapter`, PEFT's adapter folder (PeftModel.from_pretrained).
 *
 * Determinism: everything random is drawn from streams keyed by (seed, purpose, step) — the adapters' initial A,
 * each step's rows (an epoch-wise shuffle of the expert rows) and each step's LoRA dropout masks — so step s does the
 * same thing whether the run got there in one go or resumed; the checkpoint holds the trained variables and AdamW's
 * moments and step count as float32 safetensors, exactly. Same folder + flags + backend ⇒ the same weights.
 *
 * Checkpoints (`<out>/checkpoint/`) are written every `checkpointEvery` steps and at the end, into a fresh folder
 * renamed into place, so a kill leaves the last complete one. Format validity is measured before and after on
 * held-out tasks (heldOutSeeds: never a training task): each task's first prompt, greedy, through the KV cache.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { buildPrompt, createEnv, ENV_CATALOG, heldOutSeeds, parseResponse, trainSeed } from '../../core/envs/index';
import { HfCausalLM } from '../../core/llm/causalLm';
import { LoraAdapters, type LoraSettings } from '../../core/llm/lora';
import { LlmPolicy } from '../../core/llm/policy';
import { parseSafetensorsHeader, safetensorsHeaderLength, toFloat32, writeSafetensors } from '../../core/llm/safetensors';
import { behaviourCloningLoss, llmExpertRows } from '../../core/llm/warmStart';
import { AdamW, type AdamWOptions } from '../../core/training/adamw';
import { Rng, hashSeed } from '../../core/util/rng';
import { loadHfFolder, type HfLoaded } from '../compute/models/hfFolder';
import { saveLoraAdapter, saveMergedModel } from '../compute/models/hfExport';

export class LlmWarmStartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LlmWarmStartError';
  }
}

export interface LlmWarmStartOptions {
  /** The Hugging Face model folder. */
  readonly modelDir: string;
  /** LoRA adapters to train; null trains every weight. */
  readonly lora: LoraSettings | null;
  readonly env: string;
  /** BC steps (AdamW updates) in all; on resume, the run continues up to this many. */
  readonly steps: number;
  /** Expert rows per step. */
  readonly batchRows: number;
  readonly lr: number;
  readonly seed: number;
  /** Prompt history window k. */
  readonly history: number;
  /** Expert episodes the rows come from (training tasks). */
  readonly episodes: number;
  readonly optim: AdamWOptions;
  /** Write a checkpoint every this many steps (and always at the end). */
  readonly checkpointEvery: number;
  /** Held-out tasks the format validity is measured on (0: no measurement). */
  readonly evalTasks: number;
  readonly maxNewTokens: number;
  readonly out: string;
  /** Continue from `<out>/checkpoint`. */
  readonly resume: boolean;
  /** The tfjs backend training runs on (recorded, and a resume must match it). */
  readonly backend: string;
  /** Stop after this many steps of this invocation (tests: a run killed midway; the checkpoint is written first). */
  readonly stopAfter?: number;
  readonly onProgress?: (p: { step: number; steps: number; loss: number }) => void;
  readonly onEvent?: (line: string) => void;
}

/** Greedy answers to held-out first prompts: how many are in the `<think>…</think><action>…</action>` format. */
export interface FormatValidity {
  readonly tasks: number;
  readonly formatValid: number;
  readonly ratio: number;
  /** Answers that ended at the checkpoint's end-of-turn token or `</action>` (not cut at max new tokens). */
  readonly stopped: number;
}

export interface LlmWarmStartResult {
  readonly out: string;
  /** `adapter` (PEFT folder) or `model` (full float32 checkpoint), under `out`; '' until finished. */
  readonly weightsDir: string;
  /** `out/model`: the float32 folder RL starts from (`train --model hf:modelDir`), adapters merged; '' until finished. */
  readonly modelDir: string;
  readonly stepsDone: number;
  readonly resumedFrom: number | null;
  readonly losses: readonly number[];
  readonly before: FormatValidity | null;
  readonly after: FormatValidity | null;
  /** SHA-256 of the trained variables (float32, stable names, sorted): equal runs give equal hashes. */
  readonly weightsSha256: string;
  /** Expert rows used and rows left out because prompt + response exceed the model's context. */
  readonly rows: number;
  readonly rowsTooLong: number;
  readonly finished: boolean;
}

const STATE_VERSION = 1;

/** What must be equal for a checkpoint to continue bit for bit (steps may grow). */
function fingerprint(o: LlmWarmStartOptions, folder: HfLoaded): Record<string, unknown> {
  return {
    weights: folder.weightHashes,
    tokenizer: folder.tokenizerHashes,
    lora: o.lora,
    env: o.env,
    batchRows: o.batchRows,
    lr: o.lr,
    seed: o.seed,
    history: o.history,
    episodes: o.episodes,
    optim: o.optim,
    backend: o.backend,
  };
}

/** Trained variables under stable names: PEFT's adapter names (LoRA) or the checkpoint's tensor names. */
function trainable(policy: LlmPolicy): Array<{ key: string; v: tf.Variable }> {
  if (policy.lora)
    return Object.keys(policy.lora.vars)
      .sort()
      .map((key) => ({ key, v: policy.lora!.vars[key] }));
  return policy.model
    .specs()
    .map((s) => ({ key: s.name, v: policy.model.vars[s.name] }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

function readSafetensors(path: string): Map<string, { shape: number[]; data: Float32Array }> {
  const bytes = new Uint8Array(readFileSync(path));
  const n = safetensorsHeaderLength(bytes.subarray(0, 8), path);
  const h = parseSafetensorsHeader(bytes.subarray(8, 8 + n), bytes.length, path);
  const out = new Map<string, { shape: number[]; data: Float32Array }>();
  for (const t of h.tensors)
    out.set(t.name, { shape: t.shape, data: toFloat32(bytes.slice(h.dataStart + t.begin, h.dataStart + t.end), t.dtype) });
  return out;
}

function hashVariables(vars: ReadonlyArray<{ key: string; v: tf.Variable }>): string {
  const h = createHash('sha256');
  for (const { key, v } of vars) {
    h.update(key);
    const d = v.dataSync() as Float32Array;
    h.update(new Uint8Array(d.buffer, d.byteOffset, d.byteLength));
  }
  return h.digest('hex');
}

/** Step s's rows: positions (s−1)·B … s·B−1 of an endless sequence of epoch-wise shuffles of the rows. */
function batchIndices(step: number, batchRows: number, n: number, seed: number): number[] {
  const orders = new Map<number, number[]>();
  const out: number[] = [];
  for (let j = 0; j < batchRows; j++) {
    const pos = (step - 1) * batchRows + j;
    const epoch = Math.floor(pos / n);
    let order = orders.get(epoch);
    if (!order) {
      order = new Rng(hashSeed(seed, 'llm-bc-order', epoch)).shuffle(Array.from({ length: n }, (_, i) => i));
      orders.set(epoch, order);
    }
    out.push(order[pos % n]);
  }
  return out;
}

async function formatValidity(policy: LlmPolicy, o: LlmWarmStartOptions): Promise<FormatValidity> {
  const k = o.history;
  const prompts = heldOutSeeds(o.evalTasks).map((seed) => {
    const env = createEnv(o.env);
    return policy.promptIds(buildPrompt(env, env.reset(seed), [], k));
  });
  let valid = 0;
  let stopped = 0;
  const engine = policy.engine();
  // A few prompts at a time: the KV cache of a batch grows with its rows.
  for (let i = 0; i < prompts.length; i += 4) {
    const g = await engine.generate(
      prompts.slice(i, i + 4),
      { maxNewTokens: o.maxNewTokens, temperature: 0, topP: 1, topK: 0, stopIds: [] },
      new Rng(hashSeed(o.seed, 'llm-bc-eval', i)),
    );
    for (let j = 0; j < g.tokens.length; j++) {
      if (parseResponse(o.env, policy.decode(g.tokens[j])).formatValid) valid++;
      if (g.finish[j] === 'stop') stopped++;
    }
  }
  return { tasks: prompts.length, formatValid: valid, ratio: prompts.length ? valid / prompts.length : 0, stopped };
}

function writeCheckpoint(dir: string, policy: LlmPolicy, opt: AdamW, state: Record<string, unknown>): void {
  const vars = trainable(policy);
  const stable = new Map(vars.map(({ key, v }) => [v.name, key]));
  const adam = opt.getState();
  const adamList = Object.entries(adam.tensors).map(([name, t]) => {
    const [kind, ...rest] = name.split('/');
    const key = stable.get(rest.join('/'));
    if (!key) throw new Error(`checkpoint: AdamW holds state for an unknown variable ${name}`);
    return { name: `${kind}/${key}`, shape: [...t.shape], data: new Float32Array(t.data) };
  });
  const tmp = `${dir}.partial`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  writeFileSync(
    join(tmp, 'trainable.safetensors'),
    writeSafetensors(vars.map(({ key, v }) => ({ name: key, shape: [...v.shape], data: new Float32Array(v.dataSync()) }))),
  );
  writeFileSync(join(tmp, 'adamw.safetensors'), writeSafetensors(adamList));
  writeFileSync(join(tmp, 'state.json'), `${JSON.stringify({ ...state, adamStep: adam.t }, null, 2)}\n`);
  // Replace the previous checkpoint: at every moment one complete checkpoint (or the .old one) is on disk.
  const old = `${dir}.old`;
  rmSync(old, { recursive: true, force: true });
  if (existsSync(dir)) renameSync(dir, old);
  renameSync(tmp, dir);
  rmSync(old, { recursive: true, force: true });
}

export async function llmWarmStart(o: LlmWarmStartOptions): Promise<LlmWarmStartResult> {
  if (!ENV_CATALOG.some((e) => e.name === o.env))
    throw new LlmWarmStartError(`--env ${o.env}: unknown; known: ${ENV_CATALOG.map((e) => e.name).join(', ')}`);
  const out = resolve(o.out);
  const ckptDir = join(out, 'checkpoint');
  if (!o.resume && (existsSync(ckptDir) || existsSync(join(out, 'warmstart.json'))))
    throw new LlmWarmStartError(`${out} already holds a warm start; pass --resume to continue it, or choose another --out`);
  const say = (s: string): void => o.onEvent?.(s);

  const folder = await loadHfFolder(o.modelDir);
  const model = HfCausalLM.fromTensors(folder.config, folder.tensors, { trainable: o.lora === null });
  const lora = o.lora ? LoraAdapters.create(model, o.lora, new Rng(hashSeed(o.seed, 'llm-bc-lora-init'))) : null;
  const policy = new LlmPolicy(model, folder.tokenizer, lora);
  const vars = trainable(policy);
  const opt = new AdamW(
    vars.map((x) => x.v),
    o.optim,
  );
  try {
    // Expert rows on training tasks; rows longer than the model's context cannot be trained on and are left out.
    const seeds = Array.from({ length: o.episodes }, (_, i) => trainSeed(hashSeed(o.seed, 'llm-bc-tasks', i)));
    const all = llmExpertRows(policy, o.env, seeds, o.history);
    const limit = folder.config.maxPositionEmbeddings;
    const rows = all.filter((r) => r.promptIds.length + r.responseIds.length <= limit);
    if (rows.length === 0)
      throw new LlmWarmStartError(
        `every expert turn of ${o.env} is longer than the model's context (${limit} tokens, config.json max_position_embeddings); use --history 0 or a model with a longer context`,
      );
    if (rows.length < all.length)
      say(`${all.length - rows.length} of ${all.length} expert turns are longer than the model's ${limit} tokens and are left out\n`);

    const fp = fingerprint(o, folder);
    let start = 0;
    let losses: number[] = [];
    let before: FormatValidity | null = null;
    let resumedFrom: number | null = null;
    if (o.resume) {
      const dir = existsSync(ckptDir) ? ckptDir : existsSync(`${ckptDir}.old`) ? `${ckptDir}.old` : null;
      if (!dir) throw new LlmWarmStartError(`--resume: ${out} has no checkpoint to continue (expected ${ckptDir})`);
      const state = JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')) as {
        version: number;
        step: number;
        adamStep: number;
        losses: number[];
        before: FormatValidity | null;
        fingerprint: Record<string, unknown>;
      };
      if (state.version !== STATE_VERSION)
        throw new LlmWarmStartError(`--resume: ${dir} was written by another version of the warm start (${state.version})`);
      for (const k of Object.keys(fp))
        if (JSON.stringify(state.fingerprint[k]) !== JSON.stringify(fp[k]))
          throw new LlmWarmStartError(
            `--resume: the checkpoint was made with another ${k} (${JSON.stringify(state.fingerprint[k])}, now ${JSON.stringify(fp[k])}); resume with the flags and model folder it was started with`,
          );
      const saved = readSafetensors(join(dir, 'trainable.safetensors'));
      for (const { key, v } of vars) {
        const t = saved.get(key);
        if (!t || t.data.length !== v.size) throw new LlmWarmStartError(`--resume: ${dir} lacks ${key} or holds another shape`);
        v.assign(tf.tensor(t.data, v.shape, 'float32'));
      }
      const adam = readSafetensors(join(dir, 'adamw.safetensors'));
      const tensors: Record<string, { shape: number[]; data: Float32Array }> = {};
      for (const { key, v } of vars)
        for (const kind of ['m', 'v']) {
          const t = adam.get(`${kind}/${key}`);
          if (!t) throw new LlmWarmStartError(`--resume: ${dir} lacks AdamW's ${kind} for ${key}`);
          tensors[`${kind}/${v.name}`] = t;
        }
      if (state.step > o.steps)
        throw new LlmWarmStartError(
          `--resume: the checkpoint is at step ${state.step}, past --steps ${o.steps}; give --steps ${state.step} or more`,
        );
      opt.setState({ t: state.adamStep, tensors });
      start = state.step;
      losses = [...state.losses];
      before = state.before;
      resumedFrom = start;
      say(`resuming at step ${start} of ${o.steps}\n`);
    } else if (o.evalTasks > 0) {
      before = await formatValidity(policy, o);
      say(`format validity before: ${before.formatValid}/${before.tasks} held-out tasks\n`);
    }

    const state = (step: number): Record<string, unknown> => ({ version: STATE_VERSION, step, losses, before, fingerprint: fp });
    const tvars = vars.map((x) => x.v);
    let step = start;
    const last = o.stopAfter !== undefined ? Math.min(o.steps, start + o.stopAfter) : o.steps;
    while (step < last) {
      step++;
      const batch = batchIndices(step, o.batchRows, rows.length, o.seed).map((i) => rows[i]);
      policy.setTraining(new Rng(hashSeed(o.seed, 'llm-bc-dropout', step)));
      const { value, grads } = tf.variableGrads(() => behaviourCloningLoss(policy, batch), tvars);
      policy.setTraining(null);
      const loss = (await value.data())[0];
      opt.step(grads, o.lr);
      tf.dispose([value, ...Object.values(grads)]);
      losses.push(loss);
      o.onProgress?.({ step, steps: o.steps, loss });
      if (step % o.checkpointEvery === 0 || step === last) writeCheckpoint(ckptDir, policy, opt, state(step));
    }
    const finished = step >= o.steps;
    const weightsSha256 = hashVariables(vars);
    let after: FormatValidity | null = null;
    let weightsDir = '';
    let modelDir = '';
    if (finished) {
      if (o.evalTasks > 0) {
        after = await formatValidity(policy, o);
        say(`format validity after: ${after.formatValid}/${after.tasks} held-out tasks\n`);
      }
      modelDir = join(out, 'model');
      weightsDir = lora ? join(out, 'adapter') : modelDir;
      if (lora) saveLoraAdapter(weightsDir, lora, folder.dir);
      // The trainer starts from a full folder: with LoRA the adapters are folded into the base weights.
      saveMergedModel(modelDir, folder.dir, folder.rawConfig, model, lora);
      const record = {
        kind: 'llm-warmstart',
        model: {
          dir: folder.dir,
          architecture: folder.config.architecture,
          weightHashes: folder.weightHashes,
          tokenizerHashes: folder.tokenizerHashes,
        },
        lora: o.lora,
        env: o.env,
        history: o.history,
        seed: o.seed,
        steps: o.steps,
        batchRows: o.batchRows,
        lr: o.lr,
        episodes: o.episodes,
        optim: o.optim,
        backend: o.backend,
        rows: rows.length,
        rowsTooLong: all.length - rows.length,
        losses,
        formatValidity: { heldOutTasks: o.evalTasks, before, after },
        weights: lora ? 'adapter' : 'model',
        model_dir: 'model',
        weightsSha256,
      };
      writeFileSync(join(out, 'warmstart.json'), `${JSON.stringify(record, null, 2)}\n`);
    }
    return {
      out,
      weightsDir,
      modelDir,
      stepsDone: step,
      resumedFrom,
      losses,
      before,
      after,
      weightsSha256,
      rows: rows.length,
      rowsTooLong: all.length - rows.length,
      finished,
    };
  } finally {
    opt.dispose();
    lora?.dispose();
    model.dispose();
  }
}
