import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../shared/api';
import { estimateBasis, estimateRunTime, sampleOf, targetOf, type StepTimeSample } from './runEstimate';

const S = (o: Partial<StepTimeSample>): StepTimeSample => ({
  runId: 'r',
  preset: 'grpo',
  env: 'sokoban',
  modelSize: 'nano',
  rolloutsPerStep: 32,
  backend: 'wasm',
  steps: 10,
  wallSeconds: 50,
  updatedAt: '2026-12-01T10:00:00Z',
  ...o,
});
const target = { preset: 'grpo', env: 'sokoban', modelSize: 'nano', rolloutsPerStep: 32, steps: 40 };

describe('estimateRunTime', () => {
  it("median seconds per step of matching runs times the new run's steps", () => {
    const e = estimateRunTime([S({ wallSeconds: 40 }), S({ wallSeconds: 60, steps: 20 }), S({ wallSeconds: 100 })], target, 'wasm');
    // per step: 4, 3, 10 → median 4 → 160 s for 40 steps
    expect(e).toEqual({ seconds: 160, secondsPerStep: 4, runs: 3, samePreset: true, backend: 'wasm' });
  });

  it('prefers runs of the same preset and falls back to other presets of the same env, model and batch', () => {
    const pool = [S({ preset: 'gigpo', wallSeconds: 200 }), S({ preset: 'grpo', wallSeconds: 30 })];
    expect(estimateRunTime(pool, target, 'wasm')?.secondsPerStep).toBe(3);
    const other = estimateRunTime([S({ preset: 'gigpo', wallSeconds: 200 })], target, 'wasm');
    expect(other).toMatchObject({ secondsPerStep: 20, samePreset: false, runs: 1 });
  });

  it('does not count runs of another env, model size, batch or backend', () => {
    const pool = [S({ env: 'shop' }), S({ modelSize: 'small' }), S({ rolloutsPerStep: 64 }), S({ backend: 'cpu' })];
    expect(estimateRunTime(pool, target, 'wasm')).toBeNull();
    expect(estimateRunTime([], target, 'wasm')).toBeNull();
  });

  it('uses only the most recent maxRuns runs', () => {
    const pool = [
      S({ updatedAt: '2026-12-01T01:00:00Z', wallSeconds: 1000 }),
      S({ updatedAt: '2026-12-01T03:00:00Z', wallSeconds: 20 }),
      S({ updatedAt: '2026-12-01T02:00:00Z', wallSeconds: 20 }),
    ];
    expect(estimateRunTime(pool, target, 'wasm', 2)).toMatchObject({ secondsPerStep: 2, runs: 2 });
  });
});

describe('samples and targets from records and configs', () => {
  const config = { model: { size: 'nano' }, rollout: { tasksPerStep: 8, groupSize: 4 }, training: { steps: 40 } };
  const rec = (o: Partial<RunRecord>): RunRecord =>
    ({
      id: 'abc',
      kind: 'lab',
      name: 'n',
      tags: [],
      env: 'sokoban',
      preset: 'grpo',
      seed: 1,
      status: 'completed',
      step: 12,
      totalSteps: 12,
      createdAt: '',
      updatedAt: '2026-12-01T00:00:00Z',
      summary: {},
      alertCount: 0,
      worstSeverity: null,
      config,
      appVersion: '',
      appCommit: '',
      backend: { training: 'wasm', rollout: 'onnxruntime-cpu', detail: '', available: [] },
      startedAt: null,
      finishedAt: null,
      error: null,
      alerts: [],
      wallSeconds: 36,
      etaSeconds: null,
      ...o,
    }) as RunRecord;

  it("reads a lab run's pace and batch", () => {
    expect(sampleOf(rec({}))).toMatchObject({
      runId: 'abc',
      modelSize: 'nano',
      rolloutsPerStep: 32,
      backend: 'wasm',
      steps: 12,
      wallSeconds: 36,
    });
  });

  it('leaves out imports, bundle copies, synthetic runs, unstarted runs and configs without a model', () => {
    expect(sampleOf(rec({ kind: 'imported' }))).toBeNull();
    expect(sampleOf(rec({ importedBundle: { sha256: 'a'.repeat(64), originalId: 'x' } }))).toBeNull();
    expect(sampleOf(rec({ tags: ['synthetic'] }))).toBeNull();
    expect(sampleOf(rec({ step: 0 }))).toBeNull();
    expect(sampleOf(rec({ wallSeconds: 0 }))).toBeNull();
    expect(sampleOf(rec({ config: { synthetic: { steps: 300 } } }))).toBeNull();
  });

  it('targets read the resolved config, with the steps the user typed taking precedence', () => {
    expect(targetOf('grpo', 'sokoban', config)).toEqual({
      preset: 'grpo',
      env: 'sokoban',
      modelSize: 'nano',
      rolloutsPerStep: 32,
      steps: 40,
    });
    expect(targetOf('grpo', 'sokoban', config, 5)?.steps).toBe(5);
    expect(targetOf('grpo', 'sokoban', { model: {} })).toBeNull();
  });
});

describe('estimateBasis', () => {
  const fmt = (s: number) => `${s.toFixed(1)} s`;
  it('names the runs, the preset match and what was matched on', () => {
    expect(estimateBasis({ seconds: 160, secondsPerStep: 4, runs: 3, samePreset: true, backend: 'wasm' }, target, 'wasm', fmt)).toBe(
      'Median 4.0 s/step over the latest 3 grpo runs of sokoban · nano model · 32 rollouts/step · wasm trained here (validation included).',
    );
    expect(estimateBasis({ seconds: 40, secondsPerStep: 1, runs: 1, samePreset: false, backend: 'wasm' }, target, 'wasm', fmt)).toContain(
      '1 run of other presets',
    );
  });
  it('says why there is no estimate', () => {
    expect(estimateBasis(null, target, 'cpu', fmt)).toBe(
      "No estimate yet: no run of sokoban · nano model · 32 rollouts/step · cpu has trained on this machine. The first one's step times will give one.",
    );
  });
});
