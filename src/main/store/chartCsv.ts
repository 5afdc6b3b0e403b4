/**
 * A chart's "CSV" (runs.chartCsv, the trackers' chart export): every logged point of one metric for
 * the runs a chart shows, in W&B's chart-export layout (core/formats/export/wandbCsv.ts), which the lab's own
 * importer and W&B-reading scripts take back. Points come from the store's series (buildSeries), so a
 * validation key's NaN between validations is left out as on the chart, while a real NaN or ±inf is kept.
 */
import type { Series } from '../../shared/api';
import { shortId } from '../../shared/shortId';
import { chartFileStem } from '../../shared/fileNames';
import { wandbChartCsv, type ChartCsvColumn } from '../../core/formats/export/wandbCsv';

const NON_FINITE = { NaN: Number.NaN, Infinity: Number.POSITIVE_INFINITY, '-Infinity': Number.NEGATIVE_INFINITY } as const;

/** A series' points as steps and values, its gaps (null) given back the non-finite value they stand for. */
export function seriesColumn(s: Pick<Series, 'y' | 'steps' | 'nonFinite'>): { steps: number[]; values: number[] } {
  const kindAt = new Map(s.nonFinite.map((n) => [n.step, NON_FINITE[n.value]]));
  const steps: number[] = [];
  const values: number[] = [];
  for (let i = 0; i < s.steps.length; i++) {
    const v = s.y[i] ?? kindAt.get(s.steps[i]);
    if (v === undefined) continue;
    steps.push(s.steps[i]);
    values.push(v);
  }
  return { steps, values };
}

/** Header names: each run's own name, with its short id added where two or more runs share a name. */
export function csvRunNames(runs: readonly { id: string; name: string }[]): string[] {
  const count = new Map<string, number>();
  for (const r of runs) count.set(r.name, (count.get(r.name) ?? 0) + 1);
  return runs.map((r) => ((count.get(r.name) ?? 0) > 1 ? `${r.name} (${shortId(r.id)})` : r.name));
}

/** The CSV for `metric` over `runs` (in the chart's order), given each run's full series of it. */
export function chartCsv(metric: string, runs: readonly { id: string; name: string; series: Series }[]): { csv: string; rows: number } {
  const names = csvRunNames(runs);
  const columns: ChartCsvColumn[] = runs.map((r, i) => ({ run: names[i], ...seriesColumn(r.series) }));
  const csv = wandbChartCsv(metric, columns);
  return { csv, rows: new Set(columns.flatMap((c) => c.steps)).size };
}

/** The CSV's suggested file name (chartFileStem + ".csv"). */
export function csvFileName(metric: string, prefix: string): string {
  return `${chartFileStem(prefix, metric)}.csv`;
}
