/**
 * `npm run bench:llm [-- --json] [-- --shapes tiny,small,qwen2.5-0.5b] [-- --engines tfjs-wasm,pytorch] [-- --threads 1]
 *   [-- --repeat N]` (N runs of every row, round-robin; the table shows medians)
 *
 * The lab's tfjs Qwen2 implementation (src/core/llm) side by side with PyTorch + Transformers (the `llm` peer venv:
 * Transformers 4.44.2 on Debian's PyTorch 1.13, eager attention) on the same random-weight checkpoint shapes and
 * the same thread count:
 *   train_tokens_per_s   forward + backward of a token-mean NLL over every token of B rows × T tokens, gradients
 *                        for every weight (full fine-tuning; no optimizer step)
 *   gen_tokens_per_s     greedy generation with the KV cache, B prompts × P tokens → N new tokens, prefill included
 *   gen_tokens_per_cpu_s the same tokens per CPU second of the process (all its threads): on a loaded machine the
 *                        wall rate follows the scheduler, this one much less (at one thread it is the idle-core rate)
 *   peak_rss_mb          the row's process (each (engine, shape) runs in its own process)
 * Shapes: tiny (the test checkpoints' size), small (d 256, 4 layers, vocab 8192), qwen2.5-0.5b (Qwen2.5-0.5B's
 * exact shapes, 494 M parameters; slow and ~8 GB: only when asked for with --shapes).
 * Engines: tfjs-wasm (SIMD, one thread in Node, the lab's kernel fixes), tfjs-cpu (pure JS; tiny only by default),
 * tfjs-node (when `npm run setup:tensorflow` built it; otherwise its row says why not), onnxruntime (the rollout
 * engine for these models on the CPU: the same weights exported to ONNX with a KV cache, src/core/llm/onnx, run by
 * onnxruntime-node with --threads intra-op threads; generation only, it cannot train), pytorch.
 * The onnxruntime row's note gives the export + session time: the engine pays it again after every optimizer step
 * (the weights changed), so it is the per-step overhead of onnxruntime rollouts in training.
 */
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchArgs, usageError } from './args';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..');
const USAGE = `npm run bench:llm [-- --json] [-- --shapes tiny,small,qwen2.5-0.5b] [-- --engines tfjs-wasm,tfjs-cpu,tfjs-node,onnxruntime,pytorch] [-- --threads 1] [-- --repeat 1] [-- --help]`;

/** Qwen2Config fields of each shape (config.json names). */
const SHAPES: Record<string, Record<string, unknown>> = {
  tiny: {
    vocab_size: 448,
    hidden_size: 64,
    intermediate_size: 96,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    max_position_embeddings: 512,
    rope_theta: 1e6,
    rms_norm_eps: 1e-6,
    tie_word_embeddings: true,
  },
  small: {
    vocab_size: 8192,
    hidden_size: 256,
    intermediate_size: 704,
    num_hidden_layers: 4,
    num_attention_heads: 8,
    num_key_value_heads: 2,
    max_position_embeddings: 1024,
    rope_theta: 1e6,
    rms_norm_eps: 1e-6,
    tie_word_embeddings: true,
  },
  'qwen2.5-0.5b': {
    vocab_size: 151936,
    hidden_size: 896,
    intermediate_size: 4864,
    num_hidden_layers: 24,
    num_attention_heads: 14,
    num_key_value_heads: 2,
    max_position_embeddings: 32768,
    rope_theta: 1e6,
    rms_norm_eps: 1e-6,
    tie_word_embeddings: true,
  },
};
const WORK: Record<
  string,
  { trainRows: number; trainLen: number; genRows: number; promptLen: number; genTokens: number; warmup: number; trainSteps: number }
> = {
  tiny: { trainRows: 8, trainLen: 128, genRows: 8, promptLen: 64, genTokens: 32, warmup: 1, trainSteps: 3 },
  small: { trainRows: 4, trainLen: 128, genRows: 4, promptLen: 64, genTokens: 32, warmup: 1, trainSteps: 2 },
  'qwen2.5-0.5b': { trainRows: 1, trainLen: 64, genRows: 1, promptLen: 32, genTokens: 8, warmup: 0, trainSteps: 1 },
};
const ENGINES = ['tfjs-wasm', 'tfjs-cpu', 'tfjs-node', 'onnxruntime', 'pytorch'] as const;
type Engine = (typeof ENGINES)[number];

