/**
 * Compare's parallel-coordinates panel: one axis per config key and a last axis for a headline number, one line
 * per run through its values — W&B's parallel-coordinates panel of hyperparameters against a summary metric, to
 * see which settings the good runs share. A numeric config key gets a value axis, any other a category axis of
 * the values the runs have. Drawn with ECharts' `parallel` series (echartsSetup.ts registers it). Pure,
 * unit-tested; ParallelPanel.svelte draws the option.
 */
import type { RunRecord } from '../../shared/api';
import { configValues, type ConfigValue } from '../../shared/configValues';
import { formatValue } from './configPaths';
import { VALIDATION_KEYS } from '../../shared/headline';

export interface ParallelAxis {
  /** The config path, or the headline-number key of the last axis. */
  readonly key: string;
  readonly kind: 'value' | 'category';
  /** A category axis's values, in order (numbers first, then text, each sorted). */
  readonly categories: readonly string[];
}

export interface ParallelLine {
  readonly runId: string;
  readonly name: string;
  readonly color: string;
  /** One value per axis: a number on a value axis, a category on a category axis. */
  readonly values: readonly (number | string)[];
}

export interface ParallelModel {
  readonly axes: readonly ParallelAxis[];
  readonly lines: readonly ParallelLine[];
  /** Runs left out: no finite value of the metric (their names). */
  readonly missing: readonly string[];
}

type Run = Pick<RunRecord, 'id' | 'name' | 'config' | 'summary'>;

/** Most config axes a panel opens with (more stay one click away). */
export const DEFAULT_PARALLEL_AXES = 6;

/**
 * Config keys worth an axis: those whose value differs between the runs (what tells them apart), seed last, then
 * the keys the runs share; each part sorted.
 */
export function parallelKeys(runs: readonly Pick<RunRecord, 'config'>[]): { differing: string[]; same: string[] } {
  const flats = runs.map((r) => configValues(r.config));
  const keys = new Set<string>();
  for (const f of flats) for (const k of Object.keys(f)) keys.add(k);
  const differing: string[] = [];
  const same: string[] = [];
  for (const k of [...keys].sort()) {
    const vals = new Set(flats.map((f) => (Object.hasOwn(f, k) ? JSON.stringify(f[k]) : '∅')));
    (vals.size > 1 ? differing : same).push(k);
  }
  const bySeedLast = (a: string, b: string) => Number(/(^|\.)seed$/.test(a)) - Number(/(^|\.)seed$/.test(b));
  return { differing: differing.sort(bySeedLast), same };
}

/**
 * Keys that set how the policy learns (verl's and the lab's names): learning rates, the estimator and loss, KL,
 * clipping, entropy, sampling temperature, group size, batch sizes, response length.
 */
const LEARNING =
  /(^|[._])(lr|learning_rate|adv_estimator|estimator|loss|loss_agg_mode|loss_type|mode|kl\w*|clip\w*|entropy\w*|temperature|gamma|lam|n|rollout_n|group_?size|train_batch_size|ppo_mini_batch_size|mini_?batch\w*|response_length|max_response_length|epochs?|ppo_epochs)$/i;
/** Keys that say where a run ran or what it is called, not how it learned: left off the first axes. */
const LABEL = /(^|[._])(path|paths|files?|dirs?|\w*_dir|\w*_path|\w*_name|name|project\w*|experiment\w*|tokenizer\w*|input_tokenizer)$/i;
/** Keys of the hardware set-up (memory, sharding, offload, micro-batches, logging cadence). */
const INFRA = /(offload|micro_batch|per_gpu|parallel|gpu|memory|dtype|freq|save|log_prob_max|max_token_len|nnodes|device|workers?)/i;

/** 0: a learning setting, 1: anything else, 2: hardware or cadence, 3: the seed, 4: a name or path. */
function axisRank(key: string, values: readonly (ConfigValue | undefined)[]): number {
  if (LABEL.test(key) || values.some((v) => typeof v === 'string' && v.includes('/'))) return 4;
  if (/(^|\.)seed$/.test(key)) return 3;
  const last = key.slice(key.lastIndexOf('.') + 1);
  if (INFRA.test(last)) return 2;
  return LEARNING.test(key) ? 0 : 1;
}

/**
 * The axes a panel opens with, at most DEFAULT_PARALLEL_AXES of the keys that differ: the learning settings and
 * other plain settings, then the seed; hardware and cadence keys only when nothing else differs, names and paths
 * only when nothing but they do (two verl runs differ in dozens of keys, mostly their experiment name, model
 * path and offload flags; the menu still offers every one). A key holding the very values of an earlier one
 * (verl's `data.max_response_length` and `actor_rollout_ref.rollout.response_length`) is left off.
 */
