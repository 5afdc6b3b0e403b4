/** `arlarena export RUN [--out FILE]` — write a reproducibility bundle, or with --format the run's metrics. */
import { join } from 'node:path';
import { exportRun } from '../../bundles/exportBundle';
import { initBackend, silenceTfjsBanner } from '../../compute/backends';
import { exportHfRun } from '../../compute/models/hfRunExport';
import type { RunConfig } from '../../../core/config/types';
import { exportMetrics, isMetricExportFormat, METRIC_EXPORT_FORMATS } from '../../store/exportMetrics';
import { exportToTracker, isTrackerExportFormat, TRACKER_EXPORT_FORMATS } from '../../imports/exportTrackers';
import { UsageError, type CliCommand, parseCommandArgs } from '../types';
import { openRun } from './runs';

const USAGE = `Usage: arlarena export RUN [--out FILE] [--checkpoint | --no-checkpoint] [--json]
  Writes one .arlarena.zip: manifest (SHA-256 of every file, schema version), resolved config and preset,
  seeds, app version + commit, package-lock.json, platform / hardware / compute backend, environment and task
  seeds, metrics, trajectories, alerts and the final checkpoint (included by default when under 64 MB).
  Default FILE: <data dir>/bundles/<run id>.arlarena.zip

       arlarena export RUN --format tensorboard|csv|jsonl [--out PATH] [--json]
  Writes the run's metrics for other tools: tensorboard = one event file TensorBoard opens (PATH is its log
  directory unless the name contains "tfevents"), csv = a step column and one column per metric, jsonl = verl's
  file-logger shape {"step": N, "data": {...}} per line. Default PATH: <data dir>/exports/<run id>[.csv|.jsonl|/]

       arlarena export RUN --format wandb|mlflow [--out DIR] [--json]
  Hands the run to a tracker: wandb = an offline W&B run folder DIR/offline-run-<start>-<id>/ (upload it with
  \`wandb sync DIR/offline-run-…\`), mlflow = a run in the MLflow file store DIR (experiment "arlarena"; read it
  with mlflow.set_tracking_uri("file://DIR") and MLFLOW_ALLOW_FILE_STORE=true). History, config and summary;
  importing the export gives back the same run. Default DIR: <data dir>/exports/<run id>-<format>

       arlarena export RUN --format hf [--step S] [--model-folder PATH] [--out DIR] [--json]
  A run of a Hugging Face model (train --model hf:PATH): its latest checkpoint (or the one at step S) as DIR/model,
  a float32 Hugging Face checkpoint with the LoRA adapters merged in, config.json and the tokenizer files
  (AutoModelForCausalLM.from_pretrained), and with LoRA DIR/adapter in PEFT's layout. The checkpoint holds only what
  training changed: the base folder (default: the path the run recorded) must hash as the run recorded it.
  Default DIR: <data dir>/exports/<run id>-hf`;

