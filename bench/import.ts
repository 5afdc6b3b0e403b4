/**
 * Import benchmark: how fast the lab imports real training logs, and how much memory it takes.
 *
 *   npm run bench:import                       table
 *   npm run bench:import -- --json             one JSON object per line
 *   npm run bench:import -- --mb 20 --scalars 200000 --inputs /tmp/arl-bench-import
 *
 * Inputs are generated into a temporary folder at bench time (or into --inputs DIR, where they are kept and
 * reused by the next run):
 *   verl-console  a real verl log (../shared/data/real-runs/verl-console, 435 GRPO steps) replicated to --mb,
 *                 its training section repeated with step numbers shifted so they keep increasing;
 *   tensorboard   --scalars simple_value scalars over 20 tags, one Event per scalar (as PyTorch's SummaryWriter
 *                 and the HF Trainer callback write them), written by TensorBoard's own EventFileWriter through
 *                 the peer python (tests/peers/tensorboard_peer.py);
 *   jsonl         a flat JSONL metric stream (step + 24 metrics a line, Tinker-style) of --mb;
 *   wandb         one offline W&B run of about --mb written by the W&B SDK itself (wandb 0.31's wandb-core,
 *                 through tests/peers/trackers_peer.py in the `trackers` venv): 100 metrics a step;
 *   mlflow-sqlite an MLflow SQLite store with --mlflow-rows metric rows in one run (100 keys a step): MLflow's
 *                 client writes the first 20 000 rows, the rest are those rows copied with shifted steps in SQL
 *                 (MLflow's client needs ~9 minutes per million rows here). Its rate is in rows/s.
 *
 * Each input is measured in a child process of its own, so peak RSS (process.resourceUsage().maxRSS) is that
 * input's alone, twice: `import` runs the real path (importLogs from src/main/imports into a fresh run store:
 * detect, parse, map, write), `parse` only streams the file through the format's parser (the pure cost). The
 * child's start-up (tsx, module loading) is outside the timed region but inside the RSS. Rows also carry the CPU
 * seconds of the timed region (all threads, and the main thread's alone) and the load average, because on a shared
 * machine the wall clock measures the queue for a core as much as the importer.
 */
import { spawnSync, execFileSync } from 'node:child_process';
import { createReadStream, createWriteStream, existsSync, readFileSync, type WriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, realpath, rm, stat } from 'node:fs/promises';
import { once } from 'node:events';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { benchArgs, usageError } from './args';

const USAGE = `Usage: npm run bench:import -- [--json] [--mb N] [--scalars N] [--mlflow-rows N] [--inputs DIR] [--only FORMATS]
  Imports a replicated real verl console log, a TensorBoard event file written by TensorBoard's own writer and
  a flat JSONL stream, each in a child process, through the real import path and through the parser alone.
  --json         one JSON object per line (format, mode, bytes, steps, seconds, mb_per_s, peak_rss_mb, …)
  --mb N         size of the text inputs in MB (default 100)
  --scalars N    scalars in the TensorBoard file (default 1000000)
  --mlflow-rows N  metric rows in the MLflow SQLite store (default 1000000)
  --inputs DIR   generate the inputs into DIR and keep them (reused when already there); default: a temp dir.
                 TensorBoard's pure-Python writer needs minutes for 1M scalars (its CRC32C is pure Python)
  --only LIST    comma-separated subset of verl-console,tensorboard,jsonl,wandb,mlflow-sqlite
  --help         this text`;

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const FORMATS = ['verl-console', 'tensorboard', 'jsonl', 'wandb', 'mlflow-sqlite'] as const;
type BenchFormat = (typeof FORMATS)[number];
const GOALS = { textMbPerS: 50, tbScalarsPerS: 2_000_000, mlflowRowsPerS: 1_000_000, peakRssMb: 300 };
const TB_TAGS = 20;

interface Row {
  format: BenchFormat;
  mode: 'import' | 'parse';
  bytes: number;
  steps: number;
  scalars: number;
  seconds: number;
  /** CPU seconds (user + system) of the timed region: on a machine shared with other work, the wall time
   *  includes waiting for a core, the CPU time does not. */
  cpu_seconds: number;
  /**
   * CPU seconds of the main thread alone (Linux: /proc/self/task/<pid>/stat, 10 ms ticks; null elsewhere): the
   * import's critical path when its helper threads (a SQLite reader, the file hash) have cores of their own.
   */
  main_cpu_seconds: number | null;
  mb_per_s: number;
  scalars_per_s: number;
  peak_rss_mb: number;
  /** The machine's 1-minute load average when the measurement ended (os.loadavg). */
  load_avg: number;
  skipped: Record<string, number>;
}

