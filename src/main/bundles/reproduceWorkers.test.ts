/** reproduce reruns with the gradient worker count K the run recorded when its config said 0 (one per core). */
import { describe, expect, it } from 'vitest';
import { withRecordedWorkers } from './reproduce';

describe('withRecordedWorkers', () => {
  const config = { seed: 3, compute: { backend: 'wasm', workers: 0 } };
  it('replaces compute.workers = 0 by the recorded K and leaves the rest', () => {
    expect(withRecordedWorkers(config, 2)).toEqual({ seed: 3, compute: { backend: 'wasm', workers: 2 } });
    expect(config.compute.workers).toBe(0);
  });
  it('keeps an explicit K, and a config when no K was recorded (runs made before workers existed)', () => {
    expect(withRecordedWorkers({ compute: { workers: 3 } }, 2)).toEqual({ compute: { workers: 3 } });
    expect(withRecordedWorkers(config, undefined)).toBe(config);
  });
});
