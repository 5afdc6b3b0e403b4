/**
 * RL step benchmark: the real trainer (`runTraining`) on the compute this machine has, from the
 * shipped warm start, timing each RL step's phases as the trainer reports them (perf/* metrics):
 *   rollout_s  rollouts incl. dynamic-filtering rounds (onnxruntime with KV cache by default)
 *   logprob_s  old log-probs (compute.logProbEngine) + reference log-probs when the KL term is on (compute.refLogProbEngine)
 *   update_s   advantages + the sequential mini-batch AdamW updates (tfjs)
 *   step_s     the whole step
 * rows / prompt_tokens / response_tokens describe the batch the update trained on (after filtering).
 * The first step is a warm-up (JIT, engine sessions) and is reported but left out of the median; the run's final
 * step is not timed (it runs the end-of-run validation).
 *
 * --clock wall (default) times wall seconds. On a busy shared machine wall time measures the other tenants too;
 * --clock cpu feeds the trainer a clock that reads this process's CPU time (user + system, all threads), which
 * is what an idle machine would need at most: tfjs-wasm is single-threaded (CPU s = wall s on an idle core), while
 * onnxruntime runs 2 threads (its CPU seconds are up to 2× its idle wall seconds) — so cpu numbers are an upper
 * bound for an idle 2-core machine, independent of the load.
 *
 *   npm run bench:rl                                   sampo on sokoban, 4 timed steps, table
 *   npm run bench:rl -- --json                         one JSON object per line (per step, then the median)
 *   npm run bench:rl -- --clock cpu                    CPU seconds (robust on a loaded machine)
 *   npm run bench:rl -- --preset grpo --env frozenlake --steps 6 --set compute.logProbEngine=onnxruntime
 *   npm run bench:rl -- --workers 1,2,4                 data-parallel gradient workers K to compare
 *   npm run bench:rl -- --backends tensorflow,wasm     training backends to compare (default: every one this machine has)
 *   npm run bench:rl -- --vs compute.reuseFirstMiniBatch=false   each K also with these overrides, A then B
 *
 * --vs (repeatable) adds a variant B: for each K the default config (A) trains, then the same config with the --vs
 * overrides (B), in this one process, so work-saving changes are timed side by side.
 * Backends (compute.backend): by default each one this machine has — tensorflow-gpu (tfjs-node-gpu on an NVIDIA GPU),
 * tensorflow (tfjs-node built by `npm run setup:tensorflow`), wasm — trains in turn in this one process, native
 * TensorFlow at K = 1 (it threads every kernel itself) and tfjs-wasm at K = 1 and K = this machine's cores;
 * --rounds N repeats that sequence N times (medians over all rounds), alternating the backends through the load.
 * Each K in --workers (compute.workers) trains the same config and seed in turn in this one process,
 * so the per-phase medians print side by side; tokens_per_s is the RL tokens a step processes (rollout prompt +
 * generated tokens, plus each trained row once per log-prob pass and once for the update) per second of step.
 */
import { cpus, loadavg } from 'node:os';
import { benchArgs, usageError } from './args';
import { resolveConfig, parseSetArgs } from '../src/core/config/index';
import { runTraining } from '../src/core/training/trainer';
import type { TrainerHooks } from '../src/core/training/types';
import type { MetricRecord } from '../src/shared/metrics';
import { initBackend, setupCompute, silenceTfjsBanner } from '../src/main/compute/index';
import { shippedLoaderFor } from '../src/main/store/shippedWarmStart';

interface Row {
  backend: string;
  workers: number;
  variant: 'A' | 'B';
  preset: string;
  clock: string;
  env: string;
  step: number | 'median';
  rows: number;
  prompt_tokens: number;
  response_tokens: number;
  rollout_s: number;
  logprob_s: number;
  update_s: number;
  step_s: number;
  tokens_per_s: number;
  /** perf/max_memory_allocated_gb (GPU backends; NaN elsewhere). */
  gpu_mem_gb: number;
}

const USAGE = `Usage: npm run bench:rl -- [options]
Times the real trainer's RL steps (rollout, log-probs, update) from the shipped warm start.

Options:
  --preset NAME     preset to train (default sampo)
  --env NAME        environment (default sokoban)
  --steps N         timed RL steps, ≥ 1 (default 4; the first is a warm-up left out of the median)
  --clock wall|cpu  wall seconds (default) or this process's CPU seconds (robust on a loaded machine)
  --set key=value   a config override (repeatable), e.g. --set compute.logProbEngine=onnxruntime
  --backends A,B    training backends to compare: tensorflow-gpu, tensorflow, wasm (default: those this machine has)
  --workers A,B     data-parallel gradient workers K to compare, run in turn, for every backend (default: 1 on
                    native TensorFlow; 1 and the machine's cores on wasm)
  --rounds N        repeat the backend × K sequence N times, medians over all rounds (default 1)
  --vs key=value    a variant B (repeatable): each K also runs with these overrides, right after A
  --json            one JSON object per line (per step, then the median)
  --help, -h        this help`;