interface Row {
  engine: Engine;
  shape: string;
  params: number | null;
  train_tokens_per_s: number | null;
  gen_tokens_per_s: number | null;
  /** Generated tokens per CPU second of the row's process (all threads): what load on a shared machine moves least. */
  gen_tokens_per_cpu_s: number | null;
  peak_rss_mb: number | null;
  note?: string;
}

async function runTfjs(engine: Engine, shape: string): Promise<Row> {
  const { initBackend } = await import('../src/main/compute/backends');
  const tf = await import('@tensorflow/tfjs');
  const { parseLlmConfig } = await import('../src/core/llm/config');
  const { HfCausalLM } = await import('../src/core/llm/causalLm');
  const { generateLlm } = await import('../src/core/llm/generate');
  const { Rng } = await import('../src/core/util/rng');
  const info = await initBackend(engine === 'tfjs-wasm' ? 'wasm' : engine === 'tfjs-cpu' ? 'cpu' : 'tensorflow');
  const cfg = parseLlmConfig({ architectures: ['Qwen2ForCausalLM'], ...SHAPES[shape] });
  const w = WORK[shape];
  const model = HfCausalLM.random(cfg, new Rng(0), 0.02);
  const rng = new Rng(1);
  const V = cfg.vocabSize;
  const rows = Array.from({ length: w.trainRows }, () => {
    const ids = Array.from({ length: w.trainLen }, () => Math.floor(rng.float() * V));
    return { promptIds: ids.slice(0, 1), responseIds: ids.slice(1) };
  });
  const vars = model.baseVariables();
  const fb = (): void => {
    const { value, grads } = tf.variableGrads(() => {
      const o = model.tokenLogProbs(rows);
      return tf.div(tf.neg(tf.sum(o.logProbs)), tf.sum(o.mask)) as import('@tensorflow/tfjs').Scalar;
    }, vars);
    value.dataSync();
    tf.dispose([value, ...Object.values(grads)]);
  };
  for (let i = 0; i < w.warmup; i++) fb();
  let t0 = performance.now();
  for (let i = 0; i < w.trainSteps; i++) fb();
  const trainS = (performance.now() - t0) / 1000 / w.trainSteps;
  const prompts = Array.from({ length: w.genRows }, () => Array.from({ length: w.promptLen }, () => Math.floor(rng.float() * V)));
  const opts = { maxNewTokens: w.genTokens, temperature: 0, topP: 1, topK: 0, stopIds: [] };
  await generateLlm(model, prompts, { ...opts, maxNewTokens: 2 }, new Rng(2));
  t0 = performance.now();
  const c0 = process.cpuUsage();
  const g = await generateLlm(model, prompts, opts, new Rng(2));
  const genS = (performance.now() - t0) / 1000;
  const genCpuS = cpuSecondsSince(c0);
  if (g.tokens.some((t) => t.length !== w.genTokens)) throw new Error('generation stopped early');
  return {
    engine,
    shape,
    params: model.paramCount(),
    train_tokens_per_s: (w.trainRows * w.trainLen) / trainS,
    gen_tokens_per_s: (w.genRows * w.genTokens) / genS,
    gen_tokens_per_cpu_s: (w.genRows * w.genTokens) / genCpuS,
    peak_rss_mb: process.resourceUsage().maxRSS / 1024,
    note: info.detail,
  };
}

/** The onnxruntime rollout engine on the same random weights and prompts as the tfjs rows (same seeds, same draws). */
async function runOrt(shape: string, threads: number): Promise<Row> {
  const { parseLlmConfig, llmParamCount } = await import('../src/core/llm/config');
  const { initLlmTensors } = await import('../src/core/llm/causalLm');
  const { OrtLlm } = await import('../src/main/compute/ortLlmEngine');
  const { Rng } = await import('../src/core/util/rng');
  const cfg = parseLlmConfig({ architectures: ['Qwen2ForCausalLM'], ...SHAPES[shape] });
  const w = WORK[shape];
  const t0 = performance.now();
  const ort = await OrtLlm.create(cfg, initLlmTensors(cfg, new Rng(0), 0.02), { threads });
  const loadS = (performance.now() - t0) / 1000;
  const rng = new Rng(1);
  const V = cfg.vocabSize;
  // The tfjs rows draw their training rows first: draw the same numbers so the prompts are the same.
  for (let i = 0; i < w.trainRows * w.trainLen; i++) rng.float();
  const prompts = Array.from({ length: w.genRows }, () => Array.from({ length: w.promptLen }, () => Math.floor(rng.float() * V)));
  const opts = { maxNewTokens: w.genTokens, temperature: 0, topP: 1, topK: 0, stopIds: [] };
  await ort.generate(prompts, { ...opts, maxNewTokens: 2 }, new Rng(2));
  const t1 = performance.now();
  const c1 = process.cpuUsage();
  const g = await ort.generate(prompts, opts, new Rng(2));
  const genS = (performance.now() - t1) / 1000;
  const genCpuS = cpuSecondsSince(c1);
  if (g.tokens.some((t) => t.length !== w.genTokens)) throw new Error('generation stopped early');
  await ort.release();
  return {
    engine: 'onnxruntime',
    shape,
    params: llmParamCount(cfg),
    train_tokens_per_s: null,
    gen_tokens_per_s: (w.genRows * w.genTokens) / genS,
    gen_tokens_per_cpu_s: (w.genRows * w.genTokens) / genCpuS,
    peak_rss_mb: process.resourceUsage().maxRSS / 1024,
    note: `onnxruntime-node CPU, ${threads} thread(s), KV cache, fp32; export + session ${loadS.toFixed(1)} s; inference only`,
  };
}

