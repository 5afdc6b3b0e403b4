/** reproduce reruns a native-TensorFlow run with the thread pools it recorded when its config said 0 (one per core). */
import { describe, expect, it } from 'vitest';
import { withRecordedThreads } from './reproduce';

const tensorflow = {
  version: '2.21.0',
  package: '@tensorflow/tfjs-node',
  intraOpThreads: 2,
  interOpThreads: 2,
  deterministicOps: true,
  gpu: null,
};

describe('withRecordedThreads', () => {
  it('replaces 0 or an absent field by the recorded counts and leaves the rest', () => {
    const config = { seed: 3, compute: { backend: 'auto', intraOpThreads: 0 } };
    expect(withRecordedThreads(config, tensorflow)).toEqual({
      seed: 3,
      compute: { backend: 'auto', intraOpThreads: 2, interOpThreads: 2 },
    });
    expect(config.compute.intraOpThreads).toBe(0);
  });
  it('keeps explicit counts, and the config of a run that did not train on native TensorFlow', () => {
    expect(withRecordedThreads({ compute: { intraOpThreads: 1, interOpThreads: 1 } }, tensorflow)).toEqual({
      compute: { intraOpThreads: 1, interOpThreads: 1 },
    });
    const wasm = { compute: { backend: 'wasm' } };
    expect(withRecordedThreads(wasm, undefined)).toBe(wasm);
  });
});
