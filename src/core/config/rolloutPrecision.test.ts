/**
 * compute.rolloutPrecision: its default, what its absence means (configs stored before it keep float32 rollouts)
 * and the combinations that make no sense, each refused with the fix.
 */
import { describe, expect, it } from 'vitest';
import { resolveConfig, validateConfig } from './index';

const issues = (o: Record<string, string>) =>
  resolveConfig('grpo', 'sokoban', o)
    .issues.map((i) => `${i.field}: ${i.message}`)
    .join('\n');

describe('compute.rolloutPrecision', () => {
  it('defaults to fp32, takes fp16 and int8, refuses anything else with the known names', () => {
    expect(resolveConfig('grpo', 'sokoban', {}).config!.compute.rolloutPrecision).toBe('fp32');
    for (const p of ['fp16', 'int8'])
      expect(resolveConfig('sampo', 'sokoban', { 'compute.rolloutPrecision': p }).config!.compute.rolloutPrecision).toBe(p);
    expect(issues({ 'compute.rolloutPrecision': 'bf16' })).toMatch(/compute.rolloutPrecision.*fp32, fp16, int8/);
  });

  it('a config stored before the field is still valid (it means fp32)', () => {
    const c = JSON.parse(JSON.stringify(resolveConfig('grpo', 'sokoban', {}).config!));
    delete c.compute.rolloutPrecision;
    expect(validateConfig(c)).toEqual([]);
  });

  it('int8 / fp16 with tfjs rollouts or with π_old from the engine are refused with the fix', () => {
    expect(issues({ 'compute.rolloutPrecision': 'int8', 'compute.rolloutEngine': 'tfjs' })).toMatch(
      /compute.rolloutPrecision: .*set compute.rolloutEngine=onnxruntime or compute.rolloutPrecision=fp32/,
    );
    expect(issues({ 'compute.rolloutPrecision': 'fp16', 'compute.logProbEngine': 'onnxruntime' })).toMatch(
      /compute.rolloutPrecision: .*set compute.logProbEngine=trainer or compute.rolloutPrecision=fp32/,
    );
    expect(issues({ 'compute.rolloutPrecision': 'fp32', 'compute.rolloutEngine': 'tfjs' })).toBe('');
    expect(issues({ 'compute.rolloutPrecision': 'int8', 'algorithm.rolloutCorrection.is': 'token' })).toBe('');
  });
});
