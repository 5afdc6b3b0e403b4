/**
 * The x-axis keys Compare offers: progress counters that never decrease in any run logging them — verl's
 * training/epoch and global_step, TRL's train/epoch and tokens seen, W&B's _runtime — and not a counter a resumed
 * log restarts, a per-step count named like one, a rising training metric, or the lab's fixed wall/tokens axes.
 */
import { describe, expect, it } from 'vitest';
import type { MetricRecord } from '../../shared/metrics';
import { axisKeys, isCounterName, monotoneCounters } from './axisKeys';

const rows = (n: number, f: (s: number) => Record<string, number>): MetricRecord[] =>
  Array.from({ length: n }, (_, i) => ({ step: i + 1, values: f(i + 1) }));

describe('isCounterName', () => {
  it('takes progress counters by name and leaves per-step quantities and the fixed axes out', () => {
    for (const k of [
      'training/epoch',
      'training/global_step',
      'train/epoch',
      'train/num_input_tokens_seen',
      '_runtime',
      '_timestamp',
      'global_step',
      'time/total_timesteps',
    ])
      expect(isCounterName(k), k).toBe(true);
    for (const k of [
      'perf/total_num_tokens',
      'timing_s/step',
      'perf/throughput',
      'perf/mfu/actor',
      'perf/wall_s',
      'perf/total_tokens',
      'actor/entropy',
      'response_length/mean',
    ])
      expect(isCounterName(k), k).toBe(false);
  });
});

describe('monotoneCounters', () => {
  it('says whether each counter never decreases and grows; NaN and missing steps are skipped', () => {
    const r = rows(10, (s) => ({
      'training/epoch': Math.floor(s / 4),
      'train/num_input_tokens_seen': s % 3 === 0 ? NaN : 100 * s,
      'training/global_step': s === 6 ? 2 : s, // a resumed log that went back
      _runtime: 5, // never moves
      'actor/entropy': 10 - s,
    }));
    expect(Object.fromEntries(monotoneCounters(r))).toEqual({
      'training/epoch': true,
      'train/num_input_tokens_seen': true,
      'training/global_step': false,
      _runtime: false,
    });
    expect(monotoneCounters(rows(1, () => ({ 'training/epoch': 1 }))).get('training/epoch')).toBe(false);
  });
});

describe('axisKeys', () => {
  it('offers a key that counts up in every run logging it, and none that goes back in one of them', () => {
    const a = rows(8, (s) => ({ 'training/epoch': Math.floor(s / 3), 'training/global_step': s, 'critic/vf_explained_var': -5 + 0.2 * s }));
    const b = rows(8, (s) => ({ 'training/epoch': s > 4 ? 0 : 1, 'training/global_step': 100 + s }));
    const c = rows(5, (s) => ({ _timestamp: 1.7e9 + 30 * s }));
    expect(axisKeys([a, b, c])).toEqual(['_timestamp', 'training/global_step']);
    expect(axisKeys([a])).toEqual(['training/epoch', 'training/global_step']);
    expect(axisKeys([])).toEqual([]);
  });
});
