/** State of the compare view: the records and series of 2…N runs and the view's options. */
import type { RunRecord, Series } from '../../shared/api';
import type { Lab } from './lab.svelte';
import { indexSeries, type SeriesIndex } from './compareModel';
import { BREAKING_KEYS, DEFAULT_CHART_KEYS, SUCCESS_KEY } from './metricKeys';
import type { SmoothingMode } from './smoothing';
import { uniq } from './collections';

/** Points per series requested from the store (LTTB keeps spikes); plenty for a chart a few hundred px wide. */
export const COMPARE_MAX_POINTS = 300;

export class CompareState {
  records = $state.raw<RunRecord[]>([]);
  series = $state.raw<Series[]>([]);
  index = $state.raw<SeriesIndex>(indexSeries([]));
  loading = $state(false);
  missing = $state.raw<string[]>([]);

  chartKeys = $state.raw<string[]>([...DEFAULT_CHART_KEYS]);
  // Raw by default (as W&B): half the series to draw on first render; EMA is one click away.
  smoothing = $state<SmoothingMode>('none');
  strength = $state(0.6);
  xAxis = $state<'step' | 'wall' | 'tokens'>('step');
  groupBy = $state('');
  threshold = $state(0.5);
  onlyDiff = $state(true);

  private loadSeq = 0;
  /** performance.now() when the last load's data arrived (render benchmark). */
  dataAt = 0;

  constructor(private readonly lab: Lab) {}

  async load(ids: readonly string[]): Promise<void> {
    const seq = ++this.loadSeq;
    if (ids.length === 0) {
      this.records = [];
      this.series = [];
      this.index = indexSeries([]);
      return;
    }
    this.loading = true;
    const [recs, series] = await Promise.all([Promise.all(ids.map((runId) => this.lab.call('runs.get', { runId }))), this.fetchSeries(ids)]);
    if (seq !== this.loadSeq) return;
    this.dataAt = performance.now();
    const records: RunRecord[] = [];
    const missing: string[] = [];
    recs.forEach((r, i) => (r.ok ? records.push(r.value) : missing.push(ids[i])));
    this.records = records;
    this.missing = missing;
    this.setSeries(series);
    this.loading = false;
  }

  private async fetchSeries(ids: readonly string[]): Promise<Series[]> {
    const keys = uniq([...this.chartKeys, SUCCESS_KEY, ...BREAKING_KEYS]);
    // Only ids that look valid reach the API; a deleted run simply yields no series.
    const res = await this.lab.call('runs.metrics', { runIds: [...ids], keys, xAxis: this.xAxis, maxPoints: COMPARE_MAX_POINTS });
    return res.ok ? res.value : [];
  }

  private setSeries(s: Series[]): void {
    this.series = s;
    this.index = indexSeries(s);
  }

  async reloadSeries(): Promise<void> {
    const ids = this.records.map((r) => r.id);
    if (ids.length === 0) return;
    this.loading = true;
    this.setSeries(await this.fetchSeries(ids));
    this.loading = false;
  }

  async setXAxis(x: 'step' | 'wall' | 'tokens'): Promise<void> {
    this.xAxis = x;
    await this.reloadSeries();
  }

  async setChartKeys(keys: string[]): Promise<void> {
    this.chartKeys = keys;
    await this.reloadSeries();
  }
}
