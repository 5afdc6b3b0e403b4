import { describe, expect, it } from 'vitest';
import { SVGRenderer } from 'echarts/renderers';
import { echarts } from '../src/components/echartsSetup';
import type { RunRecord } from '../../shared/api';
import { defaultParallelKeys, defaultParallelMetric, parallelKeys, parallelModel, parallelOption, parallelSummary } from './parallelPanel';

// No DOM here: ECharts' server-side SVG rendering runs the same parallel series and axes as the page's canvas.
echarts.use([SVGRenderer]);

const cfg = (lr: number, loss: string, seed: number) => ({
  preset: 'sampo',
  seed,
  algorithm: { loss, clip: { low: 0.2 } },
  optim: { lr },
});
const runs: Pick<RunRecord, 'id' | 'name' | 'config' | 'summary'>[] = [
  { id: 'a', name: 'sapo lr 1e-3', config: cfg(1e-3, 'sapo', 1), summary: { 'val/success_rate': 0.55 } },
  { id: 'b', name: 'vanilla lr 3e-4', config: cfg(3e-4, 'vanilla', 2), summary: { 'val/success_rate': 0.3 } },
  { id: 'c', name: 'sapo lr 3e-4', config: cfg(3e-4, 'sapo', 3), summary: { 'val/success_rate': 0.7 } },
  { id: 'd', name: 'never validated', config: cfg(1e-4, 'gspo', 4), summary: {} },
];
const colors = new Map([
  ['a', '#1f77b4'],
  ['b', '#ff7f0e'],
  ['c', '#2ca02c'],
]);

