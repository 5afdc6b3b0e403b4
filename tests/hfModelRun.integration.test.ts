/**
 * A pretrained Hugging Face model trained as a lab run, end to end through the real CLI and the real trainer (in the
 * training worker, as the app runs it): a tiny Qwen3 written by Transformers' own Qwen3ForCausalLM.save_pretrained
 * (tests/support/qwen3Native.ts, the `llm-qwen3` peer venv; bfloat16), LoRA r=4, SAMPO on Sokoban, 10 steps trained
 * on tfjs-wasm and sampled from the model's ONNX export on onnxruntime (what `train --model hf:` runs on the CPU).
 *
 *   - the metrics of every step are finite; the adapters change while every base weight stays the folder's, bit for bit;
 *   - the run record carries the model (config.json, SHA-256 of the weight and tokenizer files, LoRA settings), its
 *     checkpoints only the adapters; `runs`, `show`, the detector (`check`) and Compare's calls treat it like any run;
 *   - its bundle carries the hashes and reproduces bit for bit from a copy of the base folder (--model-folder), and a
 *     copy whose tokenizer file differs is refused naming that file;
 *   - stopped after step 5 and resumed (`arlarena resume`), it ends with the stream of the straight 10-step run;
 *   - bad folders are refused before any run exists, with the reason: no config.json, an unsupported architecture,
 *     a truncated safetensors file, a tokenizer that does not fit the vocabulary or has no chat template — by train
 *     and by the app's sessions.start alike, in the same sentence; and a run that cannot fit in memory is refused by
 *     the same preflight the CLI runs.
 */
import { cp, mkdtemp, readFile, readdir, rm, truncate, writeFile, stat } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import train from '../src/main/cli/commands/train';
import runs from '../src/main/cli/commands/runs';
import show from '../src/main/cli/commands/show';
import check from '../src/main/cli/commands/check';
import exportCmd from '../src/main/cli/commands/export';
import reproduce from '../src/main/cli/commands/reproduce';
import evalCmd from '../src/main/cli/commands/eval';
import resume from '../src/main/cli/commands/resume';
import * as tf from '@tensorflow/tfjs';
import { RunStore } from '../src/main/store/runStore';
import { runJob } from '../src/main/sessions/jobRunner';
import { trainingJob } from '../src/main/sessions/jobs/training';
import { hfRunMemory, onnxRolloutBytes, preflightHfRun } from '../src/main/compute/models/hfRunModel';
import { llmParamCount } from '../src/core/llm/config';
import { MEMORY_HEADROOM } from '../src/core/llm/memoryFit';
import { inspectHfFolder, loadHfFolder } from '../src/main/compute/models/hfFolder';
import { verifyBundle } from '../src/main/bundles/importBundle';
import { decodeTensors, type NamedTensors } from '../src/core/training/tensorio';
import type { TrainingJob } from '../src/main/sessions/job';
import { HfCausalLM } from '../src/core/llm/causalLm';
import { LlmPolicy } from '../src/core/llm/policy';
import { LlmPromptCodec } from '../src/core/llm/trainerPolicy';
import { Rng } from '../src/core/util/rng';
import { resolveConfig } from '../src/core/config/index';
import type { MetricRecord } from '../src/shared/metrics';
import { qwen3NativeCheckpoint } from './support/qwen3Native';
import { runTraining } from '../src/core/training/trainer';
import type { TrainerDeps } from '../src/core/training/types';
import type { RolloutEngine } from '../src/core/agent/engine';
import { createLlmRolloutEngine } from '../src/main/compute/llmRollout';
import { deps as tinyDeps, deterministicPart, recorder, useWasm } from './tinyTrainer';
import { createRouter } from '../src/main/api/router';
import { createLab } from '../src/main/app/lab';
import { createRunsHandlers } from '../src/main/api/handlers/runs';
import { syntheticJobs } from '../src/main/testing/jobs/index';
import { writeSyntheticRun } from '../src/main/store/synthetic';
import { testCliContext } from '../src/main/testing/testContext';
import { openHandlerTestLab } from '../src/main/testing/testLab';
import { createSessionsHandlers } from '../src/main/api/handlers/sessions';

/** A small SAMPO run: 2 tasks × 2 rollouts, 2 turns, 24 response tokens, validation and checkpoints every 5 steps. */
const SETS = [
  'compute.backend=wasm',
  'rollout.tasksPerStep=2',
  'rollout.groupSize=2',
  'env.maxSteps=2',
  'rollout.maxResponseTokens=24',
  'optim.miniBatchRows=8',
  'training.validateEvery=5',
  'training.valEpisodes=2',
  'training.checkpointEvery=5',
  'training.sampleTrajectories=1',
].flatMap((s) => ['--set', s]);
const LORA = 'r=4,alpha=8,dropout=0.05,targets=q_proj+v_proj+down_proj';

