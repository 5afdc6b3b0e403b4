/** State of the run detail view: the record, its live metric series and its alerts, kept current by events. */
import type { Alert, RunBaselines, RunRecord } from '../../shared/api';
import { baselineError } from './baselines';
import { liveAlert } from './liveAlert';
import type { Lab } from './lab.svelte';
import { appendRecords, fromStored, type LiveSeries } from './liveSeries';
import { DEFAULT_CHART_KEYS, VAL_SUCCESS_KEY } from './metricKeys';
import { importedChartKeys } from './importedRun';
import { grownKeys, unionKeys } from './coverageRefresh';
import { METRIC_CATALOG, metricDef } from '../../shared/metrics';
import { choosePanels, panelCandidates } from './defaultPanels';

const TERMINAL = new Set(['completed', 'failed', 'stopped', 'interrupted']);

export class RunDetail {
  record = $state.raw<RunRecord | null>(null);
  notFound = $state<string | null>(null);
  series = $state.raw<ReadonlyMap<string, LiveSeries>>(fromStored([]));
  /**
   * Keys the run has logged (from the store, then grown by live records), sorted; the chart picker offers these
   * and the detector panel re-reads which rules apply when it grows.
   */
  availableKeys = $state.raw<string[]>([]);
  chartKeys = $state.raw<string[]>([...DEFAULT_CHART_KEYS]);
  /** How many times the charts were chosen through setChartKeys (the user's picker, a toggle, an alert's focus). */
  private chartChoices = 0;
  /** What the picker's "Defaults" restores: the dashboard, or an imported run's panels chosen from what it logged. */
  defaultKeys = $state.raw<string[]>([...DEFAULT_CHART_KEYS]);
  /** The charts' first series arrived: slower, optional work (the detector's dry check) may start. */
  seriesLoaded = $state(false);
  /** Bumped when a new trajectory is stored, so the viewer can offer the latest one. */
  trajectoryTick = $state(0);
  /** Random / expert / warm-start success on the run's validation tasks (runs.baselines); null until loaded. */
  baselines = $state.raw<RunBaselines | null>(null);
  /** Why the baselines could not be computed, with what to do. */
  baselinesError = $state<string | null>(null);
  baselinesLoading = $state(false);
  private unsubs: (() => void)[] = [];

  constructor(
    private readonly lab: Lab,
    readonly runId: string,
  ) {}

  /** The session's one-line progress (e.g. behaviour-cloning updates before RL step 1), while it runs. */
  phaseDetail = $state<string | null>(null);
  /**
   * The session's running seconds as last reported, and when (performance.now()): the view counts on from it
   * between status events. Null until the session reports (or when the run is not active in this app).
   */
  elapsed = $state.raw<{ seconds: number; at: number } | null>(null);
  /** Stop was clicked: shown at once; cleared when the run reaches a terminal status or the call fails. */
  stopping = $state(false);

  readonly alerts = $derived<Alert[]>(this.record ? [...this.record.alerts].sort((a, b) => a.firstStep - b.firstStep) : []);

  async load(): Promise<void> {
    // The record and the key list in parallel: neither needs the other, and a cold deep link waits for both.
    const keysCall = this.lab.call('runs.metricKeys', { runId: this.runId }, { quiet: true });
    const res = await this.lab.call('runs.get', { runId: this.runId }, { quiet: true });
    if (!res.ok) {
      this.notFound =
        res.error.code === 'NOT_FOUND'
          ? `No run with id “${this.runId}”: it may have been deleted.`
          : `${res.error.message}${res.error.hint ? ` — ${res.error.hint}` : ''}`;
      return;
    }
    this.record = res.value;
    if (!TERMINAL.has(res.value.status)) void this.loadElapsed();
    // An imported run has no lab environment to run random / expert policies on.
    if (!this.imported) void this.loadBaselines();
    const keysRes = await keysCall;
    // Union: live records may have arrived (and grown the set) while the store's keys were being read.
    if (keysRes.ok) this.availableKeys = unionKeys(this.availableKeys, keysRes.value) ?? this.availableKeys;
    if (this.imported && this.availableKeys.length > 0) await this.loadImportedPanels();
    else {
      if (this.imported) this.chartKeys = this.importedCharts(this.availableKeys);
      await this.loadSeries();
    }
  }

