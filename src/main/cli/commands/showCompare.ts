/**
 * `arlarena show RUN RUN…` — saved runs side by side, the command line's Compare: what each run is (status, env,
 * preset, seed, steps, backend, alerts), the config values that differ between them (the rest are equal), and each
 * headline metric's latest value per run. Read as `show` reads one run: the record, and the metric stream's end only.
 */
import { join } from 'node:path';
import type { RunRecord } from '../../../shared/api';
import { configValues, type ConfigValue } from '../../../shared/configValues';
import { metricDef } from '../../../shared/metrics';
import { metricTail, type MetricTail } from '../../store/metricTail';
import { METRICS_FILE } from '../../store/runFiles';
import type { CliContext } from '../types';
import { openStore } from './runs';

/** More columns than this do not fit a terminal; Compare in the app takes up to 64. */
export const MAX_SHOWN_RUNS = 8;
/** Differing config keys printed before "… and N more" (--json has them all). */
const MAX_DIFF_ROWS = 40;
/** A cell wider than this is cut with "…" (a path, a long tag list). */
const MAX_CELL = 32;

export interface ShownSideBySide {
  readonly runs: readonly RunRecord[];
  /** Config paths whose values are not the same in every run, each run's value in run order (null: absent there). */
  readonly configDiff: Record<string, ConfigValue[]>;
  /** Each metric key's latest value and its step per run, in run order (null: the run never logged it). */
  readonly latest: Record<string, ({ step: number; value: number } | null)[]>;
}

/** Print the runs side by side (or one JSON object with --json); 1 when a RUN is not there, naming it. */
export async function showSideBySide(ctx: CliContext, refs: readonly string[], keys: readonly string[], json: boolean): Promise<number> {
  const store = await openStore(ctx);
  try {
    const runs: RunRecord[] = [];
    for (const ref of refs) {
      try {
        runs.push(await store.findRun(ref));
      } catch (e) {
        ctx.stderr.write(`arlarena show: ${(e as Error).message}\n`);
        return 1;
      }
    }
    const tails: MetricTail[] = [];
    for (const run of runs) {
      await store.flush(run.id);
      tails.push(await metricTail(join(store.runDir(run.id), METRICS_FILE), keys));
    }
    const shown = sideBySide(runs, tails, keys);
    if (json) {
      ctx.stdout.write(`${JSON.stringify(shown)}\n`);
      return 0;
    }
    for (const line of sideBySideText(shown)) ctx.stdout.write(`${line}\n`);
    return 0;
  } finally {
    await store.close();
  }
}

export function sideBySide(runs: readonly RunRecord[], tails: readonly MetricTail[], keys: readonly string[]): ShownSideBySide {
  // Whole: the runs table's cut values (400 paths, strings of 200) read configs that differ past the cut as equal.
  const values = runs.map((r) => configValues(r.config, { whole: true }));
  const paths = [...new Set(values.flatMap((v) => Object.keys(v)))];
  const configDiff: Record<string, ConfigValue[]> = {};
  for (const p of paths) {
    const row = values.map((v) => (p in v ? v[p] : null));
    if (row.some((x) => !Object.is(x, row[0]))) configDiff[p] = row;
  }
  const latest: ShownSideBySide['latest'] = {};
  for (const k of keys) {
    const row = tails.map((t) => t.latest.get(k) ?? null);
    if (row.some((x) => x !== null)) latest[k] = row;
  }
  return { runs, configDiff, latest };
}

function cell(v: unknown, whole = false): string {
  const s = v === null || v === undefined ? '–' : typeof v === 'number' ? String(Number(v.toPrecision(4))) : String(v);
  return s.length > MAX_CELL && !whole ? `${s.slice(0, MAX_CELL - 1)}…` : s;
}

/** What each run is, one row each: the label and the cell of a run (ids are never cut: they are what to type next). */
const ABOUT: readonly [string, (r: RunRecord) => string][] = [
  ['', (r) => r.name],
  ['id', (r) => r.id],
  ['status', (r) => r.status],
  ['progress', (r) => `step ${r.step} of ${r.totalSteps}`],
  ['env · preset · seed', (r) => `${r.env} · ${r.preset} · ${r.seed}`],
  ['backend', (r) => `${r.backend.training} / ${r.backend.rollout}`],
  ['alerts', (r) => (r.alerts.length ? `${r.alerts.length} (${worst(r)})` : 'none')],
];

/** The text view: a label column, then one column per run. */
export function sideBySideText(shown: ShownSideBySide): string[] {
  const { runs, configDiff, latest } = shown;
  const rows: (string[] | string)[] = [];
  for (const [label, of] of ABOUT) rows.push([label, ...runs.map((r) => cell(of(r), label === 'id'))]);
  const diff = Object.entries(configDiff);
  rows.push(
    diff.length
      ? `config that differs (${diff.length} key${diff.length === 1 ? '' : 's'}; the rest are equal):`
      : 'config: the same in every run',
  );
  for (const [k, v] of diff.slice(0, MAX_DIFF_ROWS)) rows.push([`  ${k}`, ...v.map((x) => cell(x))]);
  if (diff.length > MAX_DIFF_ROWS) rows.push(`  … and ${diff.length - MAX_DIFF_ROWS} more (--json lists them all)`);
  const metricRows = Object.entries(latest);
  rows.push(metricRows.length ? 'latest metrics (value, and its step where it is not the run’s last):' : 'latest metrics: none logged');
  for (const [k, v] of metricRows) {
    const label = `  ${metricDef(k)?.label ?? k}`;
    rows.push([label, ...v.map((x, i) => (x === null ? '–' : `${cell(x.value)}${x.step !== runs[i].step ? ` @${x.step}` : ''}`))]);
  }
  const table = rows.filter((r): r is string[] => Array.isArray(r));
  const widths = table[0].map((_, c) => Math.max(...table.map((r) => r[c].length)));
  return rows.map((r) =>
    typeof r === 'string'
      ? r
      : r
          .map((x, c) => x.padEnd(widths[c]))
          .join('  ')
          .trimEnd(),
  );
}

function worst(r: RunRecord): string {
  const order = ['info', 'warning', 'critical'];
  return r.alerts.reduce((w, a) => (order.indexOf(a.severity) > order.indexOf(w) ? a.severity : w), 'info');
}
