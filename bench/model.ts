/**
 * `npm run bench:model [-- --json] [-- --sizes nano,small] [-- --quick] [-- --profile]`
 * (--profile adds the tfjs-wasm training step's kernel-time breakdown to that row's note.)
 *
 * Training tokens/s (forward + backward + AdamW on (prompt, response) rows, loss on the response) and generation
 * tokens/s (batched sampling, prefill included) for each engine, side by side with PyTorch on the same
 * architecture and sizes:
 *   tfjs-node     native TensorFlow (tfjs-node built by `npm run setup:tensorflow` against PyPI's libtensorflow):
 *                 training and tfjs generation as for tfjs-wasm; its note names libtensorflow's version and threads.
 *                 --tf-env KEY=VALUE (repeatable) adds a second tfjs-node row with those TensorFlow environment
 *                 settings (e.g. TF_DETERMINISTIC_OPS=0, TF_ENABLE_ONEDNN_OPTS=0), alternated with the first
 *   tfjs-node-gpu the same on the GPU build (`setup:tensorflow -- --gpu`); a row saying so where there is no GPU
 *   tfjs-wasm     training (the app's trainer path) and generation with the tfjs KV cache (the fallback engine)
 *   onnxruntime   generation with the KV cache (the app's rollout engine, src/main/compute/ortDecoder.ts), 2 intra-op
 *                 threads; its note gives the original engine (concat-cache, spinning threads) timed alternately
 *   pytorch       Debian python3-torch + OpenBLAS (2 torch threads, OPENBLAS_NUM_THREADS=1), eager, KV cache
 *   tfjs-wasm-dp  training with the rows split across K gradient worker threads (compute.workers = K;
 *                 bench/modelDp.ts), K = 2 … the machine's cores (--workers); its note gives the in-process K = 1
 *                 step timed alternately in the same process and the speed-up over it
 * Each (engine, size) runs in its own process so peak RSS is per row. Workload: vocab 192 (the Sokoban
 * tokenizer), training 16 rows × 128 tokens (16 response tokens), generation 16 prompts × 96 tokens → 32 tokens.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { benchArgs, usageError } from './args';
import type { Scalar } from '@tensorflow/tfjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const SIZES = ['nano', 'small'] as const;
const ENGINES = ['tfjs-node', 'tfjs-node-gpu', 'tfjs-wasm', 'onnxruntime', 'pytorch'] as const;
type Size = (typeof SIZES)[number] | 'base';
type Engine = (typeof ENGINES)[number] | 'tfjs-wasm-dp';

interface Row {
  engine: Engine;
  size: Size;
  params: number | null;
  train_tokens_per_s: number | null;
  gen_tokens_per_s: number | null;
  peak_rss_mb: number | null;
  note?: string;
  /** Gradient worker threads (tfjs-wasm-dp rows). */
  workers?: number;
  /** TensorFlow environment settings of a tfjs-node variant row (--tf-env). */
  tf_env?: string;
}

const WORK = {
  vocab: 192,
  trainRows: 16,
  trainLen: 128,
  respLen: 16,
  genRows: 16,
  promptLen: 96,
  genTokens: 32,
};

function steps(size: Size, quick: boolean): { warmup: number; trainSteps: number; genRepeats: number } {
  if (quick) return { warmup: 1, trainSteps: 1, genRepeats: 1 };
  return size === 'nano' ? { warmup: 2, trainSteps: 6, genRepeats: 3 } : { warmup: 1, trainSteps: 3, genRepeats: 2 };
}