describe('parallel-coordinates panel', () => {
  it('offers the config keys that differ first (seed last), then the shared ones; opens on the differing ones', () => {
    expect(parallelKeys(runs)).toEqual({ differing: ['algorithm.loss', 'optim.lr', 'seed'], same: ['algorithm.clip.low', 'preset'] });
    expect(defaultParallelKeys(runs)).toEqual(['algorithm.loss', 'optim.lr', 'seed']);
  });

  it('opens on learning settings, not on names, paths or hardware, and not twice on keys that split the runs alike', () => {
    // Three verl configs as their logs print them (shapes of the shared real 7B / 0.5B logs): dozens of keys differ.
    const verl = (lr: number, est: string, n: number, resp: number, offload: boolean, name: string) => ({
      config: {
        actor_rollout_ref: {
          actor: {
            optim: { lr },
            ppo_mini_batch_size: 256,
            ppo_micro_batch_size_per_gpu: offload ? 4 : 8,
            fsdp_config: { param_offload: offload },
          },
          model: { path: `/models/${name}`, dtype: offload ? 'bfloat16' : 'float32' },
          rollout: { n, response_length: resp, gpu_memory_utilization: offload ? 0.4 : 0.6 },
        },
        algorithm: { adv_estimator: est },
        data: { max_response_length: resp, train_files: `/data/${name}/train.parquet` },
        trainer: { experiment_name: name, project_name: `p-${name}`, default_local_dir: `/ckpt/${name}`, test_freq: offload ? 5 : 10 },
      },
    });
    const three = [
      verl(1e-6, 'gae', 1, 512, true, 'qwen2-7b-min'),
      verl(1e-6, 'grpo', 5, 1024, false, 'qwen2-7b-rec'),
      verl(3e-6, 'grpo', 5, 1024, true, 'qwen2.5-3b'),
    ];
    expect(parallelKeys(three).differing).toHaveLength(15);
    // data.max_response_length holds rollout.response_length's values: one axis for both.
    expect(defaultParallelKeys(three)).toEqual([
      'actor_rollout_ref.actor.optim.lr',
      'actor_rollout_ref.rollout.n',
      'actor_rollout_ref.rollout.response_length',
      'algorithm.adv_estimator',
    ]);
    // Runs that differ only in hardware, or only in their names, still open on what differs.
    const offload = [verl(1e-6, 'grpo', 5, 512, true, 'a'), verl(1e-6, 'grpo', 5, 512, false, 'a')];
    expect(defaultParallelKeys(offload)).toEqual([
      'actor_rollout_ref.actor.fsdp_config.param_offload',
      'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu',
      'actor_rollout_ref.model.dtype',
      'actor_rollout_ref.rollout.gpu_memory_utilization',
      'trainer.test_freq',
    ]);
    const renamed = [verl(1e-6, 'grpo', 5, 512, true, 'a'), verl(1e-6, 'grpo', 5, 512, true, 'b')];
    expect(defaultParallelKeys(renamed)).toHaveLength(5);
    expect(defaultParallelKeys(renamed)[0]).toBe('actor_rollout_ref.model.path');
  });

  it('opens against the validation number the runs table shows, its last value before its best', () => {
    expect(defaultParallelMetric(['best/val/score_mean', 'val/score_mean', 'actor/entropy'])).toBe('val/score_mean');
    expect(defaultParallelMetric(['best/val/score_mean', 'val/score_mean', 'val/success_rate'])).toBe('val/success_rate');
    expect(defaultParallelMetric(['best/val/success_rate', 'actor/entropy'])).toBe('best/val/success_rate');
    expect(defaultParallelMetric(['actor/entropy'])).toBe('actor/entropy');
    expect(defaultParallelMetric([])).toBe('');
  });

  it('one line per run through its config values to the metric: numbers on value axes, text on a category axis', () => {
    const m = parallelModel(runs, colors, ['algorithm.loss', 'optim.lr'], 'val/success_rate');
    expect(m.axes).toEqual([
      { key: 'algorithm.loss', kind: 'category', categories: ['sapo', 'vanilla'] },
      { key: 'optim.lr', kind: 'value', categories: [] },
      { key: 'val/success_rate', kind: 'value', categories: [] },
    ]);
    expect(m.lines.map((l) => [l.name, l.color, ...l.values])).toEqual([
      ['sapo lr 1e-3', '#1f77b4', 'sapo', 1e-3, 0.55],
      ['vanilla lr 3e-4', '#ff7f0e', 'vanilla', 3e-4, 0.3],
      ['sapo lr 3e-4', '#2ca02c', 'sapo', 3e-4, 0.7],
    ]);
    expect(m.missing).toEqual(['never validated']);
    expect(parallelSummary(m)[1]).toBe('vanilla lr 3e-4: algorithm.loss = vanilla, optim.lr = 0.0003, val/success_rate = 0.3');
  });

  it('ECharts draws it: an axis per key named after it, the metric last, a line per run in its colour', () => {
    const m = parallelModel(runs, colors, ['algorithm.loss', 'optim.lr'], 'val/success_rate');
    for (const dark of [false, true]) {
      const chart = echarts.init(null as unknown as HTMLElement, undefined, { renderer: 'svg', ssr: true, width: 720, height: 300 });
      chart.setOption(parallelOption(m, dark));
      const svg = chart.renderToSVGString();
      chart.dispose();
      for (const name of ['loss', 'lr', 'val/success_rate', 'vanilla', 'sapo']) expect(svg).toContain(name);
      for (const c of ['#1f77b4', '#ff7f0e', '#2ca02c']) expect(svg.toLowerCase()).toContain(c);
      // Three runs: three polylines of the series, one per colour (the axes are paths in the text colour).
      const lines = [...svg.matchAll(/<polyline points="([^"]*)"[^>]*stroke="(#[0-9a-f]{6})"/gi)].map((x) => [x[2].toLowerCase(), x[1]]);
      expect(lines.map(([c]) => c).sort()).toEqual(['#1f77b4', '#2ca02c', '#ff7f0e']);
      // Each goes through one point per axis; the best run (0.7) ends highest (smallest y), the worst (0.3) lowest.
      const endY = new Map(lines.map(([c, pts]) => [c, Number(pts.trim().split(/\s+/).at(-1))]));
      expect(lines.every(([, pts]) => pts.trim().split(/\s+/).length === 6)).toBe(true);
      expect(endY.get('#2ca02c')!).toBeLessThan(endY.get('#1f77b4')!);
      expect(endY.get('#1f77b4')!).toBeLessThan(endY.get('#ff7f0e')!);
      expect(svg).toContain(dark ? '#d6d6d6' : '#333');
    }
  });
});
