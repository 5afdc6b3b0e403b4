/**
 * What a run on Ray is recorded with at submission (rayTarget.submittedBackend): the backend and K resolved as the
 * job is submitted with them, and the rollout engine under the name the trainer itself reports (compute/index.ts:
 * `onnxruntime-cpu[-precision]`, `tfjs-<tfjs backend>`), so the record reads the same before and after the node's
 * own report replaces it. The real head's side is rayComputeRecord.integration.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { RunConfig } from '../../core/config/types';
import { submittedBackend } from './rayTarget';

const compute = (c: Partial<RunConfig['compute']>) =>
  ({ backend: 'auto', workers: 0, rolloutEngine: 'onnxruntime', rolloutPrecision: 'fp32', ...c }) as RunConfig['compute'];

describe('submittedBackend', () => {
  it('names the backend, rollout engine and K the job is submitted with', () => {
    expect(submittedBackend(compute({ workers: 2 }), 'http://head:8265')).toEqual({
      training: 'wasm',
      rollout: 'onnxruntime-cpu',
      workers: 2,
      detail:
        'submitted to Ray (http://head:8265) with training on wasm, rollouts on onnxruntime-cpu, K = 2; the node reports its own when the job ends',
    });
  });

  it('uses the trainer’s names for reduced-precision and tfjs rollouts', () => {
    expect(submittedBackend(compute({ workers: 1, rolloutPrecision: 'int8' }), 'u').rollout).toBe('onnxruntime-cpu-int8');
    expect(submittedBackend(compute({ workers: 1, rolloutEngine: 'tfjs' }), 'u').rollout).toBe('tfjs-wasm');
    expect(submittedBackend(compute({ backend: 'tensorflow-gpu', rolloutEngine: 'tfjs' }), 'u')).toMatchObject({
      training: 'tensorflow-gpu',
      rollout: 'tfjs-tensorflow',
      // Native TensorFlow's kernels use every core: K = 1 when the config leaves it to the machine.
      workers: 1,
    });
  });

  it('resolves K = 0 to a positive K, as the job reserves CPUs for it', () => {
    const k = submittedBackend(compute({ workers: 0 }), 'u').workers;
    expect(Number.isInteger(k) && k! >= 1).toBe(true);
  });
});
