/**
 * The compare view's data model, pure: from stored series and run records to chart inputs, summary rows and
 * verdicts. Kept out of the component so it is unit-tested and cheap to recompute.
 */
import type { Alert, RunRecord, Series } from '../../shared/api';
import { detectedThroughOf } from '../../shared/detection';
import { PALETTE, type AlertMark, type BandInput, type LineInput } from './chartOptions';
import { bandStats, clipBand, groupRuns, type BandKind } from './grouping';
import { smooth, type SmoothingMode } from './smoothing';
import { headline, stepsToThreshold, verdict, type Headline, type Verdict } from './summary';
import { BREAKING_KEYS } from './metricKeys';
import { TRAIN_SUCCESS_KEYS, headlineKey } from '../../shared/headline';

export interface CompareOptions {
  readonly smoothing: SmoothingMode;
  readonly strength: number;
  /** Dotted config key to group by, or '' for no grouping. */
  readonly groupBy: string;
  /** What a group's band spans (default ± std). */
  readonly band?: BandKind;
  /** Runs (ids) or, when grouping, groups (values) the legend has hidden. */
  readonly hidden?: ReadonlySet<string>;
  /** Mark every alert on every chart (default: a chart marks only the alerts on its own metric). */
  readonly allAlerts?: boolean;
}

/** The values a metric of this catalog unit can take, for clipping bands; null when unbounded. */
export function unitRange(unit: string | undefined): { min?: number; max?: number } | null {
  if (unit === 'ratio') return { min: 0, max: 1 };
  if (
    unit === 'count' ||
    unit === 'tokens' ||
    unit === 'steps' ||
    unit === 'seconds' ||
    unit === 'tokens/s' ||
    unit === 'norm' ||
    unit === 'lr'
  )
    return { min: 0 };
  return null;
}

/**
 * The colour of each run: its own palette colour, or its group's when grouping, so the table's swatches, the
 * legend and the charts' bands agree.
 */
export function runColors(runs: readonly Pick<RunRecord, 'id' | 'config'>[], groupBy: string): Map<string, string> {
  const out = new Map<string, string>();
  if (groupBy === '') runs.forEach((r, i) => out.set(r.id, runColor(i)));
  else
    groupRuns(
      runs.map((r) => ({ id: r.id, config: r.config })),
      groupBy,
    ).forEach((g, gi) => g.runIds.forEach((id) => out.set(id, runColor(gi))));
  return out;
}

export interface LegendEntry {
  /** What the legend hides: a run id, or a group value when grouping. */
  readonly key: string;
  readonly label: string;
  readonly color: string;
}

/** The legend's entries: the runs, or the groups with their N. */
export function legendEntries(runs: readonly Pick<RunRecord, 'id' | 'name' | 'config'>[], groupBy: string): LegendEntry[] {
  if (groupBy === '') return runs.map((r, i) => ({ key: r.id, label: r.name, color: runColor(i) }));
  return groupRuns(
    runs.map((r) => ({ id: r.id, config: r.config })),
    groupBy,
  ).map((g, gi) => ({ key: g.value, label: `${groupBy} = ${g.value} (N=${g.runIds.length})`, color: runColor(gi) }));
}

/** The runs the charts draw, in record order: those whose legend entry (the run, or its group) is not hidden. */
export function visibleRunIds(runs: readonly Pick<RunRecord, 'id' | 'config'>[], groupBy: string, hidden: ReadonlySet<string>): string[] {
  if (groupBy === '') return runs.filter((r) => !hidden.has(r.id)).map((r) => r.id);
  const shown = new Set(
    groupRuns(
      runs.map((r) => ({ id: r.id, config: r.config })),
      groupBy,
    )
      .filter((g) => !hidden.has(g.value))
      .flatMap((g) => g.runIds),
  );
  return runs.filter((r) => shown.has(r.id)).map((r) => r.id);
}

export type SeriesIndex = ReadonlyMap<string, ReadonlyMap<string, Series>>;

/** key → runId → series. */
export function indexSeries(list: readonly Series[]): Map<string, Map<string, Series>> {
  const m = new Map<string, Map<string, Series>>();
  for (const s of list) {
    let byRun = m.get(s.key);
    if (!byRun) m.set(s.key, (byRun = new Map()));
    byRun.set(s.runId, s);
  }
  return m;
}

/** A new index with `more`'s metrics added; metrics already in `base` keep their (identical) maps. */
export function mergeIndex(base: SeriesIndex, more: SeriesIndex): SeriesIndex {
  const out = new Map(base);
  for (const [k, v] of more) if (!out.has(k)) out.set(k, v);
  return out;
}

/** The x position of a step in a series (exact if kept, else the nearest kept step's x). */
export function xOfStep(s: Pick<Series, 'x' | 'steps'>, step: number): number {
  const st = s.steps;
  if (st.length === 0) return step;
  let lo = 0;
  let hi = st.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (st[mid] < step) lo = mid + 1;
    else hi = mid;
  }
  if (lo > 0 && Math.abs(st[lo - 1] - step) < Math.abs(st[lo] - step)) lo--;
  return s.x[lo];
}

export function runColor(index: number): string {
  return PALETTE[index % PALETTE.length];
}

export interface ChartModel {
  readonly lines: LineInput[];
  readonly bands: BandInput[];
  readonly alerts: AlertMark[];
}

