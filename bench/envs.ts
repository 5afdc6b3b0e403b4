/**
 * Environment benchmark: env step throughput on one core, expert and random success, episode
 * lengths, on the fixed held-out seeds.
 *
 *   npm run bench:envs                       table
 *   npm run bench:envs -- --json             one JSON object per line
 *   npm run bench:envs -- --env sokoban --episodes 1000 --steps 300000
 *
 * steps_per_sec times `env.step(response)` alone (parse + transition + next observation and admissible
 * list), driven by random-policy responses prepared outside the timed region; resets are timed separately
 * (resets_per_sec) because Sokoban's generation (reverse play + BFS) dominates a reset.
 */
import { performance } from 'node:perf_hooks';
import { benchArgs, usageError } from './args';
import { createEnv, ENV_CATALOG, expertEpisode, heldOutSeeds, randomAction, randomEpisode } from '../src/core/envs/index';
import { Rng } from '../src/core/util/rng';

interface Row {
  env: string;
  steps_per_sec: number;
  resets_per_sec: number;
  expert_success: number;
  random_success: number;
  mean_expert_steps: number;
  expert_score: number;
  random_score: number;
  episodes: number;
}

function throughput(name: string, targetSteps: number): { steps: number; resets: number } {
  const env = createEnv(name);
  const rng = new Rng(1234);
  let stepTime = 0;
  let resetTime = 0;
  let steps = 0;
  let resets = 0;
  let seed = 0;
  // Warm-up so the JIT has compiled the hot paths before timing.
  for (let i = 0; i < 200; i++) randomEpisode(env, i, rng, 0);
  while (steps < targetSteps) {
    let t = performance.now();
    env.reset(seed++);
    resetTime += performance.now() - t;
    resets++;
    while (!env.isDone()) {
      const response = randomAction(env, rng);
      t = performance.now();
      env.step(response);
      stepTime += performance.now() - t;
      steps++;
    }
  }
  return { steps: (steps / stepTime) * 1000, resets: (resets / resetTime) * 1000 };
}

function measure(name: string, episodes: number, targetSteps: number): Row {
  const seeds = heldOutSeeds(episodes);
  const env = createEnv(name);
  let ew = 0;
  let es = 0;
  let escore = 0;
  for (const s of seeds) {
    const ep = expertEpisode(env, s, 0);
    if (ep.won) ew++;
    es += ep.turns.length;
    escore += ep.score;
  }
  const rng = new Rng(99);
  let rw = 0;
  let rscore = 0;
  for (const s of seeds) {
    const ep = randomEpisode(env, s, rng, 0);
    if (ep.won) rw++;
    rscore += ep.score;
  }
  const tp = throughput(name, targetSteps);
  return {
    env: name,
    steps_per_sec: Math.round(tp.steps),
    resets_per_sec: Math.round(tp.resets),
    expert_success: ew / seeds.length,
    random_success: rw / seeds.length,
    mean_expert_steps: es / seeds.length,
    expert_score: escore / seeds.length,
    random_score: rscore / seeds.length,
    episodes: seeds.length,
  };
}

const USAGE = `Usage: npm run bench:envs -- [options]
Environment step and reset throughput on one core, expert and random success on the held-out seeds.

Options:
  --env NAME       one environment (default: every environment in the catalog)
  --episodes N     episodes for the success columns (default 500)
  --steps N        env.step calls timed (default 200000)
  --json           one JSON object per line
  --help, -h       this help`;

function main(): void {
  const values = benchArgs('envs', USAGE, {
    json: { type: 'boolean' },
    env: { type: 'string' },
    episodes: { type: 'string' },
    steps: { type: 'string' },
  });
  const known: readonly string[] = ENV_CATALOG.map((e) => e.name);
  if (values.env && !known.includes(values.env))
    usageError('envs', USAGE, `--env ${values.env}: unknown; known environments: ${known.join(', ')}`);
  const names = values.env ? [values.env] : known;
  const episodes = values.episodes ? Number(values.episodes) : 500;
  const steps = values.steps ? Number(values.steps) : 200_000;
  for (const [flag, v] of [
    ['--episodes', episodes],
    ['--steps', steps],
  ] as const) {
    if (!Number.isInteger(v) || v < 1) usageError('envs', USAGE, `${flag} ${String(v)}: expected a whole number ≥ 1`);
  }
  const rows: Row[] = [];
  for (const n of names) {
    const row = measure(n, episodes, steps);
    rows.push(row);
    if (values.json) process.stdout.write(`${JSON.stringify(row)}\n`);
  }
  if (values.json) return;
  const head = ['env', 'steps/s', 'resets/s', 'expert win', 'random win', 'expert steps', 'expert score', 'random score', 'episodes'];
  const lines = rows.map((r) => [
    r.env,
    r.steps_per_sec.toLocaleString('en-US'),
    r.resets_per_sec.toLocaleString('en-US'),
    `${(100 * r.expert_success).toFixed(1)} %`,
    `${(100 * r.random_success).toFixed(1)} %`,
    r.mean_expert_steps.toFixed(2),
    r.expert_score.toFixed(3),
    r.random_score.toFixed(3),
    String(r.episodes),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(fmt(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const l of lines) console.log(fmt(l));
  console.log(
    `\nheld-out seeds (in_distribution), ${episodes} episodes per env; throughput over ≥ ${steps.toLocaleString('en-US')} random-policy steps, one core.`,
  );
}

main();