const values = benchArgs('rl', USAGE, {
  preset: { type: 'string', default: 'sampo' },
  env: { type: 'string', default: 'sokoban' },
  steps: { type: 'string', default: '4' },
  clock: { type: 'string', default: 'wall' },
  set: { type: 'string', multiple: true },
  workers: { type: 'string' },
  backends: { type: 'string' },
  rounds: { type: 'string', default: '1' },
  vs: { type: 'string', multiple: true },
  json: { type: 'boolean', default: false },
});

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  if (n === 0) return NaN;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

async function main(): Promise<void> {
  silenceTfjsBanner();
  const timed = Number(values.steps);
  if (!Number.isInteger(timed) || timed < 1) usageError('rl', USAGE, `--steps: expected an integer ≥ 1, got "${values.steps}"`);
  if (values.clock !== 'wall' && values.clock !== 'cpu') usageError('rl', USAGE, `--clock: expected wall or cpu, got "${values.clock}"`);
  const now =
    values.clock === 'cpu'
      ? (): number => {
          const u = process.cpuUsage();
          return (u.user + u.system) / 1000;
        }
      : (): number => performance.now();
  const { overrides, issues: setIssues } = parseSetArgs(values.set ?? []);
  if (setIssues.length > 0) throw new Error(setIssues.map((i) => i.message).join('; '));
  const { overrides: vsOverrides, issues: vsIssues } = parseSetArgs(values.vs ?? []);
  if (vsIssues.length > 0) usageError('rl', USAGE, `--vs: ${vsIssues.map((i) => i.message).join('; ')}`);
  // +1 warm-up step, +1 final step (validation) that is not timed.
  const { config, issues } = resolveConfig(values.preset!, values.env!, {
    'training.steps': timed + 2,
    'training.validateEvery': 0,
    'training.valEpisodes': 1,
    'training.checkpointEvery': 0,
    'training.sampleTrajectories': 0,
    ...overrides,
  });
  if (!config) throw new Error(issues.map((i) => `${i.field}: ${i.message}`).join('; '));
  const variants: Array<{ name: 'A' | 'B'; config: typeof config }> = [{ name: 'A', config }];
  if (values.vs && values.vs.length > 0) {
    const b = resolveConfig(values.preset!, values.env!, {
      'training.steps': timed + 2,
      'training.validateEvery': 0,
      'training.valEpisodes': 1,
      'training.checkpointEvery': 0,
      'training.sampleTrajectories': 0,
      ...overrides,
      ...vsOverrides,
    });
    if (!b.config) usageError('rl', USAGE, `--vs: ${b.issues.map((i) => `${i.field}: ${i.message}`).join('; ')}`);
    variants.push({ name: 'B', config: b.config });
  }
  const workerCounts = values.workers !== undefined ? values.workers.split(',').map(Number) : null;
  if (workerCounts?.some((k) => !Number.isInteger(k) || k < 1))
    usageError('rl', USAGE, `--workers: expected worker counts ≥ 1 like 1,2, got "${values.workers}"`);
  const rounds = Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1) usageError('rl', USAGE, `--rounds: expected an integer ≥ 1, got "${values.rounds}"`);
  const KNOWN = ['tensorflow-gpu', 'tensorflow', 'wasm'] as const;
  type Backend = (typeof KNOWN)[number];
  let backends: Backend[];
  const skipped: string[] = [];
  if (values.backends !== undefined) {
    const asked = values.backends.split(',');
    const bad = asked.filter((b) => !(KNOWN as readonly string[]).includes(b));
    if (bad.length) usageError('rl', USAGE, `--backends: unknown backend ${bad.join(', ')}; known: ${KNOWN.join(', ')}`);
    backends = asked as Backend[];
  } else {
    // Every backend this machine has, probed in this process (a forced backend that fails is reported and skipped).
    backends = [];
    for (const b of KNOWN) {
      try {
        await initBackend(b);
        backends.push(b);
      } catch (e) {
        skipped.push(
          `${b}: ${(e as Error).message.replace(/^compute\.backend "[^"]+" is not available on this machine: /, '').replace(/\. Use compute\.backend.*$/, '')}`,
        );
      }
    }
  }
  const combos: Array<{ backend: Backend; K: number }> = [];
  for (const b of backends)
    for (const K of workerCounts ?? (b === 'wasm' ? [...new Set([1, Math.max(1, cpus().length)])] : [1])) combos.push({ backend: b, K });
  const all: Row[] = [];
  const steps: Row[] = [];
  const walls: string[] = [];
  const details = new Map<string, string>();
  for (let round = 1; round <= rounds; round++)
    for (const { backend, K } of combos)
      for (const variant of variants) {
        const compute = await setupCompute({
          backend,
          rolloutEngine: config.compute.rolloutEngine,
          intraOpThreads: config.compute.intraOpThreads,
          interOpThreads: config.compute.interOpThreads,
          rolloutPrecision: config.compute.rolloutPrecision,
        });
        details.set(backend, compute.info.detail);
        const records: MetricRecord[] = [];
        const tag = `${backend} K=${K}${variants.length > 1 ? variant.name : ''}${rounds > 1 ? ` round ${round}` : ''}`;
        const hooks: TrainerHooks = {
          onMetrics: (r) => {
            records.push(r);
            if (!values.json)
              process.stderr.write(
                `${tag} step ${r.step}: ${r.values['batch/rows']} rows, ${r.values['perf/step_s'].toFixed(2)} s (${values.clock})\n`,
              );
          },
          onTrajectory: () => undefined,
          onCheckpoint: async () => undefined,
          onStatus: (s) => {
            if (!values.json && s.message) process.stderr.write(`[${s.phase}] ${s.message}\n`);
          },
          checkControl: async () => 'continue',
        };
        const t0 = performance.now();
        const cfgK = { ...variant.config, compute: { ...variant.config.compute, backend, workers: K } };
        await runTraining(
          cfgK,
          {
            clock: { now },
            compute: {
              info: compute.info,
              createRolloutEngine: compute.createRolloutEngine,
              workers: compute.workers,
              createGradientPool: compute.createGradientPool,
              memoryGb: compute.memoryGb,
            },
            loadWarmStart: shippedLoaderFor(cfgK),
          },
          hooks,
        );
        const wall = (performance.now() - t0) / 1000;
        const rows: Row[] = records.slice(0, timed + 1).map((r) => {
          const v = r.values;
          const n = v['batch/rows'];
          return {
            backend,
            workers: K,
            variant: variant.name,
            preset: config.preset,
            clock: values.clock!,
            env: config.env.name,
            step: r.step,
            rows: n,
            prompt_tokens: Math.round(v['prompt_length/mean'] * n),
            response_tokens: Math.round(v['response_length/mean'] * n),
            rollout_s: v['perf/rollout_s'],
            logprob_s: v['perf/logprob_s'],
            update_s: v['perf/update_s'],
            step_s: v['perf/step_s'],
            tokens_per_s: v['perf/tokens_per_s'],
            gpu_mem_gb: v['perf/max_memory_allocated_gb'],
          };
        });
        steps.push(...rows);
        walls.push(`${tag} ${wall.toFixed(0)} s`);
      }
  // Medians per (backend, K, variant) over every round's timed steps (each round's first step is a warm-up).
  for (const { backend, K } of combos)
    for (const variant of variants) {
      const mine = steps.filter((r) => r.backend === backend && r.workers === K && r.variant === variant.name);
      const steady = mine.filter((r) => r.step !== 1);
      all.push(...mine);
      const med: Row = {
        backend,
        workers: K,
        variant: variant.name,
        preset: config.preset,
        clock: values.clock!,
        env: config.env.name,
        step: 'median',
        rows: median(steady.map((r) => r.rows)),
        prompt_tokens: median(steady.map((r) => r.prompt_tokens)),
        response_tokens: median(steady.map((r) => r.response_tokens)),
        rollout_s: median(steady.map((r) => r.rollout_s)),
        logprob_s: median(steady.map((r) => r.logprob_s)),
        update_s: median(steady.map((r) => r.update_s)),
        step_s: median(steady.map((r) => r.step_s)),
        tokens_per_s: median(steady.map((r) => r.tokens_per_s)),
        gpu_mem_gb: Math.max(...mine.map((r) => r.gpu_mem_gb)),
      };
      all.push(med);
    }
  if (values.json) {
    for (const r of all) process.stdout.write(`${JSON.stringify(r)}\n`);
    return;
  }
  const c = config;
  process.stdout.write(
    `${c.preset} on ${c.env.name}: B ${c.rollout.tasksPerStep} × G ${c.rollout.groupSize}, history ${c.env.historyWindow}, maxSteps ${c.env.maxSteps}, ` +
      `model ${c.model.size}, filter ${c.algorithm.filter.enabled ? `on (${c.algorithm.filter.maxRounds} rounds, cold start ${c.algorithm.filter.coldStartSteps})` : 'off'}, ` +
      `KL ${c.algorithm.kl.enabled ? 'on' : 'off'}, old log-probs on ${c.compute.logProbEngine}, ref log-probs on ${c.compute.refLogProbEngine}, mini-batch ${c.optim.miniBatchRows} rows\n` +
      `${[...details.values()].join('\n')}\n${skipped.length ? `not run: ${skipped.join('; ')}\n` : ''}${cpus().length} cores, load average ${loadavg()
        .map((x) => x.toFixed(1))
        .join(
          ' ',
        )}, wall ${walls.join(', ')} (incl. warm start); peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB (this process, all rows); step times in ${values.clock === 'cpu' ? 'process CPU seconds' : 'wall seconds'}\n\n`,
  );
  if (variants.length > 1) process.stdout.write(`variant B: ${(values.vs ?? []).join(' ')}\n\n`);
  const onGpu = all.some((r) => Number.isFinite(r.gpu_mem_gb));
  const head = [
    'backend',
    'K',
    'var',
    'step',
    'rows',
    'prompt_tok',
    'resp_tok',
    'rollout_s',
    'logprob_s',
    'update_s',
    'step_s',
    'tok/s',
    ...(onGpu ? ['gpu_GB'] : []),
  ];
  const fmt = (r: Row): string[] => [
    r.backend,
    String(r.workers),
    r.variant,
    String(r.step),
    String(r.rows),
    String(r.prompt_tokens),
    String(r.response_tokens),
    r.rollout_s.toFixed(2),
    r.logprob_s.toFixed(2),
    r.update_s.toFixed(2),
    r.step_s.toFixed(2),
    r.tokens_per_s.toFixed(0),
    ...(onGpu ? [Number.isFinite(r.gpu_mem_gb) ? r.gpu_mem_gb.toFixed(2) : '–'] : []),
  ];
  const table = [head, ...all.map(fmt)];
  const w = head.map((_, i) => Math.max(...table.map((t) => t[i].length)));
  for (const t of table) process.stdout.write(`${t.map((x, i) => x.padStart(w[i])).join('  ')}\n`);
  process.stdout.write(
    `(step 1 is a warm-up and is left out of the median${rounds > 1 ? '; the steps of every round are listed, then the median over all rounds' : ''})\n`,
  );
  const meds = all.filter((r) => r.step === 'median');
  const x = (a: number, b: number): string => (b > 0 ? `${(a / b).toFixed(2)}×` : '–');
  for (const backend of backends) {
    const base = meds.find((r) => r.backend === backend && r.workers === 1 && r.variant === 'A');
    if (!base) continue;
    for (const m of meds.filter((r) => r.backend === backend && r.workers !== 1 && r.variant === 'A')) {
      process.stdout.write(
        `${backend} K=${m.workers} vs K=1 (medians): step ${x(base.step_s, m.step_s)} faster (log-probs ${x(base.logprob_s, m.logprob_s)}, update ${x(base.update_s, m.update_s)}), tokens/s ${x(m.tokens_per_s, base.tokens_per_s)}\n`,
      );
    }
  }
  const nat = meds.find((r) => r.backend !== 'wasm' && r.workers === 1 && r.variant === 'A');
  if (nat) {
    for (const w of meds.filter((r) => r.backend === 'wasm' && r.variant === 'A')) {
      process.stdout.write(
        `${nat.backend} K=1 vs wasm K=${w.workers} (medians): step ${x(w.step_s, nat.step_s)} faster (rollout ${x(w.rollout_s, nat.rollout_s)}, log-probs ${x(w.logprob_s, nat.logprob_s)}, update ${x(w.update_s, nat.update_s)})\n`,
      );
    }
  }
  for (const b of meds.filter((r) => r.variant === 'B')) {
    const a = meds.find((r) => r.backend === b.backend && r.workers === b.workers && r.variant === 'A')!;
    process.stdout.write(
      `${b.backend} K=${b.workers}, A vs B (medians): A's step is ${x(b.step_s, a.step_s)} faster than B's (log-probs ${x(b.logprob_s, a.logprob_s)}, update ${x(b.update_s, a.update_s)})\n`,
    );
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`bench:rl: ${(e as Error).message}\n`);
  process.exit(1);
});
