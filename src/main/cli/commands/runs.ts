/**
 * `arlarena runs` — list, filter and search stored runs; rename, tag or delete one; write a synthetic run
 * (demo data for the UI and its benchmarks).
 */
import { RunStatus, type RunRecord } from '../../../shared/api';
import { TRAIN_SUCCESS_KEYS, VALIDATION_KEYS, headlineOf } from '../../../shared/headline';
import type { SyntheticShape } from '../../../core/stability/synthetic';
import { RunStore } from '../../store/runStore';
import { writeSyntheticRun } from '../../store/synthetic';
import { detectStored } from '../../store/detectStored';
import { UsageError, type CliCommand, type CliContext, parseCommandArgs } from '../types';

const SORTS = ['createdAt', 'updatedAt', 'name', 'step', 'success'] as const;
const SHAPES: SyntheticShape[] = ['calm', 'cispo_collapse', 'entropy_collapse', 'dead_signal', 'length_runaway', 'mismatch', 'kl_drift'];

const USAGE = `Usage:
  arlarena runs [--status S[,S…]] [--env E] [--preset P] [--tag T] [--search TEXT]
                [--sort ${SORTS.join('|')}] [--asc] [--json]          list runs (newest first)
  arlarena runs rename RUN NAME [--json]                             rename a run
  arlarena runs tag RUN TAG[,TAG…] [--json]                          set a run's tags
  arlarena runs delete RUN [--json]                                  delete a run and its files
  arlarena runs synth [--steps N] [--shape ${SHAPES.join('|')}] [--seed N] [--name NAME] [--check] [--json]
                                                                     write a synthetic run (demo / UI data);
                                                                     --check: run the collapse detector over it
                                                                     and store its alerts (else it is "not checked")
RUN is a run id, a unique id prefix, the short id the app shows (the id's last 6 characters), or a unique run name. Statuses: ${RunStatus.options.join(', ')}.`;

export async function openStore(ctx: CliContext): Promise<RunStore> {
  const store = await RunStore.open(ctx.dataDir);
  for (const w of store.warnings) ctx.stderr.write(`arlarena: warning: ${w}\n`);
  // A run whose training process was killed is interrupted, whichever command looks first (not only the app).
  const warned = store.warnings.length;
  for (const d of await store.markDeadOwners()) {
    const by = `process ${d.pid ?? '(unknown)'}`;
    if (store.cached(d.id)?.kind === 'imported') {
      ctx.stderr.write(
        `arlarena: run ${d.id} was being followed by ${by}, which is gone; marked interrupted (it keeps the steps read until then; follow or import the log again for the rest)\n`,
      );
    } else if ((await store.checkpointSteps(d.id).catch(() => [] as number[])).length === 0) {
      ctx.stderr.write(
        `arlarena: run ${d.id} was being trained by ${by}, which is gone before its first checkpoint; marked interrupted (nothing to resume from: arlarena resume ${d.id} trains it again from the start)\n`,
      );
    } else {
      ctx.stderr.write(
        `arlarena: run ${d.id} was being trained by ${by}, which is gone; marked interrupted (continue it from its last checkpoint: arlarena resume ${d.id})\n`,
      );
    }
  }
  // A full disk found while marking them: said once.
  for (const w of store.warnings.slice(warned)) ctx.stderr.write(`arlarena: warning: ${w}\n`);
  return store;
}

/**
 * Open the store and find RUN (id, unique prefix or unique name). When it cannot be found, says why as
 * `arlarena <command>: …`, closes the store and returns null (the command then exits 1).
 */
export async function openRun(ctx: CliContext, command: string, ref: string): Promise<{ store: RunStore; run: RunRecord } | null> {
  const store = await openStore(ctx);
  try {
    return { store, run: await store.findRun(ref) };
  } catch (e) {
    ctx.stderr.write(`arlarena ${command}: ${(e as Error).message}\n`);
    await store.close();
    return null;
  }
}

function fmtNum(v: number | null | undefined, pct = false): string {
  if (v === null || v === undefined) return '–';
  return pct ? `${(v * 100).toFixed(1)}%` : String(Number(v.toPrecision(3)));
}