/** Lines (and bands when grouping) for one metric across the compared runs. */
export function chartModel(
  key: string,
  runs: readonly RunRecord[],
  index: SeriesIndex,
  opts: CompareOptions,
  range: { min?: number; max?: number } | null = null,
): ChartModel {
  const byRun = index.get(key) ?? new Map<string, Series>();
  const lines: LineInput[] = [];
  const bands: BandInput[] = [];
  const alerts: AlertMark[] = [];
  const grouped = opts.groupBy !== '';
  const smoothed = (y: readonly (number | null)[]) => (opts.smoothing === 'none' ? null : smooth(y, opts.smoothing, opts.strength));
  const hidden = opts.hidden ?? new Set<string>();
  const groups = grouped
    ? groupRuns(
        runs.map((r) => ({ id: r.id, config: r.config })),
        opts.groupBy,
      )
    : [];
  const groupOf = new Map<string, string>();
  groups.forEach((g) => g.runIds.forEach((id) => groupOf.set(id, g.value)));
  const colors = runColors(runs, opts.groupBy);

  runs.forEach((r) => {
    const s = byRun.get(r.id);
    if (!s || hidden.has(grouped ? (groupOf.get(r.id) ?? '') : r.id)) return;
    lines.push({
      name: r.name,
      color: colors.get(r.id) ?? runColor(0),
      x: s.x,
      y: s.y,
      smoothed: grouped ? null : smoothed(s.y),
      nonFinite: s.nonFinite.map((n) => ({ x: xOfStep(s, n.step), step: n.step, value: n.value })),
      faint: grouped,
    });
    for (const a of r.alerts) {
      if (!opts.allAlerts && a.metric !== key) continue;
      // The rule only: the band's colour is its run's (the legend and table name it).
      alerts.push({
        x: xOfStep(s, a.firstStep),
        xEnd: xOfStep(s, a.lastStep),
        label: a.rule,
        severity: a.severity,
        run: r.id,
        color: colors.get(r.id) ?? runColor(0),
      });
    }
  });

  if (grouped) {
    groups.forEach((g, gi) => {
      const members = g.runIds.map((id) => byRun.get(id)).filter((s): s is Series => s !== undefined);
      if (members.length === 0 || hidden.has(g.value)) return;
      const b = clipBand(
        bandStats(
          members.map((s) => ({ x: s.x, y: smoothed(s.y) ?? s.y })),
          400,
          opts.band ?? 'std',
        ),
        range,
      );
      bands.push({ name: `${opts.groupBy} = ${g.value} (N=${g.runIds.length})`, color: runColor(gi), ...b });
    });
  }
  return { lines, bands, alerts };
}

export interface SummaryRow {
  readonly runId: string;
  readonly name: string;
  readonly color: string;
  readonly success: Headline;
  /** The key `success` is read from: episode/success_rate, or episode/score_mean for a run that logs scores. */
  readonly successKey: string;
  readonly stepsToThreshold: number | null;
  readonly alerts: { critical: number; warning: number; info: number };
  /** The last step the collapse detector has checked; null: never (the alert counts then say nothing). */
  readonly checkedThrough: number | null;
  readonly verdict: Verdict;
}

/** Training episodes behind one success point: rollout.tasksPerStep × rollout.groupSize; null when not in the config. */
function episodesPerStep(config: Record<string, unknown>): number | null {
  const ro = config.rollout as { tasksPerStep?: unknown; groupSize?: unknown } | undefined;
  const b = ro?.tasksPerStep;
  const g = ro?.groupSize;
  return typeof b === 'number' && typeof g === 'number' && Number.isInteger(b * g) && b * g > 0 ? b * g : null;
}

export function summaryRows(runs: readonly RunRecord[], index: SeriesIndex, threshold: number, groupBy = ''): SummaryRow[] {
  const colors = runColors(runs, groupBy);
  return runs.map((r, i) => {
    // Success rate where the run logged one, else its task score (an imported verl / TRL run): shared/headline.ts.
    const successKey = headlineKey(
      TRAIN_SUCCESS_KEYS,
      (k) =>
        index
          .get(k)
          ?.get(r.id)
          ?.y.some((v) => v !== null && Number.isFinite(v)) ?? false,
    );
    const s = index.get(successKey)?.get(r.id);
    const success = s ? { steps: s.steps, y: s.y } : { steps: [], y: [] };
    const nonFiniteSteps: number[] = [];
    for (const k of BREAKING_KEYS) {
      const b = index.get(k)?.get(r.id);
      // NaN on a step without updates is "not applicable"; ±Infinity or NaN alongside finite values is breakage.
      if (b) for (const n of b.nonFinite) if (n.value !== 'NaN' || b.y.some((v) => v !== null)) nonFiniteSteps.push(n.step);
    }
    const count = (sev: Alert['severity']) => r.alerts.filter((a) => a.severity === sev).length;
    const checkedThrough = detectedThroughOf(r);
    // The run's own length: its longest loaded series before downsampling (a run may log no success rate at all).
    let loggedSteps = 0;
    for (const byRun of index.values()) loggedSteps = Math.max(loggedSteps, byRun.get(r.id)?.totalPoints ?? 0);
    return {
      runId: r.id,
      name: r.name,
      color: colors.get(r.id) ?? runColor(i),
      success: headline(success),
      successKey,
      stepsToThreshold: stepsToThreshold(success, threshold),
      alerts: { critical: count('critical'), warning: count('warning'), info: count('info') },
      checkedThrough,
      verdict: verdict({
        success,
        alerts: r.alerts,
        nonFiniteSteps,
        episodesPerPoint: episodesPerStep(r.config),
        detector: { through: checkedThrough, lastStep: r.step },
        ...(loggedSteps > 0 ? { loggedSteps } : {}),
      }),
    };
  });
}