let qwen3: string;
let work: string;

beforeAll(async () => {
  qwen3 = qwen3NativeCheckpoint();
  work = await mkdtemp(join(tmpdir(), 'arl-hfrun-'));
}, 300_000);
afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

async function trainRun(dataDir: string, extra: string[] = []): Promise<string> {
  const c = testCliContext(dataDir);
  const code = await train.run(
    ['--model', `hf:${qwen3}`, '--lora', LORA, '--steps', '10', '--seed', '7', '--json', ...SETS, ...extra],
    c.ctx,
  );
  const out = JSON.parse(c.out()) as { runId: string; status: string; step: number; error: string | null };
  expect(out.error, c.err()).toBeNull();
  expect(code).toBe(0);
  expect(out).toMatchObject({ status: 'completed', step: 10 });
  return out.runId;
}

/** A stream without its wall-clock values, NaN kept comparable. */
function deterministic(ms: readonly MetricRecord[]): string {
  return JSON.stringify(
    ms.map((m) => ({
      step: m.step,
      values: Object.entries(m.values)
        .filter(([k]) => !k.startsWith('perf/') || k === 'perf/total_tokens')
        .sort(),
    })),
    (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v),
  );
}

async function metricsOf(dataDir: string, runId: string): Promise<MetricRecord[]> {
  const store = await RunStore.open(dataDir);
  try {
    return await store.readMetrics(runId);
  } finally {
    await store.close();
  }
}

/** Metrics a SAMPO run fills at every step (the loss, KL to the base, the KV-cache sampler's mismatch, …): finite. */
const FINITE_KEYS = [
  'actor/pg_loss',
  'actor/grad_norm',
  'actor/entropy',
  'actor/pg_clipfrac',
  'actor/ppo_kl',
  'actor/kl_loss',
  'actor/lr',
  'batch/rows',
  'critic/advantages_std',
  'episode/reward_mean',
  'episode/success_rate',
  'episode/valid_format_ratio',
  'response_length/mean',
  'mismatch/logprob_abs_max',
  'perf/step_s',
  'perf/total_tokens',
];

const sha256Of = async (file: string) =>
  createHash('sha256')
    .update(await readFile(file))
    .digest('hex');

/** A checkpoint's policy.bin: the tensors training changed. */
async function checkpointPolicy(dataDir: string, runId: string, step: number): Promise<NamedTensors> {
  const store = await RunStore.open(dataDir);
  try {
    const dir = join(store.runDir(runId), 'checkpoints');
    const name = (await readdir(dir)).find((d) => Number(d.match(/\d+/)?.[0]) === step);
    expect(name, `checkpoint of step ${step} in ${(await readdir(dir)).join(', ')}`).toBeDefined();
    return decodeTensors(new Uint8Array(await readFile(join(dir, name!, 'policy.bin'))));
  } finally {
    await store.close();
  }
}

const maxAbs = (a: Float32Array) => a.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
const maxAbsDiff = (a: Float32Array, b: Float32Array) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i])), 0);