async function runOne(engine: Engine, size: Size, quick: boolean, profile: boolean): Promise<Row> {
  const { resolveModelConfig, initWeights, paramCount } = await import('../src/core/agent');
  const { Rng } = await import('../src/core/util/rng');
  const { DEFAULT_CONFIG } = await import('../src/core/config/index');
  // The GELU arithmetic a new run uses (model.geluForm), so the tfjs rows time what training runs.
  const cfg = resolveModelConfig({ size, geluForm: DEFAULT_CONFIG.model.geluForm }, WORK.vocab);
  const params = paramCount(cfg);
  const s = steps(size, quick);
  const rng = new Rng(1);
  const randIds = (n: number) => Array.from({ length: n }, () => 8 + rng.int(WORK.vocab - 8));
  const prompts = Array.from({ length: WORK.genRows }, () => [1, ...randIds(WORK.promptLen - 1)]);
  const sampling = { maxNewTokens: WORK.genTokens, temperature: 1, topP: 1, topK: 0, stopIds: [] };
  const rss = () => process.resourceUsage().maxRSS / 1024;
  const now = () => performance.now();

  if (engine === 'onnxruntime') {
    // The app's engine (split-cache decoder, pool threads not spinning) and the original one (concat-cache, spinning),
    // timed alternately in this one process so the machine's load weighs on both alike; the note gives the old
    // engine's figure and the speed-up.
    const { createOrtEngine } = await import('../src/main/compute/ortEngine');
    const weights = initWeights(cfg, rng);
    const ort = await createOrtEngine(weights);
    const old = await createOrtEngine(weights, { decoder: 'concat-cache', spin: true });
    await ort.generate(prompts, sampling, new Rng(2));
    await old.generate(prompts, sampling, new Rng(2));
    let tNew = 0;
    let tOld = 0;
    for (let i = 0; i < s.genRepeats; i++) {
      let t0 = now();
      await ort.generate(prompts, sampling, new Rng(3 + i));
      tNew += now() - t0;
      t0 = now();
      await old.generate(prompts, sampling, new Rng(3 + i));
      tOld += now() - t0;
    }
    const tokens = WORK.genRows * WORK.genTokens * s.genRepeats;
    const gen = tokens / (tNew / 1000);
    const genOld = tokens / (tOld / 1000);
    await ort.dispose();
    await old.dispose();
    const note = `original engine (concat-cache, spinning) ${genOld.toFixed(0)} tok/s, now ${(gen / genOld).toFixed(2)}× that; peak RSS holds both engines`;
    return { engine, size, params, train_tokens_per_s: null, gen_tokens_per_s: gen, peak_rss_mb: rss(), note };
  }

  // tfjs-wasm, tfjs-node, tfjs-node-gpu: the same training step and tfjs generation on that backend.
  const tf = await import('@tensorflow/tfjs');
  const { initBackend } = await import('../src/main/compute/backends');
  const { PolicyModel, TfjsRolloutEngine } = await import('../src/core/agent');
  const { AdamW } = await import('../src/core/training/adamw');
  const backend = engine === 'tfjs-node' ? 'tensorflow' : engine === 'tfjs-node-gpu' ? 'tensorflow-gpu' : 'wasm';
  const info = await initBackend(backend);
  const tfNote = info.tensorflow
    ? `libtensorflow ${info.tensorflow.version}${info.tensorflow.gpu ? ` on ${info.tensorflow.gpu}` : ''}, ${info.tensorflow.intraOpThreads} intra-op threads${info.tensorflow.deterministicOps ? ', deterministic ops' : ''}`
    : undefined;
  const model = PolicyModel.create(cfg, rng);
  const opt = new AdamW(model.trainableVariables(), { beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, gradClip: 1 });
  const rows = Array.from({ length: WORK.trainRows }, () => ({
    promptIds: [1, ...randIds(WORK.trainLen - WORK.respLen)],
    responseIds: randIds(WORK.respLen),
  }));
  const step = () => {
    const { grads, value } = tf.variableGrads(() => {
      const o = model.tokenLogProbs(rows);
      return tf.div(tf.neg(tf.sum(tf.mul(o.logProbs, o.mask))), tf.sum(o.mask)) as Scalar;
    }, model.trainableVariables());
    opt.step(grads, 1e-4);
    value.dispose();
    tf.dispose(grads);
  };
  for (let i = 0; i < s.warmup; i++) step();
  let t0 = now();
  for (let i = 0; i < s.trainSteps; i++) step();
  const train = (WORK.trainRows * WORK.trainLen * s.trainSteps) / ((now() - t0) / 1000);
  let note: string | undefined;
  if (profile) {
    // Where a training step's kernel time goes (what limits tfjs-wasm training).
    const prof = await tf.profile(() => step());
    const byKernel = new Map<string, number>();
    let total = 0;
    for (const k of prof.kernels) {
      const ms = Number(k.kernelTimeMs) || 0;
      byKernel.set(k.name, (byKernel.get(k.name) ?? 0) + ms);
      total += ms;
    }
    const top = [...byKernel.entries()].sort((a, b) => b[1] - a[1]).slice(0, 6);
    note = `${prof.kernels.length} kernels/step; ${top.map(([n, ms]) => `${n} ${((100 * ms) / total).toFixed(0)}%`).join(', ')}`;
  }
  const eng = new TfjsRolloutEngine(model, info.tfjsBackend);
  const genRepeats = Math.max(1, s.genRepeats - 1);
  const small = { ...sampling, maxNewTokens: 4 };
  await eng.generate(prompts, small, new Rng(2));
  t0 = now();
  for (let i = 0; i < genRepeats; i++) await eng.generate(prompts, sampling, new Rng(3 + i));
  const gen = (WORK.genRows * WORK.genTokens * genRepeats) / ((now() - t0) / 1000);
  const notes = [tfNote, note].filter((n) => n !== undefined).join('; ');
  return { engine, size, params, train_tokens_per_s: train, gen_tokens_per_s: gen, peak_rss_mb: rss(), ...(notes ? { note: notes } : {}) };
}

