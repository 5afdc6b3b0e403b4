/**
 * The renderer's thin state layer over the API contract: catalogs loaded once, the run list and the alert
 * inbox kept fresh from live events, and one place where every failed call becomes a visible error with its
 * message and hint (nothing fails silently).
 */
import type {
  Alert,
  ApiEventName,
  ApiEventPayload,
  ApiInput,
  ApiMethodName,
  ApiOutput,
  ArlArenaApi,
  ConfigFieldDoc,
  EnvInfo,
  PresetInfo,
  RunSummary,
} from '../../shared/api';
import type { ApiError, Result } from '../../shared/result';
import { liveAlert } from './liveAlert';
import { currentProject, setCurrentProject } from './projectWorkspace';
import { workspaceStorage } from './dataDirWorkspace';
export type MetricInfo = ApiOutput<'catalog.metrics'>[number];

export type AppInfo = ApiOutput<'app.info'>;

export interface UiError extends ApiError {
  readonly id: number;
  /** The API method that failed, e.g. `sessions.start`. */
  readonly method: string;
}

let nextErrorId = 1;

export class Lab {
  info = $state.raw<AppInfo | null>(null);
  /** The project (data directory) workspaces are saved under: known once app.info answered, or from this tab's last page. */
  project = $state<string | null>(currentProject());
  /** Counts the data directory's workspace coming in (workspace.get): a view open before it reads its part again. */
  workspaceLoads = $state(0);
  presets = $state.raw<PresetInfo[]>([]);
  envs = $state.raw<EnvInfo[]>([]);
  metrics = $state.raw<MetricInfo[]>([]);
  configFields = $state.raw<ConfigFieldDoc[]>([]);
  runs = $state.raw<RunSummary[]>([]);
  runsLoaded = $state(false);
  /** Why the run list could not be loaded (shown instead of the empty state). */
  runsError = $state<string | null>(null);
  alerts = $state.raw<Alert[]>([]);
  alertsLoaded = $state(false);
  errors = $state.raw<UiError[]>([]);
  /** A short confirmation shown after an action ("Run started"). */
  notice = $state<string | null>(null);

  readonly unackedAlerts = $derived(this.alerts.filter((a) => !a.acknowledged).length);

  private unsubs: (() => void)[] = [];
  private reloadTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(readonly api: ArlArenaApi) {}

  /** Calls the API; a failure (or a transport exception) is recorded for display unless `quiet`. */
  call<M extends ApiMethodName>(method: M, input?: ApiInput<M>, opts: { quiet?: boolean } = {}): Promise<Result<ApiOutput<M>>> {
    let pending: Promise<Result<ApiOutput<M>>>;
    try {
      pending = this.api.call(method, input);
    } catch (e) {
      pending = Promise.reject(e);
    }
    return this.settle(method, pending, opts);
  }

  /** A call already made on `api` (e.g. started before the app was mounted), handled as `call` handles its own. */
  async settle<M extends ApiMethodName>(
    method: M,
    pending: Promise<Result<ApiOutput<M>>>,
    opts: { quiet?: boolean } = {},
  ): Promise<Result<ApiOutput<M>>> {
    let res: Result<ApiOutput<M>>;
    try {
      res = await pending;
    } catch (e) {
      res = {
        ok: false,
        error: {
          code: 'INTERNAL',
          message: `The ${this.api.transport} transport failed: ${e instanceof Error ? e.message : String(e)}`,
          hint: 'Check that the lab backend is still running, then reload the page.',
        },
      };
    }
    if (!res.ok && !opts.quiet) this.reportError(method, res.error);
    return res;
  }

  reportError(method: string, error: ApiError): void {
    this.errors = [...this.errors.slice(-4), { ...error, id: nextErrorId++, method }];
  }

  dismissError(id: number): void {
    this.errors = this.errors.filter((e) => e.id !== id);
  }

  flash(message: string): void {
    this.notice = message;
    setTimeout(() => {
      if (this.notice === message) this.notice = null;
    }, 4000);
  }

  on<E extends ApiEventName>(event: E, listener: (p: ApiEventPayload<E>) => void): () => void {
    return this.api.subscribe(event, listener);
  }

