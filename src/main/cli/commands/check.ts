/**
 * `arlarena check RUN` — run the collapse detector over a stored run and print its alerts, and which rules ran
 * and which could not (an imported run has only the metrics its source logged; coverage.ts `ruleCoverage`).
 */
import { ruleCoverage, type RuleCoverage } from '../../../core/stability/coverage';
import { detectStored } from '../../store/detectStored';
import { UsageError, type CliCommand, parseCommandArgs } from '../types';
import { openRun } from './runs';

const USAGE = `Usage: arlarena check RUN [--json] [--save]
  Runs every collapse rule (non-finite values, grad-norm spikes, validity drops, success collapse, entropy,
  KL and clip-fraction drift, dead signal, length runaway, train/inference mismatch) over the stored metrics.
  Rules whose metrics the run did not log (an imported run has only its source's keys) are not applicable and
  are listed as such, with the metrics they miss.
  --save   store the alerts with the run (as a live session would)
  --json   one object: {"runId", "steps", "alerts": [...], "coverage": [{"rule", "title", "applicable",
           "enabled", "missing", "present", "needs"}, ...]}
  Exit code: 0 when no alert is critical, 3 when at least one is.`;

const command: CliCommand = {
  summary: 'run the collapse detector over a stored run and print its alerts',
  usage: USAGE,
  async run(args, ctx) {
    const parsed = parseCommandArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: { json: { type: 'boolean' }, save: { type: 'boolean' } },
    });
    const { values: v, positionals: pos } = parsed;
    if (pos.length !== 1) throw new UsageError('expected exactly one RUN');
    const found = await openRun(ctx, 'check', pos[0]);
    if (!found) return 1;
    const { store, run } = found;
    const { steps, keys, alerts } = await detectStored(store, run, { save: v.save });
    // Every key the run logged counts, even one whose every value is NaN (the non-finite rule reads it).
    const coverage = ruleCoverage(keys);
    await store.close();
    const out = (s: string) => ctx.stdout.write(`${s}\n`);
    if (v.json) {
      out(JSON.stringify({ runId: run.id, steps, alerts, coverage }));
    } else {
      out(`${run.id}: ${steps} steps checked, ${alerts.length} alert${alerts.length === 1 ? '' : 's'}`);
      for (const line of coverageLines(coverage)) out(line);
      for (const a of alerts) {
        out(`\n[${a.severity.toUpperCase()}] ${a.rule} — ${a.metric}, steps ${a.firstStep}–${a.lastStep}`);
        out(`  ${a.message}`);
        out(`  try: ${a.hint}`);
      }
    }
    return alerts.some((a) => a.severity === 'critical') ? 3 : 0;
  },
};

/** "rules that ran: 7 of 10 (…)" and one line per rule that did not, with the metrics it lacks. */
function coverageLines(coverage: readonly RuleCoverage[]): string[] {
  const ran = coverage.filter((c) => c.applicable);
  const off = coverage.filter((c) => !c.enabled);
  const na = coverage.filter((c) => c.enabled && !c.applicable);
  const out = [`rules that ran: ${ran.length} of ${coverage.length}${ran.length ? ` (${ran.map((c) => c.rule).join(', ')})` : ''}`];
  for (const c of na)
    out.push(
      `  not applicable: ${c.rule} — the run did not log ${c.needs === 'any' && c.missing.length > 1 ? `any of ${c.missing.join(', ')}` : c.missing.join(', ')}`,
    );
  for (const c of off) out.push(`  switched off: ${c.rule} (detector config)`);
  return out;
}

export default command;
