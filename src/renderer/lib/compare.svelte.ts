/** State of the compare view: the records and series of 2…N runs and the view's options. */
import type { RunRecord, Series } from '../../shared/api';
import { NO_BASELINES, baselineCells, type BaselineCell } from './baselines';
import type { Lab } from './lab.svelte';
import { indexSeries, mergeIndex, type SeriesIndex } from './compareModel';
import { BREAKING_KEYS, DEFAULT_CHART_KEYS } from './metricKeys';
import { TRAIN_SUCCESS_KEYS } from '../../shared/headline';
import { METRIC_CATALOG } from '../../shared/metrics';
import { choosePanels, panelCandidates } from './defaultPanels';
import { loadChartChoice } from './metricPicker';
import type { SmoothingMode } from './smoothing';
import { uniq } from './collections';
import { COMPARE_MAX_POINTS, firstRequests, takePrefetched, type XAxisName } from './comparePrefetch';
import { parseRoute } from './router';
import { loadSavedWorkspace, parseWorkspace, type SavedWorkspace } from './compareWorkspace';
import { currentProject, loadCompareDefaults } from './projectWorkspace';
import { workspaceStorage, type SyncedStorage } from './dataDirWorkspace';

export { COMPARE_MAX_POINTS };

/** Resolves when the browser is next idle (at most 1 s from now). */
function whenIdle(): Promise<void> {
  return new Promise((resolve) => {
    if (typeof requestIdleCallback === 'function') requestIdleCallback(() => resolve(), { timeout: 1000 });
    else setTimeout(resolve, 0);
  });
}

/** The browser's storage and, once the lab answered, the data directory's workspace (dataDirWorkspace.ts). */
function localStore(): SyncedStorage {
  return workspaceStorage();
}

/**
 * The workspace (charts, smoothing, x-axis, grouping, hidden legend entries) the view opens with: the address's
 * (a shared link), else the one last used on these runs in this browser (lib/compareWorkspace.ts), else the
 * project's defaults (lib/projectWorkspace.ts), else none.
 */
function initialWorkspace(): SavedWorkspace {
  if (typeof window === 'undefined') return {};
  const r = parseRoute(window.location.search);
  if (r.view !== 'compare') return {};
  const fromUrl = parseWorkspace(window.location.search);
  if (addressNamesWorkspace()) return { ...fromUrl, ...(r.group ? { group: r.group } : {}) };
  // Run sets never compared before open with the project's last smoothing, x-axis and grouping.
  return loadSavedWorkspace(r.ids, localStore()) ?? loadCompareDefaults(currentProject(), localStore()) ?? {};
}

/** Whether the address the view opened at named its workspace (a shared link): then nothing saved replaces it. */
function addressNamesWorkspace(): boolean {
  if (typeof window === 'undefined') return false;
  const r = parseRoute(window.location.search);
  return r.view === 'compare' && (Object.keys(parseWorkspace(window.location.search)).length > 0 || Boolean(r.group));
}

export class CompareState {
  records = $state.raw<RunRecord[]>([]);
  series = $state.raw<Series[]>([]);
  index = $state.raw<SeriesIndex>(indexSeries([]));
  loading = $state(false);
  missing = $state.raw<string[]>([]);
  /** runs.baselines per run: the reply, or why there is none and what to do; absent while it is on the way. */
  baselines = $state.raw<ReadonlyMap<string, BaselineCell>>(NO_BASELINES);

  /** What the address the view opened at asked for (a shared Compare link): it wins over what is remembered. */
  readonly opened: SavedWorkspace = initialWorkspace();
  readonly openedFromAddress = addressNamesWorkspace();
  /** The charts of the address, else the ones last chosen in Compare (lib/metricPicker.ts), else the dashboard. */
  chartKeys = $state.raw<string[]>(
    this.opened.metrics ? [...this.opened.metrics] : (loadChartChoice('compare') ?? [...DEFAULT_CHART_KEYS]),
  );
  /**
   * What the picker's "Defaults" restores: the lab's dashboard, or for imported runs the panels chosen from
   * what they logged (lib/defaultPanels.ts).
   */
  defaultKeys = $state.raw<string[]>([...DEFAULT_CHART_KEYS]);
  /** Every key any compared run logged (runs.metricKeys, as the run view lists them), sorted. */
  loggedKeys = $state.raw<string[]>([]);
  /**
   * Logged progress counters that never decrease in any compared run logging them (runs.axisKeys): the x-axis
   * menu's "Logged by the runs". Null when the lab could not say (then chosen by name: xKeyCandidates).
   */
  axisKeys = $state.raw<string[] | null>(null);
  /** No chart choice was made in Compare: the panels follow the runs (imported runs: what they logged). */
  private autoPanels = this.opened.metrics === undefined && loadChartChoice('compare') === null;
  // Raw by default (as W&B): half the series to draw on first render; EMA is one click away.
  smoothing = $state<SmoothingMode>(this.opened.smoothing ?? 'none');
  strength = $state(this.opened.strength ?? 0.6);
  xAxis = $state<XAxisName>(this.opened.xAxis ?? 'step');
  /** A logged key as the x-axis instead of xAxis ('' = none): runs.metrics xKey. */
  xKey = $state<string>(this.opened.xKey ?? '');
  // Opened as `?view=compare&runs=…&group=preset` (the Study view's "Compare by preset"): start grouped.
  groupBy = $state(this.opened.group ?? '');
  threshold = $state(0.5);
  onlyDiff = $state(true);

