import { describe, expect, it } from 'vitest';
import { appendRecords, fromStored } from './liveSeries';

describe('live series', () => {
  const stored = fromStored([{ key: 'a', steps: [0, 1], y: [1, null], nonFinite: [{ step: 1, value: 'NaN' }] }]);
  it('appends only new steps, in order, and marks non-finite values with their kind', () => {
    const next = appendRecords(
      stored,
      ['a', 'b'],
      [
        { step: 3, values: { a: 5, b: 1 } },
        { step: 1, values: { a: 99 } },
        { step: 2, values: { a: null }, nonFinite: { a: 'Infinity' } },
        { step: 4, values: { a: null } },
      ],
    );
    expect(next.get('a')).toEqual({
      steps: [0, 1, 2, 3, 4],
      y: [1, null, null, 5, null],
      nonFinite: [
        { step: 1, value: 'NaN' },
        { step: 2, value: 'Infinity' },
        { step: 4, value: 'NaN' },
      ],
    });
    expect(next.get('b')?.steps).toEqual([3]);
  });
  it('adds no point and no NaN marker for "not applicable" NaNs: the step-0 validation, validation keys between validations', () => {
    // Once, after the step-0 validation every training chart kept a red NaN marker at step 0 until a reload.
    const keys = ['episode/success_rate', 'val/success_rate'];
    const step0 = {
      step: 0,
      values: { 'episode/success_rate': null, 'val/success_rate': 0.25 },
      nonFinite: { 'episode/success_rate': 'NaN' },
    };
    const step1 = { step: 1, values: { 'episode/success_rate': 0.5, 'val/success_rate': null }, nonFinite: { 'val/success_rate': 'NaN' } };
    const next = appendRecords(fromStored([]), keys, [step0, step1]);
    expect(next.get('episode/success_rate')).toEqual({ steps: [1], y: [0.5], nonFinite: [] });
    expect(next.get('val/success_rate')).toEqual({ steps: [0], y: [0.25], nonFinite: [] });
    // Only the step-0 record so far: the training chart has no point yet (not one NaN point).
    expect(appendRecords(fromStored([]), keys, [step0]).has('episode/success_rate')).toBe(false);
    // ±Infinity is an event even before the first finite value.
    expect(
      appendRecords(
        fromStored([]),
        ['actor/grad_norm'],
        [{ step: 1, values: { 'actor/grad_norm': null }, nonFinite: { 'actor/grad_norm': 'Infinity' } }],
      ).get('actor/grad_norm')?.nonFinite,
    ).toEqual([{ step: 1, value: 'Infinity' }]);
  });
  it('leaves the previous map and arrays untouched', () => {
    appendRecords(stored, ['a'], [{ step: 5, values: { a: 1 } }]);
    expect(stored.get('a')?.steps).toEqual([0, 1]);
  });
});
