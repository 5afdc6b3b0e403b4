import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PRESSURE_LEVELS, resolveConfig } from '../../../core/config/index';
import { armSpec, armSpecsOfFile, parseArms } from './arms';

describe('arms: NAME=PRESET[;KEY=VALUE…][ vs BASELINE]', () => {
  it('parses overrides typed like --set; without "vs" an arm is compared with the first arm of its preset', () => {
    const arms = parseArms([
      'sampo-fp32=sampo',
      'sampo-int8=sampo;compute.rolloutPrecision=int8',
      'sampo-int8-tis=sampo;compute.rolloutPrecision=int8;algorithm.rolloutCorrection.is=token;algorithm.rolloutCorrection.isThreshold=2 vs sampo-int8',
      'grpo-fp32=grpo',
      ' grpo-int8 = grpo ; compute.rolloutPrecision=int8 ; ',
    ]);
    expect(arms).toEqual([
      { name: 'sampo-fp32', preset: 'sampo', sets: {}, vs: null },
      { name: 'sampo-int8', preset: 'sampo', sets: { 'compute.rolloutPrecision': 'int8' }, vs: 'sampo-fp32' },
      {
        name: 'sampo-int8-tis',
        preset: 'sampo',
        sets: {
          'compute.rolloutPrecision': 'int8',
          'algorithm.rolloutCorrection.is': 'token',
          'algorithm.rolloutCorrection.isThreshold': 2,
        },
        vs: 'sampo-int8',
      },
      { name: 'grpo-fp32', preset: 'grpo', sets: {}, vs: null },
      { name: 'grpo-int8', preset: 'grpo', sets: { 'compute.rolloutPrecision': 'int8' }, vs: 'grpo-fp32' },
    ]);
    // a spec printed back parses to the same arm
    expect(parseArms(arms.map(armSpec))).toEqual(arms);
  });

  it('an explicit "vs" may name an arm listed later, or of another preset', () => {
    const arms = parseArms(['b=grpo;optim.lr=0.001 vs a', 'a=sampo']);
    expect(arms.map((a) => [a.name, a.vs])).toEqual([
      ['b', 'a'],
      ['a', null],
    ]);
  });

  const bad: Array<[string[], RegExp]> = [
    [[], /no arms/],
    [['sampo'], /arm "sampo": expected NAME=PRESET/],
    [['x=nopreset'], /arm "x=nopreset": unknown preset "nopreset"; valid presets: .*sampo/],
    [['a b=sampo'], /name "a b": use 1–40 letters/],
    [['a=sampo;compute.rolloutPrecision=int9'], /arm "a=sampo;compute.rolloutPrecision=int9": .*compute.rolloutPrecision/],
    [['a=sampo;no.such.key=1'], /arm "a=sampo;no.such.key=1": .*no.such.key/],
    [['a=sampo;seed=3'], /seed is set by the study for every arm/],
    [['a=sampo', 'a=grpo'], /arm "a" is named twice/],
    [['a=sampo vs a'], /compares it with itself/],
    [['a=sampo', 'b=sampo vs c'], /"vs c" names no arm; arms: a, b/],
  ];
  for (const [specs, re] of bad) {
    it(`refuses ${JSON.stringify(specs)}`, () => {
      expect(() => parseArms(specs)).toThrow(re);
    });
  }

  it('an arms file: one spec per line, blank lines and # comments skipped', () => {
    expect(armSpecsOfFile('# int8 against fp32\nfp32=sampo\n\n  int8=sampo;compute.rolloutPrecision=int8  \r\n# end\n')).toEqual([
      'fp32=sampo',
      'int8=sampo;compute.rolloutPrecision=int8',
    ]);
  });

  it('the committed rollout-mismatch arms parse, compare as the study says, and resolve at every pressure level', () => {
    const text = readFileSync(new URL('../../../../resources/studies/rollout-mismatch.arms', import.meta.url), 'utf8');
    const arms = parseArms(armSpecsOfFile(text));
    expect(arms.map((a) => [a.name, a.vs])).toEqual([
      ['grpo-fp32', null],
      ['grpo-int8', 'grpo-fp32'],
      ['grpo-int8-tis', 'grpo-int8'],
      ['grpo-int8-mis', 'grpo-int8'],
      ['sampo-fp32', null],
      ['sampo-int8', 'sampo-fp32'],
      ['sampo-int8-tis', 'sampo-int8'],
      ['sampo-int8-mis', 'sampo-int8'],
    ]);
    for (const { level } of PRESSURE_LEVELS)
      for (const a of arms) {
        const { config, issues } = resolveConfig(a.preset, 'sokoban', { 'training.pressure': level, ...a.sets });
        expect(issues, `${a.name} at level ${level}`).toEqual([]);
        expect(config!.compute.rolloutPrecision ?? 'fp32').toBe(a.name.includes('int8') ? 'int8' : 'fp32');
      }
  });
});
