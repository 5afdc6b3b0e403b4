/**
 * `npm run bench:ladder-run [-- --base REV] [-- --steps 10] [-- --arms fp32,int8] [-- --repeats 1] [-- --json]`
 *
 * What one pressure-ladder run costs, and proof that a speed-up changed none of its numbers. Each run is the CLI's
 * `train --preset sampo --env sokoban --seed 1 --steps N --set training.pressure=1` (the ladder's level-1 run, with
 * `--set compute.rolloutPrecision=int8` for the int8 arm of resources/studies/rollout-mismatch.arms), in a child
 * process under /usr/bin/time, on a fresh data dir.
 *
 * --base REV also trains every run with the checkout at REV (`git archive REV` into a temporary folder, this
 * checkout's node_modules linked in), alternating base and this checkout so the machine's load weighs on both alike,
 * and exits 1 unless both give the same outputs: metrics.jsonl with the wall-clock values left out (perf/* except
 * perf/total_tokens, the trainer's only non-deterministic outputs, trainer.ts), trajectories.jsonl, and the final
 * checkpoint's file hashes (its meta.json), state.json read without its wall seconds. Reported per run: user + system CPU seconds and wall seconds of the
 * whole process (all its threads: tfjs-node's and onnxruntime's pools), the 1-minute load average before and after.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { benchArgs, usageError } from './args';

const USAGE = `Usage: npm run bench:ladder-run [-- --base REV] [-- --steps N] [-- --arms fp32,int8] [-- --repeats N] [-- --json]
CPU and wall seconds of one pressure-ladder training run (sampo, sokoban, seed 1, training.pressure=1), and with
--base the same runs on the checkout at REV, alternated, with their outputs compared (exit 1 when they differ).
  --base      a git revision to compare with (default: none, this checkout only)
  --steps     RL steps per run (default 10)
  --arms      fp32 and/or int8 (compute.rolloutPrecision), comma separated (default fp32,int8)
  --repeats   runs per arm and checkout (default 1)
  --keep      keep the data dirs (printed) instead of removing them
  --digest    DIR: only print the outputs digest of the one run in data dir DIR (to compare runs trained by hand)
  --json      one JSON object per line
  --help, -h  this help
`;

const ARMS: Record<string, string[]> = { fp32: [], int8: ['--set', 'compute.rolloutPrecision=int8'] };

interface Result {
  checkout: string;
  arm: string;
  repeat: number;
  cpu_s: number;
  wall_s: number;
  max_rss_mb: number;
  load_avg_1m: [number, number];
  /** sha256 of the run's deterministic outputs (see outputsDigest). */
  outputs: string;
}