// ---------------------------------------------------------------- child: one measurement in this process

/** The main thread's user + system CPU seconds so far (its task's utime and stime, in clock ticks), or null off Linux. */
function mainThreadCpu(): number | null {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    // Fields after the command's closing parenthesis: state is field 3, utime 14 and stime 15.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return null;
  }
}

async function child(mode: 'import' | 'parse', format: BenchFormat, path: string, scalarsHint: number): Promise<void> {
  const bytes = (await stat(path)).size;
  let steps = 0;
  let scalars = 0;
  let skipped: Record<string, number> = {};
  let seconds: number;
  let cpu0 = process.cpuUsage();
  let main0 = mainThreadCpu();
  if (mode === 'import') {
    const { RunStore } = await import('../src/main/store/runStore');
    const { importLogs } = await import('../src/main/imports/importLogs');
    const { importSources } = await import('../src/main/imports/importSources');
    const dataDir = await mkdtemp(join(tmpdir(), 'arl-bench-import-store-'));
    const store = await RunStore.open(dataDir);
    try {
      cpu0 = process.cpuUsage();
      main0 = mainThreadCpu();
      const t0 = performance.now();
      // Trackers' stores go through importSources (found by content, one lab run per tracker run).
      const r = format === 'wandb' || format === 'mlflow-sqlite' ? await importSources(store, [path]) : await importLogs(store, [path]);
      seconds = (performance.now() - t0) / 1000;
      steps = r.steps;
      skipped = r.skipped as Record<string, number>;
      scalars = format === 'tensorboard' || format === 'mlflow-sqlite' ? scalarsHint : 0;
    } finally {
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  } else {
    const formats = await import('../src/core/formats/index');
    const onStep = () => {
      steps++;
    };
    cpu0 = process.cpuUsage();
    main0 = mainThreadCpu();
    const t0 = performance.now();
    if (format === 'mlflow-sqlite') {
      const { scanTrackers } = await import('../src/main/imports/trackers');
      for (const run of (await scanTrackers(path)).runs) {
        await run.read({
          add: (s) => {
            steps++;
            scalars += Object.keys(s.values).length;
          },
          afterChunk: async () => undefined,
          // As the import's feed: a run whose rows are out of step order is read again from its start.
          again: async () => {
            steps = 0;
            scalars = 0;
          },
        });
      }
    } else if (format === 'wandb') {
      // With node:zlib's CRC-32, as the import path (main/imports/trackers.ts) reads .wandb files.
      const { crc32 } = await import('node:zlib');
      const p = formats.createWandbParser(onStep, { crc32 });
      for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) p.push(chunk as Buffer);
      p.end();
      skipped = { ...p.skipped };
    } else if (format === 'tensorboard') {
      const p = formats.createByteParser('tensorboard', onStep) as ReturnType<typeof formats.createByteParser> & { scalars?: number };
      for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) p.push(chunk as Buffer);
      p.end();
      scalars = p.scalars ?? 0;
      skipped = { ...p.skipped };
    } else {
      const p = formats.createLineParser(format === 'jsonl' ? 'jsonl' : 'verl-console', onStep);
      const decoder = new TextDecoder();
      let rest = '';
      for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
        const text = rest + decoder.decode(chunk as Buffer, { stream: true });
        let from = 0;
        for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', from)) {
          p.push(text.charCodeAt(nl - 1) === 13 ? text.slice(from, nl - 1) : text.slice(from, nl));
          from = nl + 1;
        }
        rest = text.slice(from);
      }
      if (rest.length > 0) p.push(rest);
      p.end();
      skipped = { ...p.skipped };
    }
    seconds = (performance.now() - t0) / 1000;
  }
  const cpu = process.cpuUsage(cpu0);
  const main1 = mainThreadCpu();
  const row: Row = {
    format,
    mode,
    bytes,
    steps,
    scalars,
    seconds: round(seconds, 3),
    cpu_seconds: round((cpu.user + cpu.system) / 1e6, 3),
    main_cpu_seconds: main0 !== null && main1 !== null ? round(main1 - main0, 2) : null,
    mb_per_s: round(bytes / 1e6 / seconds, 1),
    scalars_per_s: scalars > 0 ? Math.round(scalars / seconds) : 0,
    peak_rss_mb: round(process.resourceUsage().maxRSS / 1024, 1),
    load_avg: round(loadavg()[0], 1),
    skipped,
  };
  process.stdout.write(`${JSON.stringify(row)}\n`);
}

