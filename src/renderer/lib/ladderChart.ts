/**
 * The Ladder view's pure parts: survival curves as an ECharts option (Kaplan–Meier step functions, one per cell,
 * with a tick where a seed was censored), and the numbers of the per-cell table as text. Pure so they are tested
 * without a DOM; the view (LadderView.svelte) draws the option with ECharts in the page.
 *
 * Kaplan–Meier convention (src/core/stats/survival.ts): the curve holds its value until the next collapse step and
 * drops there, so it is drawn as a step that goes across, then down (ECharts `step: 'end'`). A seed that ended
 * without collapsing is censored at its last step: the usual tick on the curve at that step.
 */
import type { LadderCell, LadderListItem, LadderRunRef } from '../../shared/ladders';
import { PALETTE } from './chartOptions';

/** S(t): the share not yet collapsed at step t on a curve of pairs [step, share] (1 before the first pair). */
export function survivalAt(survival: ReadonlyArray<readonly [number, number]>, t: number): number {
  let s = 1;
  for (const [step, share] of survival) {
    if (step > t) break;
    s = share;
  }
  return s;
}

export interface CensorMark {
  readonly step: number;
  readonly share: number;
  readonly seed: number;
  readonly runId: string | null;
}

/** The finished seeds that did not collapse, as ticks on their cell's curve at their last step. */
export function censorMarks(cell: Pick<LadderCell, 'runs' | 'survival'>): CensorMark[] {
  return cell.runs
    .filter((r) => r.done && r.collapseStep === null && r.step !== null)
    .map((r) => ({ step: r.step!, share: survivalAt(cell.survival, r.step!), seed: r.seed, runId: r.runId }));
}

/**
 * The runs behind a cell that this data dir holds (every seed with a stored run, finished or not), in seed order: what
 * its link opens. A run known only by its ledger line (a fresh clone's, or one reused from another study) is left
 * out: Compare could not open it.
 */
export function cellRunIds(cell: Pick<LadderCell, 'runs'>): string[] {
  return [...cell.runs]
    .sort((a, b) => a.seed - b.seed)
    .filter((r) => r.stored)
    .map((r) => r.runId)
    .filter((id): id is string => id !== null);
}

/**
 * The command that continues a ladder: its own command with --resume, which keeps its --out (where its ledger is);
 * `arlarena ladder --study NAME --resume` alone continues it too, under the plan stored with it.
 */
export function resumeCommand(command: string): string {
  return command.trim().split(/\s+/).includes('--resume') ? command.trim() : `${command.trim()} --resume`;
}

/** What a cell's runs from other studies' ledgers say in its row: `8 reused from study X`, per study; '' for none. */
export function reusedText(reused: LadderCell['reused']): string {
  return reused.map((r) => `${r.runs} reused from study ${r.study}`).join(', ');
}

/** A finished run's outcome in words: where it collapsed, or that it did not in its steps; '' before it finished. */
export function outcomeText(run: Pick<LadderRunRef, 'done' | 'step' | 'collapseStep'>): string {
  if (!run.done) return run.step !== null ? `step ${run.step} so far` : '';
  return run.collapseStep === null ? `no collapse in ${run.step} steps` : `collapsed at step ${run.collapseStep}`;
}

export interface SurvivalCurve {
  /** The cell: its arm, or its preset (also the series name a click reports). */
  readonly name: string;
  readonly color: string;
  readonly survival: ReadonlyArray<readonly [number, number]>;
  readonly censored: readonly CensorMark[];
}

/** A cell's name: its arm in a ladder of arms, else its preset. */
export const cellName = (c: Pick<LadderCell, 'arm' | 'preset'>): string => c.arm ?? c.preset;