function runTorch(
  size: Size,
  quick: boolean,
  cfg: { dModel: number; nLayers: number; nHeads: number; dFF: number; maxSeqLen: number },
): Row {
  const python = '/usr/bin/python3';
  const probe = spawnSync(python, ['-c', 'import torch; print(torch.__version__)'], { encoding: 'utf8' });
  if (probe.status !== 0) {
    return {
      engine: 'pytorch',
      size,
      params: null,
      train_tokens_per_s: null,
      gen_tokens_per_s: null,
      peak_rss_mb: null,
      note: 'skipped: /usr/bin/python3 cannot import torch (install with `apt-get install -y python3-torch libopenblas0-pthread`)',
    };
  }
  const args = JSON.stringify({ ...WORK, ...cfg, ...steps(size, quick), threads: 2 });
  const r = spawnSync(python, [join(HERE, 'torch_model.py'), args], {
    encoding: 'utf8',
    env: { ...process.env, OPENBLAS_NUM_THREADS: '1', OMP_NUM_THREADS: '2' },
  });
  if (r.status !== 0) {
    return {
      engine: 'pytorch',
      size,
      params: null,
      train_tokens_per_s: null,
      gen_tokens_per_s: null,
      peak_rss_mb: null,
      note: `failed: ${r.stderr.trim().split('\n').pop()}`,
    };
  }
  const o = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}');
  return {
    engine: 'pytorch',
    size,
    params: o.params,
    train_tokens_per_s: o.train_tokens_per_s,
    gen_tokens_per_s: o.gen_tokens_per_s,
    peak_rss_mb: o.peak_rss_mb,
    note: `torch ${probe.stdout.trim()}`,
  };
}

function fmt(x: number | null, digits = 0): string {
  return x === null ? '–' : x.toFixed(digits);
}