export function defaultParallelKeys(runs: readonly Pick<RunRecord, 'config'>[]): string[] {
  const flats = runs.map((r) => configValues(r.config));
  const ranked = parallelKeys(runs)
    .differing.map((key) => {
      const values = flats.map((f) => (Object.hasOwn(f, key) ? f[key] : undefined));
      return { key, values: JSON.stringify(values), rank: axisRank(key, values) };
    })
    .sort((a, b) => a.rank - b.rank || a.key.localeCompare(b.key));
  const out: string[] = [];
  const seen = new Set<string>();
  const take = (ranks: readonly number[]): void => {
    for (const { key, values, rank } of ranked) {
      if (out.length >= DEFAULT_PARALLEL_AXES) return;
      if (!ranks.includes(rank) || seen.has(values)) continue;
      seen.add(values);
      out.push(key);
    }
  };
  take([0, 1]);
  take([3]);
  if (out.length === 0) take([2]);
  if (out.length === 0) take([4]);
  return out;
}

/**
 * The headline number a panel opens against: the validation number the runs table shows (its last value:
 * `val/success_rate`, else `val/score_mean`), else its best, else the first key offered.
 */
export function defaultParallelMetric(keys: readonly string[]): string {
  for (const k of [...VALIDATION_KEYS, ...VALIDATION_KEYS.map((v) => `best/${v}`)]) if (keys.includes(k)) return k;
  return keys[0] ?? '';
}

function categoryOf(v: ConfigValue | undefined): string {
  return v === undefined ? '—' : v === null ? 'null' : String(v);
}

export function parallelModel(
  runs: readonly Run[],
  colors: ReadonlyMap<string, string>,
  keys: readonly string[],
  metric: string,
): ParallelModel {
  const missing: string[] = [];
  const kept: { run: Run; flat: Record<string, ConfigValue>; y: number }[] = [];
  for (const run of runs) {
    const y = run.summary[metric];
    if (typeof y !== 'number' || !Number.isFinite(y)) {
      missing.push(run.name);
      continue;
    }
    kept.push({ run, flat: configValues(run.config), y });
  }
  const axes: ParallelAxis[] = keys.map((key) => {
    const vals = kept.map((k) => k.flat[key]);
    const numeric = vals.length > 0 && vals.every((v) => typeof v === 'number' && Number.isFinite(v));
    if (numeric) return { key, kind: 'value', categories: [] };
    const cats = [...new Set(vals.map(categoryOf))];
    const nums = cats.filter((c) => c !== '' && Number.isFinite(Number(c))).sort((a, b) => Number(a) - Number(b));
    const words = cats.filter((c) => !nums.includes(c)).sort();
    return { key, kind: 'category', categories: [...nums, ...words] };
  });
  axes.push({ key: metric, kind: 'value', categories: [] });
  const lines: ParallelLine[] = kept.map(({ run, flat, y }) => ({
    runId: run.id,
    name: run.name,
    color: colors.get(run.id) ?? '#888888',
    values: [...keys.map((key, i) => (axes[i].kind === 'value' ? (flat[key] as number) : categoryOf(flat[key]))), y],
  }));
  return { axes, lines, missing };
}

/** The last part of a dotted path, for an axis name (`optim.lr` → `lr`); the whole key shows in the tooltip. */
export function axisName(key: string): string {
  const i = key.lastIndexOf('.');
  return i >= 0 && !key.includes('/') ? key.slice(i + 1) : key;
}

/** The ECharts option of a model (plain data: no functions, so it could be posted to a worker too). */
export function parallelOption(m: ParallelModel, dark: boolean): Record<string, unknown> {
  const fg = dark ? '#d6d6d6' : '#333333';
  const grid = dark ? '#3a3a3a' : '#d0d0d0';
  const last = m.axes.length - 1;
  return {
    backgroundColor: 'transparent',
    animation: false,
    textStyle: { color: fg },
    tooltip: {
      trigger: 'item',
      confine: true,
      backgroundColor: dark ? '#22272e' : '#ffffff',
      borderColor: grid,
      textStyle: { color: fg, fontSize: 12 },
    },
    parallel: {
      left: 48,
      right: 96,
      top: 48,
      bottom: 28,
      parallelAxisDefault: {
        nameLocation: 'end',
        nameGap: 14,
        nameTextStyle: { color: fg, fontSize: 11 },
        axisLine: { lineStyle: { color: fg } },
        axisTick: { lineStyle: { color: fg } },
        axisLabel: { color: fg, fontSize: 10 },
        splitLine: { show: false },
      },
    },
    parallelAxis: m.axes.map((a, i) => ({
      dim: i,
      name: i === last ? a.key : axisName(a.key),
      type: a.kind,
      ...(a.kind === 'category' ? { data: [...a.categories] } : { scale: true }),
      ...(i === last ? { nameTextStyle: { color: fg, fontSize: 11, fontWeight: 'bold' } } : {}),
    })),
    series: [
      {
        type: 'parallel',
        smooth: false,
        lineStyle: { width: 2, opacity: 0.85 },
        emphasis: { lineStyle: { width: 3, opacity: 1 } },
        data: m.lines.map((l) => ({ name: l.name, value: [...l.values], lineStyle: { color: l.color } })),
      },
    ],
  };
}

/** One line per run for a screen reader or a copy: "name: key = value, …, metric = value". */
export function parallelSummary(m: ParallelModel): string[] {
  return m.lines.map((l) => `${l.name}: ${m.axes.map((a, i) => `${a.key} = ${formatValue(l.values[i])}`).join(', ')}`);
}
