/**
 * `arlarena import PATH…` — bring runs into the data directory: reproducibility bundles (verified, as before)
 * and external training logs in every format src/core/formats reads (src/main/imports/importLogs.ts).
 */
import type { RunRecord } from '../../../shared/api';
import { BundleError } from '../../bundles/manifest';
import { duplicateMessage, ImportError } from '../../imports/importLogs';
import { describeTrackers, importSources } from '../../imports/importSources';
import { UsageError, type CliCommand, parseCommandArgs } from '../types';
import { openStore } from './runs';

const USAGE = `Usage: arlarena import PATH… [--format F] [--name N] [--tags T] [--again] [--json]
  PATH: a reproducibility bundle (.zip), a training log file, a folder of TensorBoard event files (one run
  per directory holding event files, as TensorBoard groups them), or a tracker's store: a W&B folder (wandb/,
  a run folder or a .wandb file: one run per W&B run, a resumed run's files read as one), an MLflow file store
  (mlruns/) or SQLite store (mlflow.db), a Trackio database (<project>.db): one run per tracker run, with its
  config, tags and how it ended. The format is detected from the content, never the file name:
    verl console logs, verl file-logger JSONL, flat JSONL metric streams (Tinker and most scripts),
    TRL / HF Trainer printed dicts and trainer_state.json, TensorBoard event files, W&B "Export CSV" (one run
    per "<run> - " prefix), plain CSV with a step column, DeepSpeed-Chat step-3 logs, ms-swift logging.jsonl.
  Every file is checked before anything is written: a file in no known format is refused, naming the formats
  tried. Lines that do not parse, corrupt TensorBoard records and repeated steps are skipped and counted. A
  text log whose steps go back (the training process was restarted and appended its own steps, from 0 or from
  a checkpoint) becomes one run per attempt: "<name> (restart 2)", … linked by notes. The collapse detector
  runs over each imported run and its alerts are stored with it.
  --format F   force the format of a log file (verl-console, verl-jsonl, jsonl, trl-console, trainer-state,
               tensorboard, wandb, wandb-csv, csv, deepspeed-chat, bundle)
  --name N     run name (default: the file or run-folder name; several source runs get " · <run>")
  --tags T     comma-separated tags
  --again      import even if a run already holds the same source file or bundle file (same SHA-256), or is
               the very run a bundle holds (same metrics): a copy under a new id; nothing is ever replaced
  --json       print {"runIds": [...], "format": "...", "steps": N, "skipped": {...}} (and "duplicateOf", and
               "trackers": {"wandb": N, …} when trackers' runs were found)
  Exit code: 0 when something was imported, 1 when nothing was (refused, or already imported).`;

function range(rec: RunRecord, first: number | undefined): string {
  return first === undefined ? 'no steps' : first === rec.step ? `step ${first}` : `steps ${first}–${rec.step}`;
}

const command: CliCommand = {
  summary: 'import bundles, external training logs (verl, TRL, TensorBoard, JSONL, …) and trackers (W&B, MLflow, Trackio)',
  usage: USAGE,
  async run(args, ctx) {
    const parsed = parseCommandArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: {
        json: { type: 'boolean' },
        format: { type: 'string' },
        name: { type: 'string' },
        tags: { type: 'string' },
        again: { type: 'boolean' },
      },
    });
    const { values: v, positionals: pos } = parsed;
    if (pos.length === 0) throw new UsageError('expected at least one PATH (a bundle, a log file or a TensorBoard folder)');
    if (v.name !== undefined && v.name.trim() === '') throw new UsageError('--name must not be empty');
    const tags =
      v.tags === undefined
        ? undefined
        : [
            ...new Set(
              v.tags
                .split(',')
                .map((t) => t.trim())
                .filter((t) => t.length > 0),
            ),
          ];
    const store = await openStore(ctx);
    try {
      let lastPath = '';
      const r = await importSources(store, pos, {
        format: v.format,
        name: v.name?.trim(),
        tags,
        again: v.again === true,
        onProgress:
          ctx.isTTY && !v.json
            ? (p) => {
                if (p.path !== lastPath) lastPath = p.path;
                ctx.stderr.write(
                  `\r  reading ${p.path}: ${(p.bytesRead / 1e6).toFixed(1)} / ${(p.totalBytes / 1e6).toFixed(1)} MB, ${p.steps} steps`,
                );
              }
            : undefined,
      });
      if (ctx.isTTY && !v.json && lastPath) ctx.stderr.write('\n');
      if (v.json) {
        ctx.stdout.write(`${JSON.stringify(r)}\n`);
      } else {
        for (const id of r.runIds) {
          const rec = (await store.getRun(id))!;
          const first = (await store.readMetrics(id))[0]?.step;
          const src = rec.source;
          const what = src ? `${src.format}${src.framework !== 'unknown' ? `, ${src.framework}` : ''}` : 'bundle';
          const crit = rec.alerts.filter((a) => a.severity === 'critical').length;
          ctx.stdout.write(
            `imported "${rec.name}" as run ${id}: ${range(rec, first)} (${what}); ${rec.alerts.length} alert${rec.alerts.length === 1 ? '' : 's'}${crit ? ` (${crit} critical)` : ''}\n`,
          );
        }
        // Every tracker run already imported (the duplicate line below says where): no runs found to describe.
        const found = describeTrackers(r.trackers);
        if (found) ctx.stdout.write(`found ${found}\n`);
        const skipped = Object.entries(r.skipped);
        if (skipped.length > 0) ctx.stdout.write(`skipped: ${skipped.map(([k, n]) => `${n} ${k}`).join(', ')}\n`);
      }
      if (r.duplicateOf?.length)
        ctx.stderr.write(`arlarena import: ${duplicateMessage(pos, r.duplicateOf, r.format === 'bundle', r.exportedFrom)}\n`);
      return r.runIds.length > 0 ? 0 : 1;
    } catch (e) {
      if (e instanceof BundleError || e instanceof ImportError) {
        ctx.stderr.write(`arlarena import: refused: ${e.message}\n`);
        return 1;
      }
      throw e;
    } finally {
      await store.close();
    }
  },
};

export default command;