/** sha256 over metrics.jsonl without wall-clock values, trajectories.jsonl and the final checkpoint's hashes. */
function outputsDigest(dataDir: string): string {
  const runs = join(dataDir, 'runs');
  const ids = readdirSync(runs);
  if (ids.length !== 1) throw new Error(`${runs}: expected one run, found ${ids.length}`);
  const run = join(runs, ids[0]);
  const h = createHash('sha256');
  for (const line of readFileSync(join(run, 'metrics.jsonl'), 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const rec = JSON.parse(line) as { step: number; values: Record<string, unknown> };
    const values = Object.entries(rec.values).filter(([k]) => !k.startsWith('perf/') || k === 'perf/total_tokens');
    h.update(JSON.stringify({ step: rec.step, values }) + '\n');
  }
  h.update(readFileSync(join(run, 'trajectories.jsonl')));
  const cks = readdirSync(join(run, 'checkpoints')).sort();
  const ck = join(run, 'checkpoints', cks[cks.length - 1]);
  const meta = JSON.parse(readFileSync(join(ck, 'meta.json'), 'utf8')) as { sha256: Record<string, string> };
  // state.json holds the run's wall seconds (totals.wallSeconds): compared without them, every other file by hash.
  const { 'state.json': _wall, ...hashes } = meta.sha256;
  const state = JSON.parse(readFileSync(join(ck, 'state.json'), 'utf8')) as { totals: Record<string, unknown> };
  delete state.totals.wallSeconds;
  h.update(JSON.stringify({ checkpoint: cks[cks.length - 1], hashes, state }));
  return h.digest('hex');
}

function trainOnce(root: string, arm: string, steps: number, dataDir: string): Omit<Result, 'checkout' | 'arm' | 'repeat' | 'outputs'> {
  const before = loadavg()[0];
  const args = ['-f', '%U %S %e %M', 'node', 'bin/arlarena.mjs', '--data-dir', dataDir, 'train', '--preset', 'sampo', '--env', 'sokoban'];
  args.push('--seed', '1', '--steps', String(steps), '--set', 'training.pressure=1', ...ARMS[arm]);
  const r = spawnSync('/usr/bin/time', args, { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`train in ${root} (${arm}) exited ${r.status}: ${r.stderr.slice(-2000)}`);
  const last = r.stderr.trim().split('\n').pop()!.trim().split(/\s+/).map(Number);
  return { cpu_s: last[0] + last[1], wall_s: last[2], max_rss_mb: Math.round(last[3] / 1024), load_avg_1m: [before, loadavg()[0]] };
}

function main(): void {
  const opts = benchArgs('ladder-run', USAGE, {
    base: { type: 'string' },
    steps: { type: 'string', default: '10' },
    arms: { type: 'string', default: 'fp32,int8' },
    repeats: { type: 'string', default: '1' },
    keep: { type: 'boolean' },
    digest: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (opts.digest) {
    process.stdout.write(`${outputsDigest(opts.digest)}\n`);
    return;
  }
  const steps = Number(opts.steps);
  if (!Number.isInteger(steps) || steps < 1) usageError('ladder-run', USAGE, `--steps: expected an integer ≥ 1, got "${opts.steps}"`);
  const repeats = Number(opts.repeats);
  if (!Number.isInteger(repeats) || repeats < 1)
    usageError('ladder-run', USAGE, `--repeats: expected an integer ≥ 1, got "${opts.repeats}"`);
  const arms = opts.arms.split(',').map((a) => a.trim());
  for (const a of arms)
    if (!(a in ARMS)) usageError('ladder-run', USAGE, `--arms: unknown arm "${a}"; known: ${Object.keys(ARMS).join(', ')}`);
  if (!existsSync('/usr/bin/time')) usageError('ladder-run', USAGE, '/usr/bin/time is missing (Debian: apt-get install time)');

  const here = resolve('.');
  const work = mkdtempSync(join(tmpdir(), 'arl-ladder-run-'));
  const checkouts: Array<[string, string]> = [];
  if (opts.base) {
    const dir = join(work, 'base');
    execFileSync('mkdir', [dir]);
    execFileSync('sh', ['-c', `git archive "$1" | tar -x -C "$2"`, 'sh', opts.base, dir], { cwd: here });
    symlinkSync(join(here, 'node_modules'), join(dir, 'node_modules'));
    checkouts.push([`base ${opts.base}`, dir]);
  }
  checkouts.push(['this checkout', here]);

  const results: Result[] = [];
  try {
    for (let rep = 0; rep < repeats; rep++) {
      for (const arm of arms) {
        // Alternate which checkout goes first, so a load that rises or falls over the sitting weighs on both.
        const order = rep % 2 === 0 ? checkouts : [...checkouts].reverse();
        for (const [name, root] of order) {
          const dataDir = join(work, `${name.replace(/\W+/g, '-')}-${arm}-${rep}`);
          const t = trainOnce(root, arm, steps, dataDir);
          const row: Result = { checkout: name, arm, repeat: rep, ...t, outputs: outputsDigest(dataDir) };
          results.push(row);
          if (!opts.keep) rmSync(dataDir, { recursive: true, force: true });
          process.stdout.write(
            opts.json
              ? JSON.stringify(row) + '\n'
              : `${name.padEnd(22)} ${arm.padEnd(5)} #${rep}  CPU ${row.cpu_s.toFixed(1)} s  wall ${row.wall_s.toFixed(1)} s  ` +
                  `RSS ${row.max_rss_mb} MB  load ${row.load_avg_1m.map((x) => x.toFixed(1)).join('→')}  outputs ${row.outputs.slice(0, 16)}\n`,
          );
        }
      }
    }
  } finally {
    if (opts.keep) process.stdout.write(`data dirs kept in ${work}\n`);
    else rmSync(work, { recursive: true, force: true });
  }
  const differ = arms.filter((a) => new Set(results.filter((r) => r.arm === a).map((r) => r.outputs)).size > 1);
  if (differ.length > 0) {
    process.stderr.write(`bench:ladder-run: the outputs differ (${differ.join(', ')}): the change altered the run's numbers\n`);
    process.exit(1);
  }
  process.stdout.write(`outputs identical across ${results.length} runs\n`);
}

main();
