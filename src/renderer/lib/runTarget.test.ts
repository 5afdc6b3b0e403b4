import { describe, expect, it } from 'vitest';
import { plainTags, runTarget } from './runTarget';

describe('runTarget', () => {
  it('names a run on a stored remote by its name, with the address kept', () => {
    const tags = ['sweep', 'on:ray', 'ray:gpu', 'ray-url:http://head:8265'];
    expect(runTarget(tags)).toEqual({ name: 'gpu', url: 'http://head:8265', label: 'ray:gpu' });
    expect(plainTags(tags)).toEqual(['sweep']);
  });
  it('a run sent to a bare URL is labelled by the URL; a local run has no target', () => {
    expect(runTarget(['on:ray', 'ray-url:http://10.0.0.5:8265'])).toEqual({
      name: null,
      url: 'http://10.0.0.5:8265',
      label: 'ray:http://10.0.0.5:8265',
    });
    expect(runTarget(['rayon', 'x'])).toBeNull();
    expect(plainTags(['rayon', 'x'])).toEqual(['rayon', 'x']);
  });
});