const command: CliCommand = {
  summary: 'list, search, rename, tag and delete stored runs',
  usage: USAGE,
  async run(args, ctx) {
    const parsed = parseCommandArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: {
        status: { type: 'string' },
        env: { type: 'string' },
        preset: { type: 'string' },
        tag: { type: 'string' },
        search: { type: 'string' },
        sort: { type: 'string' },
        asc: { type: 'boolean' },
        json: { type: 'boolean' },
        steps: { type: 'string' },
        shape: { type: 'string' },
        seed: { type: 'string' },
        name: { type: 'string' },
        check: { type: 'boolean' },
      },
    });
    const { values: v, positionals: pos } = parsed;
    const out = (s: string) => ctx.stdout.write(`${s}\n`);
    const sub = pos[0];
    const synthOnly = (['steps', 'shape', 'seed', 'name', 'check'] as const).find((k) => v[k] !== undefined);
    if (sub !== 'synth' && synthOnly) throw new UsageError(`--${synthOnly} is an option of \`arlarena runs synth\` only`);
    if (sub === 'rename' || sub === 'tag' || sub === 'delete') {
      const need = sub === 'delete' ? 2 : 3;
      if (pos.length !== need)
        throw new UsageError(`${sub}: expected ${sub === 'delete' ? 'RUN' : sub === 'tag' ? 'RUN TAG[,TAG…]' : 'RUN NAME'}`);
      const found = await openRun(ctx, 'runs', pos[1]);
      if (!found) return 1;
      const { store, run } = found;
      if (sub === 'delete') {
        if (run.status === 'running') {
          ctx.stderr.write(`arlarena runs: run ${run.id} is running; stop it first (arlarena stop ${run.id})\n`);
          return 1;
        }
        await store.deleteRun(run.id);
        out(v.json ? JSON.stringify({ runId: run.id, deleted: true }) : `deleted ${run.id}`);
      } else if (sub === 'rename') {
        await store.updateRun(run.id, { name: pos[2] });
        out(v.json ? JSON.stringify({ runId: run.id, name: pos[2] }) : `renamed ${run.id} → ${pos[2]}`);
      } else {
        const tags = [
          ...new Set(
            pos[2]
              .split(',')
              .map((t) => t.trim())
              .filter(Boolean),
          ),
        ];
        await store.updateRun(run.id, { tags });
        out(v.json ? JSON.stringify({ runId: run.id, tags }) : `${run.id}: tags ${tags.join(', ') || '(none)'}`);
      }
      await store.close();
      return 0;
    }
    if (sub === 'synth') {
      const steps = Number(v.steps ?? 200);
      if (!Number.isInteger(steps) || steps < 1 || steps > 1_000_000)
        throw new UsageError(`--steps ${v.steps}: expected an integer 1…1000000`);
      const shape = (v.shape ?? 'calm') as SyntheticShape;
      if (!SHAPES.includes(shape)) throw new UsageError(`--shape ${v.shape}: unknown; valid shapes: ${SHAPES.join(', ')}`);
      const seed = Number(v.seed ?? 1);
      if (!Number.isInteger(seed)) throw new UsageError(`--seed ${v.seed}: expected an integer`);
      const store = await openStore(ctx);
      const run = await writeSyntheticRun(store, { steps, shape, seed, name: v.name });
      let alerts: number | null = null;
      // As `arlarena check --save`: its alerts and the detector's reading kept with the run.
      if (v.check) alerts = (await detectStored(store, run, { save: true })).alerts.length;
      await store.close();
      const checked = alerts === null ? '' : `, ${alerts} alert${alerts === 1 ? '' : 's'}`;
      out(
        v.json
          ? JSON.stringify({ runId: run.id, ...(alerts === null ? {} : { alerts }) })
          : `wrote synthetic run ${run.id} (${steps} steps, ${shape}${checked})`,
      );
      return 0;
    }
    if (sub !== undefined) throw new UsageError(`unknown sub-command "${sub}"; valid: rename, tag, delete, synth (or none to list)`);

    const status = v.status?.split(',').map((s) => s.trim());
    for (const s of status ?? [])
      if (!RunStatus.safeParse(s).success) throw new UsageError(`--status ${s}: unknown; valid statuses: ${RunStatus.options.join(', ')}`);
    if (v.sort && !SORTS.includes(v.sort as (typeof SORTS)[number]))
      throw new UsageError(`--sort ${v.sort}: unknown; valid: ${SORTS.join(', ')}`);
    const store = await openStore(ctx);
    const runs = await store.listRuns({
      status: status as RunStatus[] | undefined,
      env: v.env,
      preset: v.preset,
      tag: v.tag,
      search: v.search,
      sortBy: v.sort as (typeof SORTS)[number] | undefined,
      sortDir: v.asc ? 'asc' : undefined,
    });
    if (v.json) {
      for (const r of runs) out(JSON.stringify(r));
      return 0;
    }
    if (runs.length === 0) {
      out(`no runs in ${ctx.dataDir}`);
      return 0;
    }
    const rows = runs.map((r) => [
      r.id,
      r.status,
      `${r.step}/${r.totalSteps}`,
      r.env,
      r.preset,
      fmtNum((headlineOf(r.summary, VALIDATION_KEYS) ?? headlineOf(r.summary, TRAIN_SUCCESS_KEYS))?.value, true),
      // A run the detector never read has no alerts for want of looking (`arlarena check RUN --save` reads it).
      r.alertCount ? `${r.alertCount} (${r.worstSeverity})` : r.detectedThrough === null ? 'not checked' : '–',
      r.name,
    ]);
    const head = ['id', 'status', 'step', 'env', 'preset', 'success', 'alerts', 'name'];
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
    const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join('  ');
    out(line(head));
    for (const row of rows) out(line(row));
    return 0;
  },
};

export default command;
