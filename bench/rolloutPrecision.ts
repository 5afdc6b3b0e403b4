/**
 * `npm run bench:precision [-- --json] [-- --sizes nano,small] [-- --repeats 5]`
 *
 * compute.rolloutPrecision on the onnxruntime rollout engine (src/main/compute/ortPrecision.ts): generation tokens/s
 * of fp32, fp16 and int8 engines on bench:model's workload (vocab 192, 16 prompts × 96 tokens → 32 new tokens,
 * 2 intra-op threads, the split-cache decoder), the three timed in rotating order within each repeat so the
 * machine's load weighs on them alike (the load average is printed before and after); tokens/s of the median call,
 * and tokens per CPU-second of this process (the work done, which other processes' load disturbs less). Beside the speed, the
 * mismatch each one brings: |Δ log-prob| between the engine's sampled-token log-probs and the float32 trainer's
 * (tfjs-wasm) on the same tokens — what the trainer logs as mismatch/logprob_abs_mean|max — and the share of greedy
 * tokens equal to the fp32 engine's. Weights: the size's initialisation plus N(0, 0.05) noise, so the logits are
 * not flat (an untrained init makes every gap look small).
 */
import { loadavg } from 'node:os';
import { benchArgs, usageError } from './args';

const USAGE = `Usage: npm run bench:precision [-- --json] [-- --sizes nano,small] [-- --repeats N]
Rollout tokens/s and |Δ log-prob| vs the float32 trainer of the onnxruntime engine at fp32, fp16 and int8.
  --sizes     model sizes, comma separated (nano, small, base; default nano,small)
  --repeats   timed generate calls per precision (default 5), after one warm-up each; tokens/s is the median call's
  --json      one JSON object per line
  --help, -h  this help
`;

const WORK = { vocab: 192, genRows: 16, promptLen: 96, genTokens: 32 };
const PRECISIONS = ['fp32', 'fp16', 'int8'] as const;

interface Row {
  size: string;
  precision: (typeof PRECISIONS)[number];
  gen_tokens_per_s: number;
  /** Tokens per CPU-second of this process (all its threads): the work, less sensitive to other processes' load. */
  gen_tokens_per_cpu_s: number;
  logprob_abs_mean: number;
  logprob_abs_max: number;
  greedy_agree_with_fp32: number;
  load_avg_1m: [number, number];
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

async function main(): Promise<void> {
  const opts = benchArgs('precision', USAGE, {
    json: { type: 'boolean' },
    sizes: { type: 'string', default: 'nano,small' },
    repeats: { type: 'string', default: '5' },
  });
  const sizes = opts.sizes.split(',').map((s) => s.trim());
  for (const s of sizes)
    if (!['nano', 'small', 'base'].includes(s)) usageError('precision', USAGE, `--sizes: unknown size "${s}"; known: nano, small, base`);
  const repeats = Number(opts.repeats);
  if (!Number.isInteger(repeats) || repeats < 1)
    usageError('precision', USAGE, `--repeats: expected an integer ≥ 1, got "${opts.repeats}"`);

  const { initBackend, silenceTfjsBanner } = await import('../src/main/compute/index');
  const { createOrtEngine } = await import('../src/main/compute/ortEngine');
  const { resolveModelConfig, initWeights, mismatchStats, PolicyModel, TfjsRolloutEngine } = await import('../src/core/agent');
  const { Rng } = await import('../src/core/util/rng');
  const { DEFAULT_CONFIG } = await import('../src/core/config/index');
  silenceTfjsBanner();
  await initBackend('wasm');

  const rows: Row[] = [];
  for (const size of sizes) {
    const cfg = resolveModelConfig({ size: size as 'nano', geluForm: DEFAULT_CONFIG.model.geluForm }, WORK.vocab);
    const rng = new Rng(1);
    const weights = initWeights(cfg, rng);
    for (const a of Object.values(weights.tensors)) for (let i = 0; i < a.length; i++) a[i] += rng.normal() * 0.05;
    const prompts = Array.from({ length: WORK.genRows }, () => [
      1,
      ...Array.from({ length: WORK.promptLen - 1 }, () => 8 + rng.int(WORK.vocab - 8)),
    ]);
    const sampling = { maxNewTokens: WORK.genTokens, temperature: 1, topP: 1, topK: 0, stopIds: [] };
    const engines = await Promise.all(PRECISIONS.map((precision) => createOrtEngine(weights, { precision })));
    const trainer = new TfjsRolloutEngine(PolicyModel.fromWeights(weights, 'trainer'));
    const load0 = loadavg()[0];
    // Warm-up, and the mismatch on its samples: the engine's own log-probs vs the trainer's on the same tokens.
    const gaps: Array<{ mean: number; max: number }> = [];
    for (const e of engines) {
      const g = await e.generate(prompts, sampling, new Rng(2));
      const lp = await trainer.logProbs(prompts.map((p, i) => ({ promptIds: p, responseIds: g.tokens[i] })));
      gaps.push(mismatchStats(g.logProbs, lp));
    }
    const greedy = await Promise.all(engines.map((e) => e.generate(prompts, { ...sampling, temperature: 0 }, new Rng(1))));
    const ms: number[][] = PRECISIONS.map(() => []);
    const cpu: number[][] = PRECISIONS.map(() => []);
    for (let r = 0; r < repeats; r++) {
      for (let k = 0; k < PRECISIONS.length; k++) {
        const j = (k + r) % PRECISIONS.length; // rotate who goes first
        const t0 = performance.now();
        const c0 = process.cpuUsage();
        await engines[j].generate(prompts, sampling, new Rng(3 + r));
        const c1 = process.cpuUsage(c0);
        ms[j].push(performance.now() - t0);
        cpu[j].push((c1.user + c1.system) / 1000);
      }
    }
    const load1 = loadavg()[0];
    PRECISIONS.forEach((precision, j) => {
      let same = 0;
      let total = 0;
      greedy[0].tokens.forEach((row, i) =>
        row.forEach((t, c) => {
          total++;
          if (greedy[j].tokens[i][c] === t) same++;
        }),
      );
      rows.push({
        size,
        precision,
        gen_tokens_per_s: (WORK.genRows * WORK.genTokens) / (median(ms[j]) / 1000),
        gen_tokens_per_cpu_s: (WORK.genRows * WORK.genTokens) / (median(cpu[j]) / 1000),
        logprob_abs_mean: gaps[j].mean,
        logprob_abs_max: gaps[j].max,
        greedy_agree_with_fp32: same / total,
        load_avg_1m: [load0, load1],
      });
    });
    for (const e of engines) await e.dispose();
  }

  if (opts.json) {
    for (const r of rows) console.log(JSON.stringify(r));
    return;
  }
  console.log('size    precision  gen tok/s  tok/CPU-s   |Δ log-prob| mean   max        greedy = fp32   load avg (1 min) before → after');
  for (const r of rows) {
    console.log(
      `${r.size.padEnd(8)}${r.precision.padEnd(11)}${r.gen_tokens_per_s.toFixed(0).padStart(9)}  ${r.gen_tokens_per_cpu_s.toFixed(0).padStart(9)}   ${r.logprob_abs_mean.toExponential(2).padStart(17)}   ${r.logprob_abs_max.toExponential(2).padEnd(11)}${(100 * r.greedy_agree_with_fp32).toFixed(1).padStart(8)} %     ${r.load_avg_1m[0].toFixed(1)} → ${r.load_avg_1m[1].toFixed(1)}`,
    );
  }
}

await main();
