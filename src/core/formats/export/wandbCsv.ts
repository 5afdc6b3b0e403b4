/**
 * A chart's data in the layout of W&B's chart "Export CSV" (the 'wandb-csv' format the importer reads, csv.ts):
 * a `Step` column, then per run `<run> - <metric>` with its `__MIN` / `__MAX` companions. W&B fills those with
 * the spread of the points it merged when it downsampled the chart; this export writes every logged point, so
 * the companions equal the value, as in a W&B export of raw points. Rows are the union of the runs' steps,
 * ascending; a run with no value at a step leaves its cells empty. Non-finite values are spelled NaN / inf /
 * -inf (csvNumber), numbers in their shortest round-trip form, header cells quoted per RFC 4180.
 */
import { csvCell, csvNumber } from './csv';

export interface ChartCsvColumn {
  /** The run's name in the header; unique within one export (the caller disambiguates twins). */
  readonly run: string;
  readonly steps: readonly number[];
  /** The value at each step, NaN / ±Infinity included. */
  readonly values: readonly number[];
}

export function wandbChartCsv(metric: string, columns: readonly ChartCsvColumn[]): string {
  const names = new Set<string>();
  for (const c of columns) {
    if (names.has(c.run)) throw new Error(`two columns are named "${c.run}": give each run a distinct name before exporting`);
    names.add(c.run);
    if (c.steps.length !== c.values.length) throw new Error(`run "${c.run}": ${c.steps.length} steps but ${c.values.length} values`);
  }
  const byRun = columns.map((c) => {
    const m = new Map<number, number>();
    for (let i = 0; i < c.steps.length; i++) m.set(c.steps[i], c.values[i]);
    return m;
  });
  const steps = [...new Set(columns.flatMap((c) => c.steps))].sort((a, b) => a - b);
  const head = ['Step'];
  for (const c of columns) {
    const col = `${c.run} - ${metric}`;
    head.push(csvCell(col), csvCell(`${col}__MIN`), csvCell(`${col}__MAX`));
  }
  const lines = [head.join(',')];
  for (const step of steps) {
    let line = String(step);
    for (const m of byRun) {
      const v = m.get(step);
      const cell = v === undefined ? '' : csvNumber(v);
      line += `,${cell},${cell},${cell}`;
    }
    lines.push(line);
  }
  return `${lines.join('\n')}\n`;
}