describe('a Hugging Face checkpoint trained as a lab run (tiny Qwen3, LoRA, SAMPO, tfjs-wasm + onnxruntime rollouts)', () => {
  let dataA: string;
  let runA: string;

  it('trains 10 steps with finite metrics, and changes the adapters', async () => {
    dataA = join(work, 'a');
    const t0 = performance.now();
    runA = await trainRun(dataA);
    const seconds = (performance.now() - t0) / 1000;
    const a = await metricsOf(dataA, runA);
    const steps = a.filter((m) => m.step > 0);
    console.log(
      `tiny Qwen3 LoRA SAMPO: 10 steps in ${seconds.toFixed(1)} s (mean perf/step_s ${(steps.reduce((s, m) => s + m.values['perf/step_s'], 0) / steps.length).toFixed(2)})`,
    );
    expect(steps.map((m) => m.step)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    for (const m of steps) {
      for (const k of FINITE_KEYS) expect(Number.isFinite(m.values[k]), `${k} at step ${m.step}: ${m.values[k]}`).toBe(true);
      expect(m.values['batch/rows']).toBeGreaterThan(0);
      expect(m.values['actor/grad_norm']).toBeGreaterThan(0);
    }

    // Checkpoints hold the adapters only (PEFT names); B starts at zero, so a nonzero B is training's doing, and
    // steps 5 → 10 moved both A and B.
    const at5 = await checkpointPolicy(dataA, runA, 5);
    const at10 = await checkpointPolicy(dataA, runA, 10);
    const names = Object.keys(at10).sort();
    expect(names).toHaveLength(2 * 2 * 3); // 2 layers × {q_proj, v_proj, down_proj} × {A, B}
    for (const n of names)
      expect(n).toMatch(/^base_model\.model\.model\.layers\.\d\.(self_attn\.[qv]_proj|mlp\.down_proj)\.lora_[AB]\.weight$/);
    for (const n of names) {
      if (n.includes('lora_B')) expect(maxAbs(at10[n].data), n).toBeGreaterThan(0);
      expect(maxAbsDiff(at10[n].data, at5[n].data), n).toBeGreaterThan(0);
    }
  }, 600_000);

  it('records the model and its hashes, checkpoints only the adapters, and shows in runs, show and check', async () => {
    const store = await RunStore.open(dataA);
    let ckFiles: string[];
    try {
      const rec = (await store.getRun(runA))!;
      expect(rec.model).toBeDefined();
      const m = rec.model!;
      expect(m.architecture).toBe('Qwen3ForCausalLM');
      expect(rec.backend.rollout).toBe('onnxruntime-cpu-llm-kvcache');
      expect(m.path).toBe(qwen3);
      expect(m.lora).toEqual({ rank: 4, alpha: 8, dropout: 0.05, targets: ['q_proj', 'v_proj', 'down_proj'] });
      expect(Object.keys(m.weights)).toEqual(['model.safetensors']);
      expect(m.weights['model.safetensors']).toBe(await sha256Of(join(qwen3, 'model.safetensors')));
      expect(m.tokenizer['tokenizer.json']).toBe(await sha256Of(join(qwen3, 'tokenizer.json')));
      expect(m.tokenizer['tokenizer_config.json']).toBe(await sha256Of(join(qwen3, 'tokenizer_config.json')));
      expect(m.config.architectures).toEqual(['Qwen3ForCausalLM']);
      expect(m.config.transformers_version).toBe('4.51.3');
      expect(m.trainableParams).toBeLessThan(m.params / 5);
      const steps = await store.filesOf(runA).checkpointSteps();
      expect(steps).toEqual(expect.arrayContaining([5, 10]));
      const dir = join(store.runDir(runA), 'checkpoints');
      const last = (await readdir(dir)).sort().pop()!;
      ckFiles = await readdir(join(dir, last));
      // Only adapters: policy.bin is about 4 bytes per trained parameter, far below the base model's weights.
      const policyBytes = (await stat(join(dir, last, 'policy.bin'))).size;
      expect(policyBytes).toBeLessThan(4 * m.trainableParams + 16_384);
      expect(policyBytes).toBeLessThan((await stat(join(qwen3, 'model.safetensors'))).size / 5);
    } finally {
      await store.close();
    }
    expect(ckFiles).not.toContain('tokenizer.json');

    const r = testCliContext(dataA);
    expect(await runs.run(['--json'], r.ctx)).toBe(0);
    expect(r.out()).toContain(runA);
    const s = testCliContext(dataA);
    expect(await show.run([runA], s.ctx)).toBe(0);
    expect(s.out()).toMatch(/model\s+Qwen3ForCausalLM from .*LoRA r=4 alpha=8/);
    expect(s.out()).toContain(`model.safetensors  sha256 ${(await sha256Of(join(qwen3, 'model.safetensors'))).slice(0, 16)}`);
    expect(s.out()).toContain('tokenizer.json  sha256');
    const c = testCliContext(dataA);
    // 0: no critical alert, 3: one at least — either way the detector read the run.
    expect([0, 3]).toContain(await check.run([runA, '--json'], c.ctx));
    const report = JSON.parse(c.out()) as { runId: string; steps: number; coverage: Array<{ rule: string; applicable: boolean }> };
    expect(report.runId).toBe(runA);
    expect(report.steps).toBeGreaterThanOrEqual(10);
    // The rules that read the trainer's keys (validity, entropy, clip fraction, mismatch, …) all apply to it.
    expect(report.coverage.filter((r) => !r.applicable)).toEqual([]);
  }, 120_000);

  it("is compared like any run: Compare's calls on it and a lab run, through the router with outputs checked against the contract", async () => {
    const services = createLab({
      dataDir: dataA,
      insideElectron: false,
      computeInfo: async () => ({ training: 'wasm', rollout: 'tfjs', detail: 'test', available: ['wasm'] }),
      sessions: syntheticJobs(),
    });
    try {
      const { store } = await services.lab();
      const lab = await writeSyntheticRun(store, { steps: 10, seed: 1, shape: 'calm', name: 'a lab run' });
      const router = createRouter(createRunsHandlers(services) as never, {
        validateOutput: true,
        onInternalError: (m, e) => console.error(m, e),
      });
      const call = async (method: string, input: unknown): Promise<any> =>
        router.call(method, input, { transport: 'browser', publishDownload: null });
      const runIds = [runA, lab.id];
      const many = await call('runs.getMany', { runIds });
      expect(many.error).toBeUndefined();
      expect(many.value.runs.map((r: { id: string }) => r.id)).toEqual(runIds);
      expect(many.value.runs[0].model).toMatchObject({ architecture: 'Qwen3ForCausalLM', lora: { rank: 4 } });
      expect(many.value.runs[0].config.model.source).toBe(`hf:${qwen3}`);
      const series = await call('runs.metrics', { runIds, keys: ['episode/reward_mean', 'actor/entropy'] });
      expect(series.error).toBeUndefined();
      for (const key of ['episode/reward_mean', 'actor/entropy']) {
        const hf = series.value.find((x: { runId: string; key: string }) => x.runId === runA && x.key === key);
        expect(hf, key).toBeDefined();
        expect(hf.steps.length, key).toBeGreaterThanOrEqual(10);
        expect(
          series.value.some((x: { runId: string; key: string }) => x.runId === lab.id && x.key === key),
          key,
        ).toBe(true);
      }
      const axes = await call('runs.axisKeys', { runIds });
      expect(axes.error).toBeUndefined();
      const keys = await call('runs.metricKeys', { runId: runA });
      expect(keys.value).toEqual(expect.arrayContaining(['mismatch/logprob_abs_max', 'episode/valid_format_ratio']));
    } finally {
      await services.dispose();
    }
  }, 120_000);

  it('exports the trained model as a Hugging Face folder (merged, and the PEFT adapters) and evaluates its checkpoint', async () => {
    const out = join(work, 'hf-export');
    const e = testCliContext(dataA);
    expect(await exportCmd.run([runA, '--format', 'hf', '--out', out, '--json'], e.ctx), e.err()).toBe(0);
    const rep = JSON.parse(e.out()) as { step: number; model: string; adapter: string; base: string };
    expect(rep).toMatchObject({ step: 10, model: join(out, 'model'), adapter: join(out, 'adapter'), base: qwen3 });
    const adapterConfig = JSON.parse(await readFile(join(out, 'adapter', 'adapter_config.json'), 'utf8')) as Record<string, unknown>;
    expect(adapterConfig).toMatchObject({ peft_type: 'LORA', r: 4, lora_alpha: 8, target_modules: ['q_proj', 'v_proj', 'down_proj'] });
    // The merged folder loads as any checkpoint; each target is the base weight plus (8/4)·B·A of the step-10
    // checkpoint's adapters, every other tensor the base's.
    const merged = (await loadHfFolder(join(out, 'model'))).tensors;
    const base = (await loadHfFolder(qwen3)).tensors;
    const ad = await checkpointPolicy(dataA, runA, 10);
    let targets = 0;
    for (const [name, w] of Object.entries(base)) {
      const module = name.replace(/\.weight$/, '');
      const A = ad[`base_model.model.${module}.lora_A.weight`];
      const B = ad[`base_model.model.${module}.lora_B.weight`];
      if (!A) {
        expect(maxAbsDiff(merged[name], w), name).toBe(0);
        continue;
      }
      targets++;
      const [r, inDim] = A.shape;
      const want = Float32Array.from(w, (x, j) => {
        const o = Math.floor(j / inDim);
        const i = j % inDim;
        let sum = 0;
        for (let k = 0; k < r; k++) sum += B.data[o * r + k] * A.data[k * inDim + i];
        return x + 2 * sum;
      });
      expect(maxAbsDiff(merged[name], want), name).toBeLessThan(1e-6);
      expect(maxAbsDiff(merged[name], w), `${name} moved`).toBeGreaterThan(0);
    }
    expect(targets).toBe(6);
    // eval rebuilds the same policy (base + the checkpoint's adapters) and samples held-out tasks through the template.
    const ev = testCliContext(dataA);
    expect(await evalCmd.run([runA, '--episodes', '3', '--json'], ev.ctx), ev.err()).toBe(0);
    expect(JSON.parse(ev.out())).toMatchObject({ runId: runA, step: 10, episodes: 3, policy: { episodes: 3, success: { n: 3 } } });
    // A lab run has nothing to export this way, and says so.
    const lab = testCliContext(dataA);
    const store = await RunStore.open(dataA);
    let labId: string;
    try {
      labId = (await store.createRun({ preset: 'sampo', env: 'sokoban', seed: 1, config: {}, totalSteps: 1, status: 'completed' })).id;
      await store.saveCheckpoint(labId, { step: 1, files: {}, meta: {} });
    } finally {
      await store.close();
    }
    expect(await exportCmd.run([labId, '--format', 'hf'], lab.ctx)).toBe(1);
    expect(lab.err()).toMatch(/trained the lab's own model, not a Hugging Face checkpoint/);
  }, 120_000);

  it('bundles the hashes and the adapters, reproduces bit for bit from a copy of the base folder, and refuses a folder whose tokenizer differs', async () => {
    const bundle = join(work, 'run.arlarena.zip');
    const e = testCliContext(dataA);
    expect(await exportCmd.run([runA, '--out', bundle, '--json'], e.ctx)).toBe(0);
    const { record, files } = verifyBundle(new Uint8Array(await readFile(bundle)));
    expect(record.model?.weights['model.safetensors']).toBe(await sha256Of(join(qwen3, 'model.safetensors')));
    expect(record.model?.tokenizer['tokenizer.json']).toBe(await sha256Of(join(qwen3, 'tokenizer.json')));
    // The bundle carries the adapters (the last checkpoint), never the base weights.
    const bundled = Object.keys(files);
    expect(bundled.some((f) => f.endsWith('policy.bin'))).toBe(true);
    expect(bundled.some((f) => f.endsWith('.safetensors'))).toBe(false);

    const copy = join(work, 'qwen3-copy');
    await cp(qwen3, copy, { recursive: true });
    const dataR = join(work, 'r');
    const r = testCliContext(dataR);
    const code = await reproduce.run([bundle, '--model-folder', copy, '--json'], r.ctx);
    const rep = JSON.parse(r.out()) as { verdict: string; stepsCompared: number; error: string | null };
    expect(rep.error, r.err()).toBeNull();
    expect(code).toBe(0);
    expect(rep).toMatchObject({ verdict: 'bit-identical', stepsCompared: 11 });

    const changed = join(work, 'qwen3-changed');
    await cp(qwen3, changed, { recursive: true });
    const tc = join(changed, 'tokenizer_config.json');
    await writeFile(tc, `${await readFile(tc, 'utf8')}\n`);
    const x = testCliContext(join(work, 'x'));
    expect(await reproduce.run([bundle, '--model-folder', changed], x.ctx)).toBe(1);
    expect(x.err()).toMatch(/tokenizer_config\.json: recorded sha256 [0-9a-f]{64}, found [0-9a-f]{64}/);
  }, 600_000);

  it('keeps every base weight bit for bit while training; stopped after step 5 and resumed, ends with the stream of the straight run', async () => {
    const dataS = join(work, 's');
    const { config, issues } = resolveConfig('sampo', 'sokoban', {
      'model.source': `hf:${qwen3}`,
      'model.maxSeqLen': 512,
      'model.lora.rank': 4,
      'model.lora.alpha': 8,
      'model.lora.dropout': 0.05,
      'model.lora.targets': 'q_proj+v_proj+down_proj',
      // What `train --model hf:` sets (rollouts stay on the default engine, onnxruntime).
      'compute.logProbEngine': 'trainer',
      'compute.refLogProbEngine': 'trainer',
      'compute.workers': 1,
      'warmStart.source': 'none',
      'training.steps': 10,
      seed: 7,
      ...Object.fromEntries(SETS.filter((_, i) => i % 2 === 1).map((s) => s.split('='))),
    });
    expect(issues).toEqual([]);
    // This half trains in this process, so the live tfjs variables can be read when the step-5 checkpoint is
    // written: every base weight must still be the folder's (what the trainer loaded), the adapters not all zero.
    const base = (await loadHfFolder(qwen3)).tensors;
    const seen = { base: new Set<string>(), adapters: new Set<string>(), maxDelta: 0, maxB: 0, checkpoints: 0 };
    const watched: TrainingJob = {
      run: (input, hooks, resumeFrom) =>
        trainingJob.run(
          input,
          {
            ...hooks,
            onCheckpoint: async (c) => {
              seen.checkpoints++;
              for (const [name, v] of Object.entries(tf.engine().registeredVariables)) {
                const m = name.match(/^policy#\d+\/(.+)$/);
                if (!m) continue;
                const data = v.dataSync() as Float32Array;
                if (m[1].includes('.lora_')) {
                  seen.adapters.add(m[1]);
                  if (m[1].includes('lora_B')) seen.maxB = Math.max(seen.maxB, maxAbs(data));
                } else {
                  expect(base[m[1]], m[1]).toBeDefined();
                  seen.base.add(m[1]);
                  seen.maxDelta = Math.max(seen.maxDelta, maxAbsDiff(data, base[m[1]]));
                }
              }
              await hooks.onCheckpoint(c);
            },
          },
          resumeFrom,
        ),
    };
    const store = await RunStore.open(dataS);
    let id: string;
    try {
      const rec = await store.createRun({
        preset: 'sampo',
        env: 'sokoban',
        seed: 7,
        config: config as unknown as Record<string, unknown>,
        totalSteps: 10,
        status: 'running',
      });
      id = rec.id;
      const res = await runJob({
        start: { type: 'start', runId: id, runDir: store.runDir(id), dataDir: dataS, config: rec.config, seed: 7, resume: false },
        job: watched,
        stopAfterStep: 5,
        post: (m) => {
          if (m.type === 'metrics') void store.noteMetrics(id, m.records, { detected: true });
        },
      });
      expect(res).toMatchObject({ type: 'done', status: 'stopped', step: 5 });
      await store.updateRun(id, { status: 'stopped', step: 5 });
    } finally {
      await store.close();
    }
    // At every checkpoint (the periodic one at step 5, and the stop's), every tensor of the folder (tied head: no
    // lm_head) was live and unchanged, beside the 12 adapters with B trained away from zero.
    expect(seen.checkpoints).toBeGreaterThanOrEqual(1);
    expect([...seen.base].sort()).toEqual(Object.keys(base).sort());
    expect(seen.maxDelta).toBe(0);
    expect(seen.adapters.size).toBe(12);
    expect(seen.maxB).toBeGreaterThan(0);

    const r = testCliContext(dataS);
    expect(await resume.run([id, '--json'], r.ctx)).toBe(0);
    const resumed = await metricsOf(dataS, id);
    expect(resumed.map((m) => m.step)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(deterministic(resumed)).toBe(deterministic(await metricsOf(dataA, runA)));
  }, 600_000);
});

describe('onnxruntime rollouts of an hf run (compute.rolloutEngine=onnxruntime)', () => {
  it('samples from the ONNX export, re-made from the policy after every update; the same seed gives the same stream', async () => {
    await useWasm();
    const { config, issues } = resolveConfig('sampo', 'sokoban', {
      'model.source': `hf:${qwen3}`,
      'model.maxSeqLen': 512,
      'model.lora.rank': 4,
      'model.lora.alpha': 8,
      'model.lora.targets': 'q_proj+v_proj+down_proj',
      'compute.rolloutEngine': 'onnxruntime',
      'compute.logProbEngine': 'trainer',
      'compute.refLogProbEngine': 'trainer',
      'compute.workers': 1,
      'warmStart.source': 'none',
      'training.steps': 3,
      'training.validateEvery': 0,
      'training.checkpointEvery': 0,
      seed: 7,
      ...Object.fromEntries(
        SETS.filter((_, i) => i % 2 === 1)
          .map((s) => s.split('='))
          .filter(([k]) => !k.startsWith('training.') && k !== 'compute.backend'),
      ),
    });
    expect(issues).toEqual([]);
    const once = async () => {
      const engines: string[] = [];
      let syncs = 0;
      const d: TrainerDeps = {
        ...tinyDeps(),
        loadHfModel: (path) => loadHfFolder(path),
        // The production factory, with its setWeights (the re-export) counted.
        createLlmRolloutEngine: async (policy) => {
          const { engine, fallback } = await createLlmRolloutEngine(policy, { engine: 'onnxruntime' });
          expect(fallback).toBeUndefined();
          engines.push(engine.name);
          const counted: RolloutEngine = {
            name: engine.name,
            setWeights: async (w) => {
              syncs++;
              await engine.setWeights(w);
            },
            generate: (prompts, opts, rng) => engine.generate(prompts, opts, rng),
            logProbs: (rows, t) => engine.logProbs(rows, t),
            dispose: () => engine.dispose(),
          };
          return { engine: counted };
        },
      };
      const { hooks, rec } = recorder();
      const res = await runTraining(config!, d, hooks);
      expect(res).toMatchObject({ status: 'completed', step: 3 });
      return { engines, syncs, metrics: rec.metrics };
    };
    const a = await once();
    expect(a.engines).toEqual(['onnxruntime-cpu-llm-kvcache']);
    expect(a.syncs).toBe(3);
    const steps = a.metrics.filter((m) => m.step > 0);
    expect(steps).toHaveLength(3);
    for (const m of steps) {
      for (const k of FINITE_KEYS) expect(Number.isFinite(m.values[k]), `${k} at step ${m.step}`).toBe(true);
      // The sampler is onnxruntime, the trainer tfjs: a float32 mismatch, measured, small.
      expect(m.values['mismatch/logprob_abs_max']).toBeLessThan(1e-4);
    }
    const b = await once();
    expect(deterministicPart(b.metrics)).toEqual(deterministicPart(a.metrics));
  }, 600_000);
});

describe('bad model folders are refused before a run exists', () => {
  async function broken(name: string, edit: (dir: string) => Promise<void>): Promise<string> {
    const dir = join(work, name);
    await cp(qwen3, dir, { recursive: true });
    await edit(dir);
    return dir;
  }

  /** Refused by `train --model hf:` and by the app's sessions.start (browser mode) in the same sentence; no run. */
  async function refused(dir: string, reason: RegExp): Promise<void> {
    const dataDir = join(work, `data-${dir.split('/').pop()}`);
    const c = testCliContext(dataDir);
    const e = await train.run(['--model', `hf:${dir}`, '--lora', 'r=4', '--steps', '2', ...SETS], c.ctx).then(
      () => null,
      (x: unknown) => x as Error,
    );
    expect(e?.message).toMatch(reason);
    // Nothing in the store: not even its folder was made.
    await expect(stat(dataDir)).rejects.toThrow(/ENOENT/);

    const lab = await openHandlerTestLab('arl-hfrun-api-', (s) => ({ ...createSessionsHandlers(s), ...createRunsHandlers(s) }), {
      transport: 'browser',
      publishDownload: null,
      importRoots: [work],
    });
    try {
      const r = await lab.call('sessions.start', {
        preset: 'sampo',
        env: 'sokoban',
        overrides: {
          ...Object.fromEntries(SETS.filter((_, i) => i % 2 === 1).map((s) => s.split('='))),
          'training.steps': 2,
          'model.source': `hf:${dir}`,
          'model.lora.rank': 4,
          'model.maxSeqLen': 512,
          'compute.logProbEngine': 'trainer',
          'compute.refLogProbEngine': 'trainer',
          'compute.workers': 1,
          'warmStart.source': 'none',
        },
      });
      expect(r.error).toEqual({ code: 'VALIDATION', field: 'overrides.model.source', message: e?.message });
      expect((await lab.call('runs.list', {})).value).toEqual([]);
    } finally {
      await lab.close();
    }
  }

  it('a folder without config.json', async () => {
    await refused(await broken('no-config', (d) => rm(join(d, 'config.json'))), /has no config\.json/);
  });

  it('an architecture the lab does not implement', async () => {
    const dir = await broken('gpt2', async (d) => {
      const cfg = JSON.parse(await readFile(join(d, 'config.json'), 'utf8'));
      await writeFile(join(d, 'config.json'), JSON.stringify({ ...cfg, architectures: ['GPT2LMHeadModel'] }));
    });
    await refused(dir, /GPT2LMHeadModel/);
  });

  it('a truncated safetensors file', async () => {
    const dir = await broken('truncated', async (d) => {
      const f = join(d, 'model.safetensors');
      await truncate(f, Math.floor((await stat(f)).size / 2));
    });
    await refused(dir, /model\.safetensors.*(truncated|shorter|beyond|end)/i);
  });

  it('a tokenizer that does not fit the vocabulary', async () => {
    const dir = await broken('small-vocab', async (d) => {
      const cfg = JSON.parse(await readFile(join(d, 'config.json'), 'utf8'));
      await writeFile(join(d, 'config.json'), JSON.stringify({ ...cfg, vocab_size: 64 }));
    });
    await refused(dir, /vocab/i);
  });

  it('a tokenizer without a chat template (a base checkpoint saved without one)', async () => {
    const dir = await broken('no-template', async (d) => {
      const tc = JSON.parse(await readFile(join(d, 'tokenizer_config.json'), 'utf8'));
      delete tc.chat_template;
      await writeFile(join(d, 'tokenizer_config.json'), JSON.stringify(tc));
      await rm(join(d, 'chat_template.jinja'), { force: true });
    });
    await refused(dir, /tokenizer_config\.json has no chat_template .*use a chat \(instruct\) checkpoint or add a template/);
  });

  it('a run that does not fit in memory, through train: the estimate and the fix, nothing in the store', async () => {
    const dataDir = join(work, 'data-too-big');
    const c = testCliContext(dataDir);
    // Every weight trained and 65,536 rows a chunk (1024 tasks × 64 rollouts × 1 turn, one mini-batch, the activation
    // budget raised to let a chunk hold them all): over tfjs-wasm's 4 GiB heap and any machine's memory.
    const big = [
      ['rollout.tasksPerStep', 1024],
      ['rollout.groupSize', 64],
      ['env.maxSteps', 1],
      ['optim.miniBatchRows', 65536],
      ['compute.activationBudgetMB', 1048576],
    ].flatMap(([k, v]) => ['--set', `${k}=${v}`]);
    await expect(train.run(['--model', `hf:${qwen3}`, '--steps', '2', ...SETS, ...big], c.ctx)).rejects.toThrow(
      /Qwen3ForCausalLM from .* does not fit: needs weights .* \+ activations .* GiB, over .* GiB .*; use .*fewer rows per chunk/,
    );
    await expect(stat(dataDir)).rejects.toThrow(/ENOENT/);
  });

  it('a run that does not fit in memory, with the estimate and the fix', async () => {
    const { config } = resolveConfig('sampo', 'sokoban', {
      'model.source': `hf:${qwen3}`,
      'model.maxSeqLen': 512,
      'compute.rolloutEngine': 'tfjs',
      'compute.logProbEngine': 'trainer',
      'compute.refLogProbEngine': 'trainer',
      'warmStart.source': 'none',
    });
    const fits = await preflightHfRun(config!, { totalBytes: 64 * 2 ** 30, backend: 'wasm' });
    expect(fits.memory).toMatch(/^fits/);
    await expect(preflightHfRun(config!, { totalBytes: 2 ** 20, backend: 'wasm' })).rejects.toThrow(/does not fit: needs weights .* GiB/);

    // onnxruntime rollouts add their export (twice the float32 weights, outside the wasm heap) to what the machine
    // must hold: a machine that holds the trainer's estimate but not that too is refused, with the way out.
    const ort = { ...config!, compute: { ...config!.compute, rolloutEngine: 'onnxruntime' as const } };
    const info = await inspectHfFolder(qwen3);
    const trainer = hfRunMemory(info, ort).totalBytes;
    const extra = onnxRolloutBytes(info, ort, 'wasm');
    expect(extra).toBe(8 * llmParamCount(info.config));
    const tight = (trainer + extra / 2) / MEMORY_HEADROOM;
    expect((await preflightHfRun(config!, { totalBytes: tight, backend: 'wasm' })).memory).toMatch(/^fits/);
    await expect(preflightHfRun(ort, { totalBytes: tight, backend: 'wasm' })).rejects.toThrow(
      /with onnxruntime rollouts .* does not fit: .*--set compute\.rolloutEngine=tfjs/,
    );
    expect((await preflightHfRun(ort, { totalBytes: 64 * 2 ** 30, backend: 'wasm' })).memory).toMatch(
      /^fits: .*; with onnxruntime's export/,
    );
    // On a GPU the tfjs engine samples: nothing more to hold.
    expect(onnxRolloutBytes(info, ort, 'tensorflow-gpu')).toBe(0);
  });
});

describe('the chat-templated prompts of a rollout (LlmPromptCodec)', () => {
  it('fits a long turn by dropping the oldest user text, keeping the template around it, and says so', async () => {
    const info = await inspectHfFolder(qwen3);
    const model = HfCausalLM.random(info.config, new Rng(1));
    try {
      const policy = new LlmPolicy(model, info.tokenizer);
      const codec = new LlmPromptCodec(policy);
      const text = Array.from({ length: 80 }, (_, i) => `turn ${i}: push the box left`).join('\n');
      const full = policy.promptIds(text);
      expect(codec.promptIds(text, full.length)).toEqual({ ids: full, truncated: false });
      const max = full.length - 60;
      const cut = codec.promptIds(text, max);
      expect(cut.truncated).toBe(true);
      expect(cut.ids.length).toBeLessThanOrEqual(max);
      expect(cut.ids.length).toBeGreaterThan(max - 8);
      const shown = info.tokenizer.decode(cut.ids);
      expect(shown).toContain('turn 79: push the box left');
      expect(shown).not.toContain('turn 0:');
      expect(shown).toContain(policy.systemPrompt);
      expect(shown.endsWith(info.tokenizer.decode(full.slice(-5)))).toBe(true);
      expect(() => codec.promptIds(text, 10)).toThrow(/the chat template alone takes \d+ tokens, more than the 10 prompt tokens/);
    } finally {
      model.dispose();
    }
  });
});