// ---------------------------------------------------------------- inputs

async function write(ws: WriteStream, s: string): Promise<void> {
  if (!ws.write(s)) await once(ws, 'drain');
}

async function finish(ws: WriteStream): Promise<void> {
  ws.end();
  await once(ws, 'finish');
}

/** The real verl GRPO log, its training section repeated (steps shifted) until the file reaches `bytes`. */
async function makeVerlConsole(out: string, bytes: number): Promise<void> {
  const src = join(ROOT, '..', 'shared', 'data', 'real-runs', 'verl-console', 'play-verl_verl_grpo_qwen2.5b_8gpu.log');
  const alt = '/work/shared/data/real-runs/verl-console/play-verl_verl_grpo_qwen2.5b_8gpu.log';
  const file = existsSync(src) ? src : alt;
  if (!existsSync(file))
    throw new Error(`the real verl log is missing (looked at ${src} and ${alt}); ../shared/data/real-runs is needed for this input`);
  const lines = (await readFile(file, 'utf8')).split('\n');
  const STEP = /\bstep:(\d+) - /;
  const first = lines.findIndex((l) => STEP.test(l));
  let last = lines.length - 1;
  while (last > first && !STEP.test(lines[last])) last--;
  const head = lines.slice(0, first).join('\n');
  const body = lines.slice(first, last + 1);
  const tail = lines.slice(last + 1).join('\n');
  let maxStep = 0;
  for (const l of body) {
    const m = STEP.exec(l);
    if (m) maxStep = Math.max(maxStep, Number(m[1]));
  }
  const ws = createWriteStream(out);
  await write(ws, `${head}\n`);
  let written = head.length + 1;
  for (let copy = 0; written < bytes; copy++) {
    const shift = copy * maxStep;
    const text = `${body.map((l) => l.replace(/\bstep:(\d+) - /g, (_, n: string) => `step:${Number(n) + shift} - `)).join('\n')}\n`;
    await write(ws, text);
    written += Buffer.byteLength(text);
  }
  await write(ws, tail);
  await finish(ws);
}

/** A flat JSONL metric stream (Tinker-style: a step key and metrics per line), deterministic values. */
async function makeJsonl(out: string, bytes: number): Promise<void> {
  const keys = [
    'loss',
    'reward/mean',
    'reward/std',
    'entropy',
    'kl',
    'grad_norm',
    'lr',
    'clip_frac',
    'response_len/mean',
    'response_len/max',
    'tokens_per_s',
    'time/step',
    'time/sample',
    'time/train',
    'adv/mean',
    'adv/std',
    'ratio/mean',
    'ratio/max',
    'value_loss',
    'explained_var',
    'val/score',
    'num_tokens',
    'epoch',
    'progress',
  ];
  const ws = createWriteStream(out);
  let written = 0;
  let seed = 12345;
  const rand = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  for (let step = 0; written < bytes; step++) {
    let line = `{"step": ${step}`;
    for (const k of keys) line += `, "${k}": ${step % 5000 === 4999 && k === 'loss' ? 'NaN' : rand() * 10 ** (Math.floor(rand() * 6) - 3)}`;
    line += '}\n';
    await write(ws, line);
    written += line.length;
  }
  await finish(ws);
}

/** TensorBoard's own EventFileWriter, through the peer python; returns the event file's path. */
async function makeTensorboard(dir: string, scalars: number): Promise<string> {
  const existing = existsSync(dir) ? (await readdir(dir)).filter((n) => n.includes('tfevents')) : [];
  if (existing.length === 1) return join(dir, existing[0]);
  await rm(dir, { recursive: true, force: true });
  const { peerPython } = await import('../tests/support/peers');
  const out = execFileSync(
    peerPython(),
    [join(ROOT, 'tests', 'peers', 'tensorboard_peer.py'), 'bench', dir, String(scalars), String(TB_TAGS)],
    { encoding: 'utf8' },
  );
  return out.trim();
}

