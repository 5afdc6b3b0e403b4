/** `arlarena export RUN [--out FILE]` — write a reproducibility bundle. */
import { exportRun } from '../../bundles/exportBundle';
import { UsageError, type CliCommand, parseCommandArgs } from '../types';
import { openRun } from './runs';

const USAGE = `Usage: arlarena export RUN [--out FILE] [--checkpoint | --no-checkpoint] [--json]
  Writes one .arlarena.zip: manifest (SHA-256 of every file, schema version), resolved config and preset,
  seeds, app version + commit, package-lock.json, platform / hardware / compute backend, environment and task
  seeds, metrics, trajectories, alerts and the final checkpoint (included by default when under 64 MB).
  Default FILE: <data dir>/bundles/<run id>.arlarena.zip`;

const command: CliCommand = {
  summary: 'export a run as a reproducibility bundle (.arlarena.zip)',
  usage: USAGE,
  async run(args, ctx) {
    const parsed = parseCommandArgs({ args, allowPositionals: true, strict: true, options: { out: { type: 'string' }, checkpoint: { type: 'boolean' }, 'no-checkpoint': { type: 'boolean' }, json: { type: 'boolean' } } });
    const { values: v, positionals: pos } = parsed;
    if (pos.length !== 1) throw new UsageError('expected exactly one RUN');
    if (v.checkpoint && v['no-checkpoint']) throw new UsageError('--checkpoint and --no-checkpoint contradict each other');
    const found = await openRun(ctx, 'export', pos[0]);
    if (!found) return 1;
    const { store, run } = found;
    const r = await exportRun(store, run.id, { out: v.out, includeCheckpoint: v.checkpoint ? true : v['no-checkpoint'] ? false : undefined });
    await store.close();
    if (v.json) ctx.stdout.write(`${JSON.stringify(r)}\n`);
    else ctx.stdout.write(`wrote ${r.path}\n  ${r.bytes} bytes, ${r.files} files, sha256 ${r.sha256}\n  checkpoint: ${r.checkpointStep === null ? 'not included' : `step ${r.checkpointStep}`}\n`);
    return 0;
  },
};

export default command;