function runTorch(shape: string, threads: number): Row {
  const python = join(ROOT, '.venvs', 'llm', 'bin', 'python');
  const r = spawnSync(python, [join(HERE, 'torch_llm.py'), JSON.stringify({ config: SHAPES[shape], work: WORK[shape], threads })], {
    encoding: 'utf8',
    env: { ...process.env, OPENBLAS_NUM_THREADS: '1', OMP_NUM_THREADS: String(threads) },
    maxBuffer: 1 << 24,
  });
  if (r.status !== 0) {
    const why = r.error
      ? `${python} not found: run bash scripts/setup.sh (builds .venvs/llm)`
      : (r.stderr || '').trim().split('\n').slice(-1)[0];
    return {
      engine: 'pytorch',
      shape,
      params: null,
      train_tokens_per_s: null,
      gen_tokens_per_s: null,
      gen_tokens_per_cpu_s: null,
      peak_rss_mb: null,
      note: `not run: ${why}`,
    };
  }
  return { engine: 'pytorch', shape, ...(JSON.parse(r.stdout.trim().split('\n').pop()!) as Omit<Row, 'engine' | 'shape'>) };
}

async function main(): Promise<void> {
  if (process.argv[2] === '--one') {
    const [engine, shape, threads] = [process.argv[3] as Engine, process.argv[4], Number(process.argv[5] ?? '1')];
    try {
      process.stdout.write(`${JSON.stringify(engine === 'onnxruntime' ? await runOrt(shape, threads) : await runTfjs(engine, shape))}\n`);
    } catch (e) {
      process.stdout.write(
        `${JSON.stringify({
          engine,
          shape,
          params: null,
          train_tokens_per_s: null,
          gen_tokens_per_s: null,
          gen_tokens_per_cpu_s: null,
          peak_rss_mb: null,
          note: `not run: ${(e as Error).message.split('\n')[0]}`,
        })}\n`,
      );
    }
    return;
  }
  const opts = benchArgs('llm', USAGE, {
    json: { type: 'boolean' },
    shapes: { type: 'string', default: 'tiny,small' },
    engines: { type: 'string', default: 'tfjs-wasm,tfjs-cpu,tfjs-node,onnxruntime,pytorch' },
    threads: { type: 'string', default: '1' },
    repeat: { type: 'string', default: '1' },
  });
  const shapes = opts.shapes.split(',').map((s) => s.trim());
  for (const s of shapes) if (!SHAPES[s]) usageError('llm', USAGE, `unknown shape "${s}"; known: ${Object.keys(SHAPES).join(', ')}`);
  const engines = opts.engines.split(',').map((s) => s.trim()) as Engine[];
  for (const e of engines) if (!ENGINES.includes(e)) usageError('llm', USAGE, `unknown engine "${e}"; known: ${ENGINES.join(', ')}`);
  const threads = Number(opts.threads);
  if (!Number.isInteger(threads) || threads < 1) usageError('llm', USAGE, `--threads must be a positive integer, got ${opts.threads}`);
  const loadBefore = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  const repeat = Number(opts.repeat);
  if (!Number.isInteger(repeat) || repeat < 1) usageError('llm', USAGE, `--repeat must be a positive integer, got ${opts.repeat}`);
  // --repeat N: every row N times, round-robin over engines, so that a change of load on a shared machine falls on
  // every engine alike; the table gives each row's median.
  const runs = new Map<string, Row[]>();
  for (let rep = 0; rep < repeat; rep++) {
    for (const shape of shapes) {
      for (const engine of engines) {
        if (engine === 'tfjs-cpu' && shape !== 'tiny') continue; // pure JS: minutes per step beyond the tiny shape
        let row: Row;
        if (engine === 'pytorch') row = runTorch(shape, threads);
        else {
          const r = spawnSync(
            process.execPath,
            [...process.execArgv, fileURLToPath(import.meta.url), '--one', engine, shape, String(threads)],
            {
              encoding: 'utf8',
              maxBuffer: 1 << 24,
              cwd: ROOT,
            },
          );
          const line = (r.stdout || '').trim().split('\n').pop();
          row = line
            ? (JSON.parse(line) as Row)
            : {
                engine,
                shape,
                params: null,
                train_tokens_per_s: null,
                gen_tokens_per_s: null,
                gen_tokens_per_cpu_s: null,
                peak_rss_mb: null,
                note: `not run: ${(r.stderr || '').trim().split('\n').slice(-1)[0]}`,
              };
        }
        runs.set(`${shape}|${engine}`, [...(runs.get(`${shape}|${engine}`) ?? []), row]);
        if (opts.json) process.stdout.write(`${JSON.stringify({ ...row, run: rep + 1 })}\n`);
      }
    }
  }
  if (opts.json) return;
  const rows = [...runs.values()].map((rs) => medianRow(rs));
  const f = (v: number | null, d = 0): string => (v === null ? '–' : v.toFixed(d));
  const torch = (shape: string): Row | undefined =>
    rows.find((r) => r.engine === 'pytorch' && r.shape === shape && r.train_tokens_per_s !== null);
  console.log(
    `| shape | engine | params | train tok/s | × PyTorch | gen tok/s (KV cache) | × PyTorch | gen tok / CPU-s | × PyTorch | peak RSS MB | note |`,
  );
  console.log(`|---|---|---|---|---|---|---|---|---|---|---|`);
  for (const r of rows) {
    const t = torch(r.shape);
    const x = (a: number | null, b: number | null | undefined): string => (a !== null && b ? `${(a / b).toFixed(2)}×` : '–');
    console.log(
      `| ${r.shape} | ${r.engine} | ${r.params === null ? '–' : (r.params / 1e6).toFixed(2) + ' M'} | ${f(r.train_tokens_per_s)} | ${r.engine === 'pytorch' ? '' : x(r.train_tokens_per_s, t?.train_tokens_per_s)} | ${f(r.gen_tokens_per_s, 1)} | ${r.engine === 'pytorch' ? '' : x(r.gen_tokens_per_s, t?.gen_tokens_per_s)} | ${f(r.gen_tokens_per_cpu_s, 1)} | ${r.engine === 'pytorch' ? '' : x(r.gen_tokens_per_cpu_s, t?.gen_tokens_per_cpu_s)} | ${f(r.peak_rss_mb)} | ${r.note ?? ''} |`,
    );
  }
  console.log(
    `\nthreads: ${threads} (PyTorch and onnxruntime; tfjs-wasm is single-threaded in Node); load average before the rows: ${loadBefore}, after: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(
        ' ',
      )}; ${repeat > 1 ? `medians of ${repeat} runs per row; ` : ''}workloads: ${shapes.map((s) => `${s} ${JSON.stringify(WORK[s])}`).join('; ')}`,
  );
}

/** The median of each throughput over a row's runs (runs that did not measure it left out), the largest peak RSS. */
function medianRow(rs: Row[]): Row {
  const med = (k: 'train_tokens_per_s' | 'gen_tokens_per_s' | 'gen_tokens_per_cpu_s'): number | null => {
    const v = rs
      .map((r) => r[k])
      .filter((x): x is number => x !== null)
      .sort((a, b) => a - b);
    return v.length === 0 ? null : v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  };
  const rss = rs.map((r) => r.peak_rss_mb).filter((x): x is number => x !== null);
  const measured = rs.find((r) => r.params !== null) ?? rs[0];
  return {
    ...measured,
    train_tokens_per_s: med('train_tokens_per_s'),
    gen_tokens_per_s: med('gen_tokens_per_s'),
    gen_tokens_per_cpu_s: med('gen_tokens_per_cpu_s'),
    peak_rss_mb: rss.length ? Math.max(...rss) : null,
  };
}

function cpuSecondsSince(start: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1e6;
}

void main();