  /**
   * An imported run's charts, chosen from what it logged: its candidates' series are fetched in one request and
   * the constant or empty ones left out (lib/defaultPanels.ts; the same choice Compare makes).
   */
  private async loadImportedPanels(): Promise<void> {
    const candidates = panelCandidates(
      this.availableKeys,
      METRIC_CATALOG.map((d) => d.key),
      DEFAULT_CHART_KEYS,
    );
    const res = await this.lab.call('runs.metrics', { runIds: [this.runId], keys: candidates, xAxis: 'step', maxPoints: 2000 });
    // Once charts were chosen on this page (a toggle, the picker, an alert's focus), that choice stands: choosing the
    // panels over it, when a load came back after it, undid the toggle.
    if (this.chartChoices > 0) {
      await this.loadSeries();
      return;
    }
    if (!res.ok) {
      this.chartKeys = this.importedCharts(this.availableKeys);
      await this.loadSeries();
      return;
    }
    const got = res.value;
    const chosen = choosePanels(candidates, (k) => got.filter((s) => s.key === k));
    if (chosen.length === 0) {
      this.chartKeys = this.importedCharts(this.availableKeys);
      await this.loadSeries();
      return;
    }
    this.chartKeys = chosen;
    this.defaultKeys = chosen;
    this.series = fromStored(res.value.filter((s) => chosen.includes(s.key)));
    this.seriesLoaded = true;
  }

  /** The running seconds of this run's session, when it is active in this app. */
  private async loadElapsed(): Promise<void> {
    const res = await this.lab.call('sessions.list', undefined, { quiet: true });
    const mine = res.ok ? res.value.find((s) => s.runId === this.runId) : undefined;
    if (mine && this.elapsed === null) this.elapsed = { seconds: mine.elapsedSeconds, at: performance.now() };
  }

  /** Seconds to show as elapsed at `now` (performance.now()): counting while running, still while paused. */
  elapsedAt(now: number): number {
    const r = this.record;
    if (!r) return 0;
    if (!this.elapsed || TERMINAL.has(r.status)) return r.wallSeconds;
    const since = r.status === 'running' ? Math.max(0, (now - this.elapsed.at) / 1000) : 0;
    return Math.max(r.wallSeconds, this.elapsed.seconds + since);
  }

  /** Quiet: a run without baselines (e.g. a synthetic demo run) says why in its own panel, not as a toast. */
  async loadBaselines(): Promise<void> {
    this.baselinesLoading = true;
    this.baselinesError = null;
    const res = await this.lab.call('runs.baselines', { runId: this.runId }, { quiet: true });
    this.baselinesLoading = false;
    if (res.ok) this.baselines = res.value;
    else this.baselinesError = baselineError(res.error);
  }

  /** Imported from an external log: its charts and panels follow the keys the source had. */
  get imported(): boolean {
    return this.record?.kind === 'imported';
  }

  private importedCharts(keys: readonly string[]): string[] {
    return importedChartKeys(keys, (k) => this.lab.metricDef(k) !== undefined || metricDef(k) !== undefined, DEFAULT_CHART_KEYS);
  }

  async loadSeries(): Promise<void> {
    const keys = this.chartKeys;
    if (keys.length > 0) {
      const res = await this.lab.call('runs.metrics', { runIds: [this.runId], keys, xAxis: 'step', maxPoints: 2000 });
      // Charts picked again while this was on the way: the newer request's answer is the one to show.
      if (keys !== this.chartKeys) return;
      if (res.ok) this.series = fromStored(res.value);
    }
    this.seriesLoaded = true;
  }

  async setChartKeys(keys: string[]): Promise<void> {
    this.chartChoices++;
    this.chartKeys = keys;
    await this.loadSeries();
  }

  async refreshRecord(): Promise<void> {
    const res = await this.lab.call('runs.get', { runId: this.runId }, { quiet: true });
    if (res.ok) this.record = res.value;
  }