/** One offline W&B run of about `mb` MB written by the W&B SDK (trackers venv); returns its .wandb file. */
async function makeWandb(dir: string, mb: number): Promise<string> {
  const find = async (): Promise<string | null> => {
    if (!existsSync(dir)) return null;
    // wandb's `latest-run` link leads to the same file: count each file once.
    const files = new Set<string>();
    for (const n of await readdir(dir, { recursive: true }))
      if (String(n).endsWith('.wandb')) files.add(await realpath(join(dir, String(n))));
    return files.size === 1 ? [...files][0] : null;
  };
  const have = await find();
  if (have) return have;
  await rm(dir, { recursive: true, force: true });
  const { venvPython } = await import('../tests/support/peers');
  execFileSync(venvPython('trackers'), [join(ROOT, 'tests', 'peers', 'trackers_peer.py'), 'wandb-big', dir, String(mb)], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, WANDB_MODE: 'offline' },
  });
  const made = await find();
  if (!made) throw new Error(`the W&B SDK wrote no .wandb file under ${dir}`);
  return made;
}

/** An MLflow SQLite store with `rows` metric rows (trackers venv, tests/peers/trackers_peer.py mlflow-big). */
async function makeMlflow(path: string, rows: number): Promise<void> {
  const { venvPython } = await import('../tests/support/peers');
  await rm(path, { force: true });
  execFileSync(venvPython('trackers'), [join(ROOT, 'tests', 'peers', 'trackers_peer.py'), 'mlflow-big', path, String(rows)], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

// ---------------------------------------------------------------- parent

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

function goalOf(r: Row): { goal: string; met: boolean } {
  const rss = r.peak_rss_mb < GOALS.peakRssMb;
  if (r.format === 'tensorboard')
    return {
      goal: `≥ ${GOALS.tbScalarsPerS / 1e6}M scalars/s, RSS < ${GOALS.peakRssMb} MB`,
      met: r.scalars_per_s >= GOALS.tbScalarsPerS && rss,
    };
  if (r.format === 'mlflow-sqlite')
    return {
      goal: `≥ ${GOALS.mlflowRowsPerS / 1e6}M rows/s, RSS < ${GOALS.peakRssMb} MB`,
      met: r.scalars_per_s >= GOALS.mlflowRowsPerS && rss,
    };
  return { goal: `≥ ${GOALS.textMbPerS} MB/s, RSS < ${GOALS.peakRssMb} MB`, met: r.mb_per_s >= GOALS.textMbPerS && rss };
}

async function main(): Promise<void> {
  const opts = benchArgs('import', USAGE, {
    json: { type: 'boolean' },
    mb: { type: 'string', default: '100' },
    scalars: { type: 'string', default: '1000000' },
    inputs: { type: 'string' },
    only: { type: 'string' },
    'mlflow-rows': { type: 'string', default: '1000000' },
    child: { type: 'string' },
    format: { type: 'string' },
    path: { type: 'string' },
    'scalars-hint': { type: 'string' },
  });
  if (opts.child !== undefined) {
    if (opts.child !== 'import' && opts.child !== 'parse')
      usageError('import', USAGE, `--child must be import or parse, got ${opts.child}`);
    await child(opts.child, opts.format as BenchFormat, opts.path as string, Number(opts['scalars-hint'] ?? 0));
    return;
  }
  const mb = Number(opts.mb);
  if (!(mb > 0)) usageError('import', USAGE, `--mb must be a positive number, got ${opts.mb}`);
  const scalars = Number(opts.scalars);
  if (!Number.isInteger(scalars) || scalars < TB_TAGS)
    usageError('import', USAGE, `--scalars must be an integer ≥ ${TB_TAGS}, got ${opts.scalars}`);
  const mlflowRows = Number(opts['mlflow-rows']);
  if (!Number.isInteger(mlflowRows) || mlflowRows < 100)
    usageError('import', USAGE, `--mlflow-rows must be an integer ≥ 100, got ${opts['mlflow-rows']}`);
  const only = opts.only === undefined ? [...FORMATS] : opts.only.split(',').map((s) => s.trim());
  for (const f of only)
    if (!(FORMATS as readonly string[]).includes(f))
      usageError('import', USAGE, `--only: unknown format "${f}"; known: ${FORMATS.join(', ')}`);

  const keep = opts.inputs !== undefined;
  const dir = keep ? resolve(opts.inputs as string) : await mkdtemp(join(tmpdir(), 'arl-bench-import-'));
  await mkdir(dir, { recursive: true });
  const log = (s: string) => {
    if (!opts.json) process.stderr.write(`${s}\n`);
  };
  try {
    const inputs: { format: BenchFormat; path: string }[] = [];
    for (const format of only as BenchFormat[]) {
      const t0 = performance.now();
      let path: string;
      if (format === 'tensorboard') {
        path = await makeTensorboard(join(dir, `tensorboard-${scalars}`), scalars);
      } else if (format === 'wandb') {
        path = await makeWandb(join(dir, `wandb-${mb}MB`), mb);
      } else if (format === 'mlflow-sqlite') {
        path = join(dir, `mlflow-${mlflowRows}.db`);
        if (!existsSync(path)) await makeMlflow(path, mlflowRows);
      } else {
        path = join(dir, `${format}-${mb}MB.${format === 'jsonl' ? 'jsonl' : 'log'}`);
        if (!existsSync(path)) await (format === 'jsonl' ? makeJsonl(path, mb * 1e6) : makeVerlConsole(path, mb * 1e6));
      }
      log(
        `input ${format}: ${path} (${((await stat(path)).size / 1e6).toFixed(1)} MB, ready in ${((performance.now() - t0) / 1000).toFixed(1)} s)`,
      );
      inputs.push({ format, path });
    }

    const rows: Row[] = [];
    const tsx = join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');
    for (const { format, path } of inputs) {
      for (const mode of ['import', 'parse'] as const) {
        const hint = format === 'mlflow-sqlite' ? mlflowRows : scalars;
        const args = [
          tsx,
          fileURLToPath(import.meta.url),
          '--child',
          mode,
          '--format',
          format,
          '--path',
          path,
          '--scalars-hint',
          String(hint),
        ];
        const r = spawnSync(process.execPath, args, {
          cwd: ROOT,
          encoding: 'utf8',
          maxBuffer: 16 * 1024 * 1024,
          env: { ...process.env, NODE_OPTIONS: '' },
        });
        if (r.status !== 0) throw new Error(`${mode} ${format} failed (exit ${r.status}):\n${r.stderr}`);
        const row = JSON.parse(r.stdout.trim().split('\n').at(-1) as string) as Row;
        rows.push(row);
        if (opts.json) process.stdout.write(`${JSON.stringify({ ...row, ...goalOf(row) })}\n`);
      }
    }
    if (!opts.json) {
      process.stdout.write(
        `${cpus().length} cores; 1-minute load average at each measurement's end in the last column (above the core count, the wall-clock rates include waiting for a core)\n`,
      );
      const head = [
        'format',
        'mode',
        'MB',
        'steps',
        'seconds',
        'CPU s',
        'main CPU s',
        'MB/s',
        'scalars|rows/s',
        'peak RSS MB',
        'goal',
        'met',
        'load',
      ];
      const body = rows.map((r) => {
        const g = goalOf(r);
        return [
          r.format,
          r.mode,
          (r.bytes / 1e6).toFixed(1),
          String(r.steps),
          r.seconds.toFixed(2),
          r.cpu_seconds.toFixed(2),
          r.main_cpu_seconds === null ? '–' : r.main_cpu_seconds.toFixed(2),
          r.mb_per_s.toFixed(1),
          r.scalars_per_s > 0 ? `${(r.scalars_per_s / 1e6).toFixed(2)}M` : '–',
          r.peak_rss_mb.toFixed(0),
          g.goal,
          g.met ? 'yes' : 'NO',
          r.load_avg.toFixed(1),
        ];
      });
      const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
      const fmt = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join('  ');
      process.stdout.write(`${fmt(head)}\n${fmt(widths.map((w) => '-'.repeat(w)))}\n${body.map(fmt).join('\n')}\n`);
      const skippedRows = rows.filter((r) => Object.keys(r.skipped).length > 0);
      for (const r of skippedRows) process.stdout.write(`skipped (${r.format} ${r.mode}): ${JSON.stringify(r.skipped)}\n`);
    }
  } finally {
    if (!keep) await rm(dir, { recursive: true, force: true });
  }
}

await main();
