import { afterEach, describe, expect, it, vi } from 'vitest';
import { coalesce, createEventBus } from './events';

const status = (runId: string, step: number) => ({
  runId,
  status: 'running' as const,
  step,
  totalSteps: 10,
  etaSeconds: null,
  elapsedSeconds: 0,
  error: null,
  phase: null,
  detail: null,
});

afterEach(() => {
  vi.useRealTimers();
});

describe('event bus', () => {
  it('delivers to subscribers of that event only, and stops after unsubscribe', () => {
    const bus = createEventBus();
    const a: unknown[] = [];
    const b: unknown[] = [];
    const off = bus.subscribe('session.status', (p) => a.push(p));
    bus.subscribe('runs.changed', (p) => b.push(p));
    bus.emit('session.status', status('r1', 1));
    off();
    bus.emit('session.status', status('r1', 2));
    expect(a).toEqual([status('r1', 1)]);
    expect(b).toEqual([]);
    expect(bus.listenerCount('session.status')).toBe(0);
  });

  it('a throwing listener does not affect the emitter or other listeners', () => {
    const log = vi.fn();
    const bus = createEventBus({ log });
    const got: unknown[] = [];
    bus.subscribe('runs.changed', () => {
      throw new Error('listener bug');
    });
    bus.subscribe('runs.changed', (p) => got.push(p));
    expect(() => bus.emit('runs.changed', { runId: 'x' })).not.toThrow();
    expect(got).toEqual([{ runId: 'x' }]);
    expect(log).toHaveBeenCalledOnce();
  });

  it('drops payloads that break the contract (validation on)', () => {
    const log = vi.fn();
    const bus = createEventBus({ validate: true, log });
    const got: unknown[] = [];
    bus.subscribe('runs.changed', (p) => got.push(p));
    bus.emit('runs.changed', { runId: 5 } as never);
    expect(got).toEqual([]);
    expect(log.mock.calls[0][0]).toContain('runs.changed');
  });

  it('throttled subscribers get the first event at once, then coalesced batches', () => {
    vi.useFakeTimers();
    const bus = createEventBus();
    const got: { runId: string; step: number }[] = [];
    bus.subscribe('session.status', (p) => got.push({ runId: p.runId, step: p.step }), { throttleMs: 100 });
    bus.emit('session.status', status('r1', 1));
    expect(got).toEqual([{ runId: 'r1', step: 1 }]);
    bus.emit('session.status', status('r1', 2));
    bus.emit('session.status', status('r2', 1));
    bus.emit('session.status', status('r1', 3));
    expect(got).toHaveLength(1);
    vi.advanceTimersByTime(100);
    expect(got).toEqual([
      { runId: 'r1', step: 1 },
      { runId: 'r1', step: 3 },
      { runId: 'r2', step: 1 },
    ]);
  });

  it('unsubscribing cancels a pending throttled delivery', () => {
    vi.useFakeTimers();
    const bus = createEventBus();
    const got: unknown[] = [];
    const off = bus.subscribe('runs.changed', (p) => got.push(p), { throttleMs: 50 });
    bus.emit('runs.changed', { runId: 'a' });
    bus.emit('runs.changed', { runId: 'b' });
    off();
    vi.advanceTimersByTime(100);
    expect(got).toEqual([{ runId: 'a' }]);
  });
});

describe('coalesce', () => {
  it('concatenates metric records per run, in order', () => {
    const out = coalesce('run.metrics', [
      { runId: 'a', records: [{ step: 1, values: { x: 1 } }] },
      { runId: 'b', records: [{ step: 1, values: { x: 5 } }] },
      { runId: 'a', records: [{ step: 2, values: { x: null } }] },
    ]);
    expect(out).toEqual([
      {
        runId: 'a',
        records: [
          { step: 1, values: { x: 1 } },
          { step: 2, values: { x: null } },
        ],
      },
      { runId: 'b', records: [{ step: 1, values: { x: 5 } }] },
    ]);
  });

  it('keeps every trajectory notice', () => {
    const items = [
      { runId: 'a', step: 1, trajUid: 't1' },
      { runId: 'a', step: 1, trajUid: 't2' },
    ];
    expect(coalesce('run.trajectory', items)).toEqual(items);
  });
});