const USAGE = `Usage: npm run bench:model -- [options]
Training and generation tokens/s of each engine (tfjs-wasm, onnxruntime, PyTorch) per model size, with peak RSS.

Options:
  --sizes A,B   model sizes to measure: nano, small, base (default: nano,small)
  --quick       fewer timed repetitions
  --profile     add the tfjs-wasm training step's kernel-time breakdown to its row's note
  --workers A,B data-parallel training rows with these worker counts K (default: 2 up to the machine's cores, doubling)
  --tf-env K=V  a second tfjs-node row with this TensorFlow environment setting (repeatable; all in that one row),
                e.g. --tf-env TF_DETERMINISTIC_OPS=0 for what deterministic ops cost
  --json        one JSON object per line
  --help, -h    this help`;

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === '--one-dp') {
    const { dataParallelTraining } = await import('./modelDp');
    const size = argv[1] as Size;
    const K = Number(argv[2]);
    const r = await dataParallelTraining(size, K, WORK, steps(size, argv.includes('--quick')));
    const row: Row = {
      engine: 'tfjs-wasm-dp',
      size,
      params: r.params,
      train_tokens_per_s: r.train_tokens_per_s,
      gen_tokens_per_s: null,
      peak_rss_mb: r.peak_rss_mb,
      workers: K,
      note: `${K} worker threads; in-process K=1 alternated in the same process ${r.single_tokens_per_s.toFixed(0)} tok/s → ${(r.train_tokens_per_s / r.single_tokens_per_s).toFixed(2)}× that`,
    };
    process.stdout.write(`${JSON.stringify(row)}\n`);
    return;
  }
  if (argv[0] === '--one') {
    const row = await runOne(argv[1] as Engine, argv[2] as Size, argv.includes('--quick'), argv.includes('--profile'));
    process.stdout.write(`${JSON.stringify(row)}\n`);
    return;
  }
  const opts = benchArgs('model', USAGE, {
    json: { type: 'boolean', default: false },
    quick: { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    sizes: { type: 'string' },
    workers: { type: 'string' },
    'tf-env': { type: 'string', multiple: true },
  });
  const tfEnv = opts['tf-env'] ?? [];
  for (const kv of tfEnv)
    if (!/^TF_[A-Z0-9_]+=[^=]*$/.test(kv)) usageError('model', USAGE, `--tf-env: expected TF_NAME=value, got "${kv}"`);
  const { nvidiaGpuPresent } = await import('../src/main/compute/tensorflow');
  const json = opts.json;
  const quick = opts.quick;
  const sizes = (opts.sizes !== undefined ? opts.sizes.split(',') : [...SIZES]) as Size[];
  const known: readonly string[] = [...SIZES, 'base'];
  const unknown = sizes.filter((s) => !known.includes(s));
  if (unknown.length) usageError('model', USAGE, `--sizes: unknown size ${unknown.join(', ')}; known sizes: ${known.join(', ')}`);
  const { resolveModelConfig } = await import('../src/core/agent');
  const defaultWorkers: number[] = [];
  for (let k = 2; k <= Math.max(2, cpus().length); k *= 2) defaultWorkers.push(k);
  if (cpus().length > 2 && !defaultWorkers.includes(cpus().length)) defaultWorkers.push(cpus().length);
  const workerCounts = opts.workers !== undefined ? opts.workers.split(',').map(Number) : defaultWorkers;
  if (workerCounts.some((k) => !Number.isInteger(k) || k < 1))
    usageError('model', USAGE, `--workers: expected worker counts ≥ 1 like 2,4, got "${opts.workers}"`);
  const rows: Row[] = [];
  // Engines in turn, each size: tfjs-node (and its --tf-env variant right after it), tfjs-node-gpu, tfjs-wasm, ORT,
  // PyTorch, then the tfjs-wasm K-worker rows, so a change in the machine's load spreads over all of them.
  const runs: Array<{ engine: Engine; env?: string[] }> = [];
  for (const engine of ENGINES) {
    runs.push({ engine });
    if (engine === 'tfjs-node' && tfEnv.length > 0) runs.push({ engine, env: tfEnv });
  }
  for (const size of sizes) {
    for (const { engine, env } of runs) {
      let row: Row;
      if (engine === 'pytorch') {
        const c = resolveModelConfig({ size }, WORK.vocab);
        row = runTorch(size, quick, c);
      } else if (engine === 'tfjs-node-gpu' && !nvidiaGpuPresent()) {
        row = {
          engine,
          size,
          params: null,
          train_tokens_per_s: null,
          gen_tokens_per_s: null,
          peak_rss_mb: null,
          note: 'not run: no NVIDIA GPU on this machine',
        };
      } else {
        const extra = Object.fromEntries((env ?? []).map((kv) => kv.split('=') as [string, string]));
        const r = spawnSync(
          process.execPath,
          [
            ...process.execArgv,
            fileURLToPath(import.meta.url),
            '--one',
            engine,
            size,
            ...(quick ? ['--quick'] : []),
            ...(opts.profile ? ['--profile'] : []),
          ],
          {
            encoding: 'utf8',
            maxBuffer: 1 << 24,
            env: { ...process.env, ...extra },
          },
        );
        const line = r.stdout
          .trim()
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .pop();
        row = line
          ? (JSON.parse(line) as Row)
          : {
              engine,
              size,
              params: null,
              train_tokens_per_s: null,
              gen_tokens_per_s: null,
              peak_rss_mb: null,
              note: `failed: ${r.stderr.trim().split('\n').slice(-3).join(' | ').slice(0, 300)}`,
            };
        if (env) row.tf_env = env.join(' ');
      }
      rows.push(row);
      if (json) process.stdout.write(`${JSON.stringify(row)}\n`);
    }
    for (const K of workerCounts) {
      const r = spawnSync(
        process.execPath,
        [...process.execArgv, fileURLToPath(import.meta.url), '--one-dp', size, String(K), ...(quick ? ['--quick'] : [])],
        { encoding: 'utf8', maxBuffer: 1 << 24 },
      );
      const line = r.stdout
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .pop();
      const row: Row = line
        ? (JSON.parse(line) as Row)
        : {
            engine: 'tfjs-wasm-dp',
            size,
            params: null,
            train_tokens_per_s: null,
            gen_tokens_per_s: null,
            peak_rss_mb: null,
            workers: K,
            note: `failed: ${r.stderr.trim().split('\n').slice(-3).join(' | ').slice(0, 300)}`,
          };
      rows.push(row);
      if (json) process.stdout.write(`${JSON.stringify(row)}\n`);
    }
  }
  if (json) return;
  const load = loadavg()[0].toFixed(1);
  console.log(
    `bench:model — ${cpus().length} cores (load average ${load}); vocab ${WORK.vocab}; train ${WORK.trainRows}×${WORK.trainLen} tokens/step; generate ${WORK.genRows} prompts × ${WORK.promptLen} → ${WORK.genTokens} tokens`,
  );
  console.log('engine        size    params     train tok/s   gen tok/s   peak RSS MB   note');
  for (const r of rows) {
    const label = r.workers ? `tfjs-wasm K=${r.workers}` : r.tf_env ? `${r.engine}*` : r.engine;
    const note = r.tf_env ? `* with ${r.tf_env}; ${r.note ?? ''}` : (r.note ?? '');
    console.log(
      `${label.padEnd(13)} ${r.size.padEnd(7)} ${fmt(r.params).padStart(9)}  ${fmt(r.train_tokens_per_s).padStart(12)}  ${fmt(r.gen_tokens_per_s).padStart(10)}  ${fmt(r.peak_rss_mb).padStart(12)}   ${note}`,
    );
  }
  for (const size of sizes) {
    const get = (e: Engine) => rows.find((r) => r.engine === e && r.size === size);
    const ort = get('onnxruntime')?.gen_tokens_per_s;
    const pt = get('pytorch');
    const tw = get('tfjs-wasm')?.train_tokens_per_s;
    const tn = rows.find((r) => r.engine === 'tfjs-node' && r.size === size && !r.tf_env)?.train_tokens_per_s;
    if (pt?.train_tokens_per_s && tn)
      console.log(
        `${size}: tfjs-node training / PyTorch 2-thread training = ${(tn / pt.train_tokens_per_s).toFixed(2)}× (goal: small ≥ 1.0×, nano ≥ 0.8×); / tfjs-wasm = ${tw ? (tn / tw).toFixed(2) : '–'}×`,
      );
    for (const v of rows.filter((r) => r.engine === 'tfjs-node' && r.size === size && r.tf_env && r.train_tokens_per_s)) {
      if (tn)
        console.log(
          `${size}: tfjs-node with ${v.tf_env} / tfjs-node = ${(v.train_tokens_per_s! / tn).toFixed(2)}× training, ${v.gen_tokens_per_s && rows.find((r) => r.engine === 'tfjs-node' && r.size === size && !r.tf_env)?.gen_tokens_per_s ? (v.gen_tokens_per_s / rows.find((r) => r.engine === 'tfjs-node' && r.size === size && !r.tf_env)!.gen_tokens_per_s!).toFixed(2) : '–'}× generation`,
        );
    }
    if (pt?.gen_tokens_per_s && ort)
      console.log(`${size}: ORT generation / PyTorch eager generation = ${(ort / pt.gen_tokens_per_s).toFixed(2)}× (goal ≥ 1.5×)`);
    if (pt?.train_tokens_per_s && tw)
      console.log(
        `${size}: PyTorch training / tfjs-wasm training = ${(pt.train_tokens_per_s / tw).toFixed(2)}× slower on wasm (goal ≤ 3×)`,
      );
    for (const dp of rows.filter((r) => r.engine === 'tfjs-wasm-dp' && r.size === size && r.train_tokens_per_s)) {
      if (pt?.train_tokens_per_s)
        console.log(
          `${size}: tfjs-wasm K=${dp.workers} training / PyTorch 2-thread training = ${(dp.train_tokens_per_s! / pt.train_tokens_per_s).toFixed(2)}× (goal ≥ 0.5× at K=2)`,
        );
    }
  }
}

await main();