  private loadSeq = 0;
  /** performance.now() when the last load's data arrived (render benchmark). */
  dataAt = 0;
  /** Resolved by firstScreenDrawn(): what is not on the first screen waits for it. */
  private drawn: Promise<void> = Promise.resolve();
  private markDrawn: () => void = () => {};

  /** The view has drawn and painted its first screen (CompareView calls this). */
  firstScreenDrawn(): void {
    this.markDrawn();
  }

  /**
   * Resolves once the first screen has been drawn (or after `maxMs`, for a view that never draws one, e.g. no
   * metrics picked), then when the browser is next idle. Waiting for idle alone was not enough: while the
   * charts draw in their worker, or ECharts is still loading, the page's main thread is idle, and the
   * baselines (8 calls, costly on the server) and the rest of the metrics went out before the first screen.
   */
  private afterFirstScreen(maxMs = 3000): Promise<void> {
    return Promise.race([this.drawn, new Promise<void>((resolve) => setTimeout(resolve, maxMs))]).then(whenIdle);
  }

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
    this.drawn = new Promise((resolve) => (this.markDrawn = resolve));
    // The first screen's metrics (plus what the summary needs) first, the rest once it is drawn, so the view
    // draws before the store has downsampled every series. One runs.getMany rather than a runs.get per run: with
    // 8 runs, 9 requests over the browser's 6 connections per host queued the metrics request behind the records.
    const first = firstRequests(ids, this.chartKeys, this.xAxis);
    const req = this.xKey ? { ...first, metrics: { ...first.metrics, xKey: this.xKey } } : first;
    const pre = takePrefetched(req);
    // Every key each run logged, for the picker (and, for imported runs, the default panels): alongside.
    const keysCall = this.loadLoggedKeys(ids);
    const [recs, seriesRes] = await Promise.all([
      pre ? this.lab.settle('runs.getMany', pre.many) : this.lab.call('runs.getMany', req.many),
      pre ? this.lab.settle('runs.metrics', pre.metrics) : this.lab.call('runs.metrics', req.metrics),
    ]);
    let series = seriesRes.ok ? seriesRes.value : [];
    if (seq !== this.loadSeq) return;
    const records = recs.ok ? recs.value.runs : [];
    let fetched: readonly string[] = req.metrics.keys;
    if (this.autoPanels && records.some((r) => r.kind === 'imported')) {
      // Imported runs log what their framework logs, not the lab's dashboard: chart what they logged (headline
      // numbers first), leaving out keys that are constant or empty in every run.
      const logged = await keysCall;
      if (seq !== this.loadSeq) return;
      const candidates = panelCandidates(
        logged,
        METRIC_CATALOG.map((d) => d.key),
        DEFAULT_CHART_KEYS,
      );
      const extra = candidates.filter((k) => !fetched.includes(k));
      const more = extra.length ? await this.fetchSeries(ids, extra) : [];
      if (seq !== this.loadSeq) return;
      series = [...series, ...more];
      const idx = indexSeries(series);
      const chosen = choosePanels(candidates, (k) => [...(idx.get(k)?.values() ?? [])]);
      if (chosen.length > 0) {
        this.chartKeys = chosen;
        this.defaultKeys = chosen;
      }
      fetched = [...fetched, ...extra];
    }
    const rest = this.wantedKeys().filter((k) => !fetched.includes(k));
    this.dataAt = performance.now();
    this.records = records;
    this.missing = recs.ok ? recs.value.missing : [];
    this.setSeries(series);
    // Baselines once the first screen is drawn: on a cold cache they cost the main process ~0.1–0.2 s per env.
    void this.afterFirstScreen().then(() =>
      seq === this.loadSeq
        ? this.loadBaselines(
            records.map((r) => r.id),
            seq,
          )
        : undefined,
    );
    if (rest.length) {
      // Likewise the rest of the metrics: the answer's parsing and the input rebuild would otherwise land
      // between the first data and the first paint.
      await this.afterFirstScreen();
      if (seq !== this.loadSeq) return;
      const more = await this.fetchSeries(ids, rest);
      if (seq !== this.loadSeq) return;
      // Keep the first request's per-metric maps as they are, so charts already drawn are not redrawn.
      this.series = [...this.series, ...more];
      this.index = mergeIndex(this.index, indexSeries(more));
    }
    this.loading = false;
  }

  /**
   * Runs the collapse detector over these stored runs, saving its alerts (runs.detect with save, as
   * `arlarena check --save`), then reads the compared runs' records again: their alerts, counts and verdicts.
   */
  async detect(runIds: readonly string[]): Promise<void> {
    const seq = this.loadSeq;
    await this.lab.detectRuns(runIds);
    if (seq !== this.loadSeq || this.records.length === 0) return;
    const recs = await this.lab.call('runs.getMany', { runIds: this.records.map((r) => r.id) });
    if (recs.ok && seq === this.loadSeq) this.records = recs.value.runs;
  }

  /** The union of the compared runs' logged keys (a run whose keys cannot be read adds none). */
  private async loadLoggedKeys(ids: readonly string[]): Promise<string[]> {
    const axes = ids.length > 0 ? this.lab.call('runs.axisKeys', { runIds: [...ids].slice(0, 64) }, { quiet: true }) : null;
    const replies = await Promise.all(ids.map((runId) => this.lab.call('runs.metricKeys', { runId }, { quiet: true })));
    const keys = uniq(replies.flatMap((r) => (r.ok ? r.value : []))).sort();
    this.loggedKeys = keys;
    const a = await axes;
    this.axisKeys = a?.ok ? a.value : null;
    return keys;
  }

  private async loadBaselines(ids: readonly string[], seq: number): Promise<void> {
    const replies = await Promise.all(ids.map((runId) => this.lab.call('runs.baselines', { runId }, { quiet: true })));
    if (seq !== this.loadSeq) return;
    this.baselines = baselineCells(ids, replies);
  }

  private wantedKeys(): string[] {
    return uniq([...this.chartKeys, ...TRAIN_SUCCESS_KEYS, ...BREAKING_KEYS]);
  }

  private async fetchSeries(ids: readonly string[], keys: readonly string[] = this.wantedKeys()): Promise<Series[]> {
    // A deleted run simply yields no series (runs.get reports it as missing).
    const res = await this.lab.call('runs.metrics', {
      runIds: [...ids],
      keys: [...keys],
      xAxis: this.xAxis,
      ...(this.xKey ? { xKey: this.xKey } : {}),
      maxPoints: COMPARE_MAX_POINTS,
    });
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

  async setXAxis(x: XAxisName): Promise<void> {
    this.xAxis = x;
    this.xKey = '';
    await this.reloadSeries();
  }

  /** Chart against a logged key (e.g. training/epoch) instead of step, wall time or tokens. */
  async setXKey(key: string): Promise<void> {
    this.xKey = key;
    await this.reloadSeries();
  }

  async setChartKeys(keys: string[]): Promise<void> {
    this.autoPanels = false;
    this.chartKeys = keys;
    await this.reloadSeries();
  }

  /**
   * A saved workspace that arrived after the view opened (the data directory's, dataDirWorkspace.ts): its charts,
   * smoothing, x-axis and grouping, the series loaded again once if the charts or the x-axis changed.
   */
  async adopt(ws: SavedWorkspace): Promise<void> {
    if (ws.smoothing) this.smoothing = ws.smoothing;
    if (ws.strength !== undefined) this.strength = ws.strength;
    if (ws.group !== undefined) this.groupBy = ws.group;
    const charts = ws.metrics && ws.metrics.join(',') !== this.chartKeys.join(',') ? [...ws.metrics] : null;
    const x = (ws.xAxis !== undefined && ws.xAxis !== this.xAxis) || (ws.xKey ?? '') !== this.xKey;
    if (charts === null && !x) return;
    if (charts) {
      this.autoPanels = false;
      this.chartKeys = charts;
    }
    if (ws.xAxis !== undefined) this.xAxis = ws.xAxis;
    this.xKey = ws.xKey ?? '';
    await this.reloadSeries();
  }
}