  async init(): Promise<void> {
    const [info, presets, envs, metrics, fields, workspace] = await Promise.all([
      this.call('app.info'),
      this.call('catalog.presets'),
      this.call('catalog.envs'),
      this.call('catalog.metrics'),
      this.call('catalog.configFields'),
      // Quiet: a lab without it (or a failed read) leaves the workspace in this browser's storage.
      this.call('workspace.get', undefined, { quiet: true }),
    ]);
    if (info.ok) {
      this.info = info.value;
      // Workspaces (runs table, Compare, chart choices) are saved per data directory (projectWorkspace.ts), in the
      // data directory itself and in this browser's storage (dataDirWorkspace.ts).
      const project = setCurrentProject(info.value.dataDir);
      workspaceStorage().connect(project, workspace.ok ? workspace.value.workspace : null, (patch) =>
        this.call('workspace.set', patch, { quiet: true }),
      );
      if (workspace.ok && workspace.value.problem) this.flash(workspace.value.problem);
      this.project = project;
      this.workspaceLoads++;
    }
    if (presets.ok) this.presets = [...presets.value].sort((a, b) => Number(b.recommended) - Number(a.recommended));
    if (envs.ok) this.envs = envs.value;
    if (metrics.ok) this.metrics = metrics.value;
    if (fields.ok) this.configFields = fields.value;
    this.unsubs.push(
      this.on('runs.changed', () => this.scheduleReload()),
      this.on('session.status', (s) => {
        const i = this.runs.findIndex((r) => r.id === s.runId);
        if (i < 0) return this.scheduleReload();
        const next = this.runs.slice();
        next[i] = { ...next[i], status: s.status, step: s.step, totalSteps: s.totalSteps };
        this.runs = next;
        // Summary numbers (success, alerts) come from the store: refresh them now and then.
        this.scheduleReload(2000);
      }),
      this.on('run.alert', ({ alert }) => {
        const same = (a: Alert): boolean => a.id === alert.id && a.runId === alert.runId;
        this.alerts = [liveAlert(this.alerts.find(same), alert), ...this.alerts.filter((a) => !same(a))];
        // An alert means the detector has read its run at least to the alert's last step: say so now, not after
        // the reload, or the run's new alerts would show beside a "not checked" note for it.
        const i = this.runs.findIndex((r) => r.id === alert.runId);
        if (i >= 0 && (this.runs[i].detectedThrough ?? -1) < alert.lastStep) {
          const next = this.runs.slice();
          next[i] = { ...next[i], detectedThrough: alert.lastStep };
          this.runs = next;
        }
        this.scheduleReload();
      }),
    );
    await Promise.all([this.loadRuns(), this.loadAlerts()]);
  }

  dispose(): void {
    for (const u of this.unsubs) u();
    this.unsubs = [];
  }

  private scheduleReload(ms = 300): void {
    if (this.reloadTimer) return;
    this.reloadTimer = setTimeout(() => {
      this.reloadTimer = null;
      void this.loadRuns();
    }, ms);
  }

  async loadRuns(): Promise<void> {
    this.applyRuns(await this.call('runs.list', {}));
  }

  private applyRuns(res: Result<ApiOutput<'runs.list'>>): void {
    if (res.ok) this.runs = res.value;
    this.runsError = res.ok ? null : `${res.error.message}${res.error.hint ? ` — ${res.error.hint}` : ''}`;
    this.runsLoaded = true;
  }

  /**
   * Runs the collapse detector over these stored runs and stores what it finds (runs.detect with save, as
   * `arlarena check --save`; a run it cannot check is reported like any failed call), then reloads the runs and
   * the alerts.
   */
  async detectRuns(runIds: readonly string[]): Promise<void> {
    for (const runId of runIds) await this.call('runs.detect', { runId, save: true });
    // Both lists change in the same tick (the runs' detectedThrough with their alerts).
    const [runs, alerts] = await Promise.all([this.call('runs.list', {}), this.call('alerts.list', {})]);
    this.applyRuns(runs);
    this.applyAlerts(alerts);
  }

  async loadAlerts(): Promise<void> {
    this.applyAlerts(await this.call('alerts.list', {}));
  }

  private applyAlerts(res: Result<ApiOutput<'alerts.list'>>): void {
    if (res.ok) this.alerts = [...res.value].sort((a, b) => Number(a.acknowledged) - Number(b.acknowledged) || b.firstStep - a.firstStep);
    this.alertsLoaded = true;
  }

  async ackAlert(a: Alert): Promise<void> {
    const res = await this.call('alerts.ack', { runId: a.runId, alertId: a.id });
    if (res.ok) this.alerts = this.alerts.map((x) => (x.id === a.id && x.runId === a.runId ? res.value : x));
  }

  /**
   * Acknowledges `list` one `alerts.ack` at a time (a handful per triage; each is one small file write in main),
   * updating the inbox once at the end. Returns how many failed.
   */
  async ackAlerts(list: readonly Alert[]): Promise<number> {
    const done: Alert[] = [];
    let failed = 0;
    for (const a of list) {
      const res = await this.call('alerts.ack', { runId: a.runId, alertId: a.id });
      if (res.ok) done.push(res.value);
      else failed++;
    }
    if (done.length) this.alerts = this.alerts.map((x) => done.find((d) => d.id === x.id && d.runId === x.runId) ?? x);
    return failed;
  }

  presetLabel(name: string): string {
    return this.presets.find((p) => p.name === name)?.label ?? name;
  }

  envLabel(name: string): string {
    return this.envs.find((e) => e.name === name)?.label ?? name;
  }

  metricDef(key: string): MetricInfo | undefined {
    return this.metrics.find((m) => m.key === key);
  }

  runName(id: string): string {
    return this.runs.find((r) => r.id === id)?.name ?? id;
  }
}
