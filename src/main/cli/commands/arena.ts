import { UsageError, parseCommandArgs, type CliCommand } from '../types';
import { intArg, modelArg, parseSets, resolveOrUsage, trainInStore, progressLine } from '../../training/cliRun';
import { RunStore } from '../../store/runStore';
import { PRESET_NAMES } from '../../../core/config/index';
import { ENV_CATALOG } from '../../../core/envs/index';

const usage = `Usage: arlarena arena [--envs a,b] [--presets p,q,…] [--seeds N] [--steps N] [--model SIZE] [--set key=value …] [--json]

The paper's comparison on our testbed: every preset × env × seed trained into the run store (one after the
other), then a table like the paper's — held-out success and score per method and environment (mean ± std over
seeds, from each run's last validation), collapse alerts per run, and wall time.
  --envs     comma-separated environments (default sokoban)
  --presets  comma-separated presets (default grpo,cispo,sapo,gspo,gigpo,dapo_grpo,sampo)
  --seeds N  seeds 1..N per (preset, env) (default 3)
  --steps N  RL steps per run (default: each preset's training.steps)
  --json     one JSON object per run, then one with the table`;

interface Cell {
  preset: string;
  env: string;
  seed: number;
  runId: string;
  status: string;
  success: number;
  score: number;
  alerts: number;
  wallSeconds: number;
}

function listArg(name: string, raw: string, valid: readonly string[]): string[] {
  const items = raw.split(',').map((s) => s.trim()).filter(Boolean);
  if (items.length === 0) throw new UsageError(`--${name}: empty list; valid: ${valid.join(', ')}`);
  for (const it of items) if (!valid.includes(it)) throw new UsageError(`--${name}: unknown "${it}"; valid: ${valid.join(', ')}`);
  return items;
}

function meanStd(xs: number[]): string {
  const f = xs.filter(Number.isFinite);
  if (f.length === 0) return 'n/a';
  const m = f.reduce((a, b) => a + b, 0) / f.length;
  const sd = f.length > 1 ? Math.sqrt(f.reduce((a, b) => a + (b - m) * (b - m), 0) / (f.length - 1)) : 0;
  return `${m.toFixed(2)} ± ${sd.toFixed(2)}`;
}

const arena: CliCommand = {
  summary: "run the paper's method comparison (presets × envs × seeds) and print its table",
  usage,
  async run(args, ctx) {
    const { values } = parseCommandArgs({
      args,
      options: {
        envs: { type: 'string', default: 'sokoban' },
        presets: { type: 'string', default: 'grpo,cispo,sapo,gspo,gigpo,dapo_grpo,sampo' },
        seeds: { type: 'string', default: '3' },
        steps: { type: 'string' },
        model: { type: 'string' },
        set: { type: 'string', multiple: true },
        json: { type: 'boolean', default: false },
      },
      strict: true,
      allowPositionals: false,
    });
    const envs = listArg('envs', values.envs!, ENV_CATALOG.map((e) => e.name));
    const presets = listArg('presets', values.presets!, PRESET_NAMES);
    const seeds = intArg('seeds', values.seeds, 1)!;
    const steps = intArg('steps', values.steps, 1);
    const model = modelArg(values.model);
    const base = parseSets(values.set ?? []);
    if (steps !== undefined) base['training.steps'] = steps;
    if (model !== undefined) base['model.size'] = model;
    // Validate every combination before training anything.
    const plan = envs.flatMap((env) => presets.flatMap((preset) => Array.from({ length: seeds }, (_, i) => ({ env, preset, seed: i + 1, config: resolveOrUsage({ preset, env, overrides: { ...base, seed: i + 1 } }) }))));
    const json = values.json === true;
    const cells: Cell[] = [];
    for (const [k, p] of plan.entries()) {
      if (!json) ctx.stderr.write(`[${k + 1}/${plan.length}] ${p.preset} · ${p.env} · seed ${p.seed}\n`);
      const { record } = await trainInStore(ctx.dataDir, p.config, {
        tags: ['arena'],
        onProgress: (id, pr) => {
          if (ctx.isTTY && !json) ctx.stderr.write(`\r${progressLine(id, pr)}\x1b[K`);
        },
      });
      if (ctx.isTTY && !json) ctx.stderr.write('\n');
      const store = await RunStore.open(ctx.dataDir);
      let lastVal: Record<string, number> = {};
      let wall = NaN;
      try {
        const ms = await store.readMetrics(record.id);
        for (const m of ms) {
          if (Number.isFinite(m.values['val/success_rate'])) lastVal = { ...m.values };
          if (Number.isFinite(m.values['perf/wall_s'])) wall = m.values['perf/wall_s'];
        }
      } finally {
        await store.close();
      }
      const cell: Cell = {
        preset: p.preset,
        env: p.env,
        seed: p.seed,
        runId: record.id,
        status: record.status,
        success: lastVal['val/success_rate'] ?? NaN,
        score: lastVal['val/score_mean'] ?? NaN,
        alerts: record.alertCount,
        wallSeconds: wall,
      };
      cells.push(cell);
      if (json) ctx.stdout.write(`${JSON.stringify(cell)}\n`);
    }
    const table = presets.map((preset) => {
      const row: Record<string, string | number> = { method: preset };
      for (const env of envs) {
        const cs = cells.filter((c) => c.preset === preset && c.env === env);
        row[`${env} success`] = meanStd(cs.map((c) => 100 * c.success));
        row[`${env} score`] = meanStd(cs.map((c) => c.score));
      }
      const mine = cells.filter((c) => c.preset === preset);
      row.alerts = mine.map((c) => c.alerts).join('/');
      row['wall min'] = meanStd(mine.map((c) => c.wallSeconds / 60));
      return row;
    });
    if (json) {
      ctx.stdout.write(`${JSON.stringify({ table, seeds, steps: steps ?? null })}\n`);
      return cells.every((c) => c.status === 'completed') ? 0 : 1;
    }
    const cols = Object.keys(table[0]);
    const widths = cols.map((c) => Math.max(c.length, ...table.map((r) => String(r[c]).length)));
    const line = (vals: string[]): string => vals.map((v, i) => v.padEnd(widths[i])).join('  ');
    ctx.stdout.write(`${line(cols)}\n${line(widths.map((w) => '─'.repeat(w)))}\n`);
    for (const r of table) ctx.stdout.write(`${line(cols.map((c) => String(r[c])))}\n`);
    ctx.stdout.write(`\nheld-out success (%) and score from each run's last validation, mean ± std over ${seeds} seed(s); alerts per run (seed order); runs tagged "arena" in ${ctx.dataDir}\n`);
    return cells.every((c) => c.status === 'completed') ? 0 : 1;
  },
};

export default arena;