const command: CliCommand = {
  summary: 'export a run as a reproducibility bundle (.arlarena.zip), its metrics as tensorboard, csv or jsonl, or to W&B / MLflow',
  usage: USAGE,
  async run(args, ctx) {
    const parsed = parseCommandArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: {
        out: { type: 'string' },
        format: { type: 'string' },
        checkpoint: { type: 'boolean' },
        'no-checkpoint': { type: 'boolean' },
        step: { type: 'string' },
        'model-folder': { type: 'string' },
        json: { type: 'boolean' },
      },
    });
    const { values: v, positionals: pos } = parsed;
    if (pos.length !== 1) throw new UsageError('expected exactly one RUN');
    if (v.checkpoint && v['no-checkpoint']) throw new UsageError('--checkpoint and --no-checkpoint contradict each other');
    const format = v.format ?? 'bundle';
    if (format !== 'bundle' && format !== 'hf' && !isMetricExportFormat(format) && !isTrackerExportFormat(format))
      throw new UsageError(
        `unknown --format "${format}"; known: bundle, ${[...METRIC_EXPORT_FORMATS, ...TRACKER_EXPORT_FORMATS, 'hf'].join(', ')}`,
      );
    if (format !== 'hf' && (v.step !== undefined || v['model-folder'] !== undefined))
      throw new UsageError('--step / --model-folder apply to --format hf only');
    const atStep = v.step === undefined ? undefined : Number(v.step);
    if (atStep !== undefined && !(Number.isInteger(atStep) && atStep >= 0))
      throw new UsageError(`--step ${JSON.stringify(v.step)}: expected an integer ≥ 0`);
    if (format !== 'bundle' && (v.checkpoint || v['no-checkpoint']))
      throw new UsageError('--checkpoint / --no-checkpoint apply to bundles only, not to --format ' + format);
    const found = await openRun(ctx, 'export', pos[0]);
    if (!found) return 1;
    const { store, run } = found;
    if (format === 'hf') {
      try {
        const ck = atStep === undefined ? await store.loadLatestCheckpoint(run.id) : await store.loadCheckpointAt(run.id, atStep);
        if (!ck)
          throw new Error(
            atStep === undefined
              ? `run ${run.id} has no checkpoint yet (status ${run.status}); nothing to export`
              : `run ${run.id} has no checkpoint at step ${atStep}; kept: ${(await store.checkpointSteps(run.id)).join(', ') || 'none'}`,
          );
        silenceTfjsBanner();
        await initBackend((run.config as unknown as RunConfig).compute?.backend ?? 'auto');
        const h = await exportHfRun(run, ck, {
          out: v.out ?? join(ctx.dataDir, 'exports', `${run.id}-hf`),
          ...(v['model-folder'] !== undefined ? { modelFolder: v['model-folder'] } : {}),
        });
        if (v.json) ctx.stdout.write(`${JSON.stringify(h)}\n`);
        else
          ctx.stdout.write(
            `wrote ${h.path}\n  model: ${h.model} (step ${h.step}, base ${h.base})${h.adapter ? `\n  adapter: ${h.adapter}` : ''}\n`,
          );
        return 0;
      } catch (e) {
        ctx.stderr.write(`arlarena export: ${(e as Error).message}\n`);
        return 1;
      } finally {
        await store.close();
      }
    }
    if (isTrackerExportFormat(format)) {
      try {
        const t = await exportToTracker(store, run.id, { format, out: v.out });
        if (v.json) ctx.stdout.write(`${JSON.stringify(t)}\n`);
        else ctx.stdout.write(`wrote ${t.path}\n  ${t.format} run ${t.trackerId}: ${t.steps} steps, ${t.keys} metrics\n`);
        return 0;
      } catch (e) {
        ctx.stderr.write(`arlarena export: ${(e as Error).message}\n`);
        return 1;
      } finally {
        await store.close();
      }
    }
    if (format !== 'bundle') {
      try {
        const m = await exportMetrics(store, run.id, { format, out: v.out });
        if (v.json) ctx.stdout.write(`${JSON.stringify(m)}\n`);
        else ctx.stdout.write(`wrote ${m.path}\n  ${m.format}: ${m.steps} steps, ${m.keys} metrics, ${m.bytes} bytes\n`);
        return 0;
      } catch (e) {
        ctx.stderr.write(`arlarena export: ${(e as Error).message}\n`);
        return 1;
      } finally {
        await store.close();
      }
    }
    const r = await exportRun(store, run.id, {
      out: v.out,
      includeCheckpoint: v.checkpoint ? true : v['no-checkpoint'] ? false : undefined,
    });
    await store.close();
    if (v.json) ctx.stdout.write(`${JSON.stringify(r)}\n`);
    else
      ctx.stdout.write(
        `wrote ${r.path}\n  ${r.bytes} bytes, ${r.files} files, sha256 ${r.sha256}\n  checkpoint: ${r.checkpointStep === null ? 'not included' : `step ${r.checkpointStep}`}\n`,
      );
    return 0;
  },
};

export default command;
