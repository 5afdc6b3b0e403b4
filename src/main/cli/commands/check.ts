/** `arlarena check RUN` — run the collapse detector over a stored run and print its alerts. */
import { detectAlerts } from '../../../core/stability/detector';
import { recipeOf } from '../../../core/stability/hints';
import { UsageError, type CliCommand, parseCommandArgs } from '../types';
import { openRun } from './runs';

const USAGE = `Usage: arlarena check RUN [--json] [--save]
  Runs every collapse rule (non-finite values, grad-norm spikes, validity drops, success collapse, entropy,
  KL and clip-fraction drift, dead signal, length runaway, train/inference mismatch) over the stored metrics.
  --save   store the alerts with the run (as a live session would)
  --json   one alert per line
  Exit code: 0 when no alert is critical, 3 when at least one is.`;

const command: CliCommand = {
  summary: 'run the collapse detector over a stored run and print its alerts',
  usage: USAGE,
  async run(args, ctx) {
    const parsed = parseCommandArgs({ args, allowPositionals: true, strict: true, options: { json: { type: 'boolean' }, save: { type: 'boolean' } } });
    const { values: v, positionals: pos } = parsed;
    if (pos.length !== 1) throw new UsageError('expected exactly one RUN');
    const found = await openRun(ctx, 'check', pos[0]);
    if (!found) return 1;
    const { store, run } = found;
    const metrics = await store.readMetrics(run.id);
    const alerts = detectAlerts(run.id, metrics, undefined, recipeOf(run.config));
    if (v.save) await store.upsertAlerts(run.id, alerts);
    await store.close();
    const out = (s: string) => ctx.stdout.write(`${s}\n`);
    if (v.json) {
      for (const a of alerts) out(JSON.stringify(a));
    } else {
      out(`${run.id}: ${metrics.length} steps checked, ${alerts.length} alert${alerts.length === 1 ? '' : 's'}`);
      for (const a of alerts) {
        out(`\n[${a.severity.toUpperCase()}] ${a.rule} — ${a.metric}, steps ${a.firstStep}–${a.lastStep}`);
        out(`  ${a.message}`);
        out(`  try: ${a.hint}`);
      }
    }
    return alerts.some((a) => a.severity === 'critical') ? 3 : 0;
  },
};

export default command;