/** One curve per cell of a level panel, coloured by the cell's place in the ladder's list (presets or arms). */
export function survivalCurves(cells: readonly LadderCell[], names: readonly string[]): SurvivalCurve[] {
  return cells.map((c) => {
    const i = names.indexOf(cellName(c));
    return {
      name: cellName(c),
      color: PALETTE[(i < 0 ? names.length : i) % PALETTE.length],
      survival: c.survival,
      censored: censorMarks(c),
    };
  });
}

export interface SurvivalChartInput {
  readonly curves: readonly SurvivalCurve[];
  readonly dark: boolean;
  /** The x-axis runs to here at least (the ladder's planned steps), so panels of one ladder share a scale. */
  readonly maxStep: number | null;
}

const pctText = (s: number) => `${(100 * s).toFixed(0)} %`;

/** The plot area's place in the panel: the y-axis labels and its rotated name fit in `left` (tested by the e2e click). */
export const SURVIVAL_GRID = { left: 64, right: 16, top: 16, bottom: 40 } as const;

/**
 * The tooltip at step t: every curve's share not yet collapsed there (so curves drawn on top of each other — two
 * presets that never collapsed — are all named), and the seeds censored at exactly that step.
 */
export function survivalTooltip(curves: readonly SurvivalCurve[], t: number): string[] {
  const lines = [`step ${t}: share not yet collapsed`];
  for (const c of curves) {
    if (c.survival.length === 0) continue;
    const censored = c.censored.filter((m) => m.step === t).map((m) => m.seed);
    const note = censored.length ? ` (seed ${censored.join(', ')} censored here: no collapse)` : '';
    lines.push(`${c.name}: ${pctText(survivalAt(c.survival, t))}${note}`);
  }
  return lines;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** The ECharts option of one level's survival panel. Series ids: `curve:<cell>` and `censor:<cell>`. */
export function survivalChartOption(input: SurvivalChartInput): Record<string, unknown> {
  const fg = input.dark ? '#d6d6d6' : '#333333';
  const grid = input.dark ? '#3a3a3a' : '#e6e6e6';
  const last = Math.max(0, input.maxStep ?? 0, ...input.curves.flatMap((c) => c.survival.map(([t]) => t)));
  const series: Record<string, unknown>[] = [];
  for (const c of input.curves) {
    if (c.survival.length === 0) continue;
    series.push({
      id: `curve:${c.name}`,
      name: c.name,
      type: 'line',
      step: 'end',
      data: c.survival.map(([t, s]) => [t, s]),
      symbol: 'none',
      showSymbol: false,
      // A click on the line itself (not only on a point) opens the curve's runs.
      triggerLineEvent: true,
      lineStyle: { color: c.color, width: 2 },
      itemStyle: { color: c.color },
      emphasis: { focus: 'series', lineStyle: { width: 3 } },
      z: 3,
    });
    if (c.censored.length > 0)
      series.push({
        id: `censor:${c.name}`,
        name: c.name,
        type: 'scatter',
        data: c.censored.map((m) => ({ value: [m.step, m.share], seed: m.seed })),
        // A short vertical tick: the usual censoring mark of a Kaplan–Meier plot.
        symbol: 'rect',
        symbolSize: [2, 12],
        itemStyle: { color: c.color },
        z: 4,
      });
  }
  return {
    animation: false,
    backgroundColor: 'transparent',
    textStyle: { color: fg },
    grid: { ...SURVIVAL_GRID, outerBoundsMode: 'none' },
    tooltip: {
      // By step, not by item: identical curves lie on top of each other, and the tooltip names them all.
      trigger: 'axis',
      axisPointer: { type: 'line' },
      confine: true,
      backgroundColor: input.dark ? '#22272e' : '#ffffff',
      borderColor: grid,
      textStyle: { color: fg },
      formatter: (ps: Array<{ axisValue: number }> | { axisValue: number }) => {
        const p = Array.isArray(ps) ? ps[0] : ps;
        // S(t) holds between integer steps: the step at or left of the pointer.
        const t = Math.max(0, Math.floor(Number(p?.axisValue ?? 0)));
        return survivalTooltip(input.curves, t).map(escapeHtml).join('<br>');
      },
    },
    xAxis: {
      type: 'value',
      name: 'RL step',
      nameLocation: 'middle',
      nameGap: 24,
      min: 0,
      max: last > 0 ? last : 1,
      minInterval: 1,
      axisLine: { lineStyle: { color: fg } },
      splitLine: { lineStyle: { color: grid } },
    },
    yAxis: {
      type: 'value',
      name: 'not yet collapsed',
      nameLocation: 'middle',
      nameGap: 46,
      min: 0,
      max: 1,
      axisLabel: { formatter: (v: number) => pctText(v) },
      axisLine: { lineStyle: { color: fg } },
      splitLine: { lineStyle: { color: grid } },
    },
    series,
  };
}

// --- the table's numbers as text ---

export const pct = (x: number | null): string => (x === null ? '–' : `${(100 * x).toFixed(0)} %`);

/** "38 % [9 %, 76 %]" (3/8): a share with its interval and counts; "–" without results. */
export function shareText(s: LadderCell['collapsedShare']): string {
  if (s.mean === null) return '–';
  return `${pct(s.mean)} [${s.ci95 ? `${pct(s.ci95[0])}, ${pct(s.ci95[1])}` : '–'}] (${s.collapsed}/${s.n})`;
}

export function pValueText(p: number): string {
  return p < 0.001 ? '< 0.001' : p.toFixed(3);
}

export function heldOutText(h: LadderCell['heldOutSurvivors']): string {
  if (h.mean === null) return '–';
  return `${(100 * h.mean).toFixed(1)} %${h.ci95 ? ` [${(100 * h.ci95[0]).toFixed(1)}, ${(100 * h.ci95[1]).toFixed(1)}]` : ''} (n ${h.n})`;
}

export function verdictClass(verdict: string): 'good' | 'bad' | 'muted' {
  return verdict === 'collapses less' ? 'good' : verdict === 'collapses more' ? 'bad' : 'muted';
}

/** Rollout seconds per RL step, "1.10 s", and the speed-up over the baseline, "× 1.91"; "–" when not logged. */
export function rolloutText(s: LadderCell['rolloutSecondsPerStep'], speedup: number | null): string {
  if (s.mean === null) return '–';
  return `${s.mean.toFixed(2)} s${speedup === null ? '' : ` (× ${speedup.toFixed(2)})`}`;
}

/**
 * The config path Compare groups a level's runs by: the preset for a ladder of presets; for a ladder of arms, the
 * first override on which the arms differ (e.g. compute.rolloutPrecision), else the preset.
 */
export function levelGroupPath(
  arms: ReadonlyArray<{ readonly preset: string; readonly sets: Readonly<Record<string, unknown>> }> | null,
): string {
  if (!arms) return 'preset';
  const keys = [...new Set(arms.flatMap((a) => Object.keys(a.sets)))];
  const differs = keys.find((k) => new Set(arms.map((a) => (k in a.sets ? JSON.stringify(a.sets[k]) : '∅'))).size > 1);
  return differs ?? 'preset';
}

/** A ladder's key in the list: the same name may be in the data dir and committed in the checkout. */
export const ladderKey = (l: Pick<LadderListItem, 'name' | 'source'>): string => `${l.source}:${l.name}`;

/**
 * The ladder the view shows: the one the address names (the committed summary when it says so; else the data dir's
 * ladder of that name before a committed one), else the first readable one; null when none is readable.
 */
export function pickLadder(list: readonly LadderListItem[], name: string | null, committed: boolean): LadderListItem | null {
  if (name !== null) {
    const same = list.filter((l) => l.name === name);
    const exact = same.find((l) => l.source === (committed ? 'committed' : 'data'));
    if (exact) return exact;
    if (same.length > 0) return same[0];
  }
  return list.find((l) => l.problem === null) ?? null;
}