  subscribe(): void {
    this.unsubs.push(
      this.lab.on('run.metrics', (p) => {
        if (p.runId !== this.runId) return;
        this.metricsSeen++;
        // Only a batch that brings a key not seen before changes the list (most steps bring none).
        const grown = grownKeys(this.availableKeys, p.records);
        if (grown) this.availableKeys = grown;
        // A followed log that had no step when the view opened: its charts are chosen from its first keys.
        if (this.imported && this.chartKeys.length === 0 && p.records[0]) this.chartKeys = this.importedCharts(this.availableKeys);
        this.series = appendRecords(this.series, this.chartKeys, p.records);
        // A followed log has no training session reporting progress: its newest stored step is its step.
        const last = p.records.length ? Math.max(...p.records.map((r) => r.step)) : -1;
        if (this.imported && this.record && last > this.record.step) this.record = { ...this.record, step: last };
        this.foldValidation(p.records);
      }),
      this.lab.on('session.status', (s) => {
        if (s.runId !== this.runId || !this.record) return;
        if (s.step > this.record.step) this.catchUpSeries();
        this.record = {
          ...this.record,
          status: s.status,
          step: s.step,
          totalSteps: s.totalSteps,
          etaSeconds: s.etaSeconds,
          error: s.error ?? this.record.error,
        };
        this.elapsed = { seconds: s.elapsedSeconds, at: performance.now() };
        this.phaseDetail = TERMINAL.has(s.status) ? null : s.detail;
        if (TERMINAL.has(s.status)) {
          this.stopping = false;
          void this.refreshRecord();
        }
      }),
      this.lab.on('run.alert', ({ runId, alert }) => {
        if (runId !== this.runId || !this.record) return;
        const alerts = [
          ...this.record.alerts.filter((a) => a.id !== alert.id),
          liveAlert(
            this.record.alerts.find((a) => a.id === alert.id),
            alert,
          ),
        ];
        this.record = { ...this.record, alerts, alertCount: alerts.length };
      }),
      // The record changed (a followed log printed its config, another process renamed or trained it): read it again.
      this.lab.on('runs.changed', (p) => {
        if (p.runId !== this.runId || this.refreshTimer) return;
        this.refreshTimer = setTimeout(() => {
          this.refreshTimer = null;
          void this.refreshRecord();
        }, 300);
      }),
      this.lab.on('run.trajectory', (p) => {
        if (p.runId === this.runId) this.trajectoryTick++;
      }),
    );
  }

  /** run.metrics batches received for this run (a run trained by another process sends none). */
  private metricsSeen = 0;
  private catchUpTimer: ReturnType<typeof setTimeout> | null = null;
  private refreshTimer: ReturnType<typeof setTimeout> | null = null;

  /**
   * The run moved on: when no metric records come with it within a few seconds — another process (the CLI's
   * train or resume) is training it and only its record changes reach this app — read the charts' series again.
   */
  private catchUpSeries(): void {
    if (this.catchUpTimer) return;
    const seen = this.metricsSeen;
    this.catchUpTimer = setTimeout(() => {
      this.catchUpTimer = null;
      if (this.metricsSeen === seen) void this.loadSeries();
    }, 2500);
  }

  /** Keep the validation headline (last and best val/success_rate) current between record refreshes. */
  private foldValidation(records: readonly { values: Record<string, number | null> }[]): void {
    if (!this.record) return;
    let summary = this.record.summary;
    for (const r of records) {
      const v = r.values[VAL_SUCCESS_KEY];
      if (v === null || v === undefined || !Number.isFinite(v)) continue;
      const best = summary[`best/${VAL_SUCCESS_KEY}`];
      summary = {
        ...summary,
        [VAL_SUCCESS_KEY]: v,
        [`best/${VAL_SUCCESS_KEY}`]: best === null || best === undefined || v > best ? v : best,
      };
    }
    if (summary !== this.record.summary) this.record = { ...this.record, summary };
  }

  dispose(): void {
    if (this.catchUpTimer) clearTimeout(this.catchUpTimer);
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    for (const u of this.unsubs) u();
    this.unsubs = [];
  }

  async control(action: 'pause' | 'resume' | 'stop'): Promise<void> {
    if (action === 'stop') this.stopping = true;
    const res = await this.lab.call(`sessions.${action}`, { runId: this.runId });
    if (!res.ok) this.stopping = false;
    if (res.ok && this.record) {
      this.record = { ...this.record, status: res.value.status, step: res.value.step, etaSeconds: res.value.etaSeconds };
      this.elapsed = { seconds: res.value.elapsedSeconds, at: performance.now() };
      if (TERMINAL.has(res.value.status)) this.stopping = false;
    }
  }
}
