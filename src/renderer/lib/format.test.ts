import { describe, expect, it } from 'vitest';
import { fmtAgo, fmtBytes, fmtDuration, fmtNum, fmtPct } from './format';

describe('format', () => {
  it('numbers: non-finite spelled out, small/large in exponent form', () => {
    expect(fmtNum(null)).toBe('—');
    expect(fmtNum(Number.NaN)).toBe('NaN');
    expect(fmtNum(-Infinity)).toBe('−∞');
    expect(fmtNum(0.123456)).toBe('0.123');
    expect(fmtNum(1e-5)).toBe('1.00e-5');
    expect(fmtNum(42)).toBe('42');
  });
  it('percent and durations', () => {
    expect(fmtPct(0.9272)).toBe('92.7 %');
    expect(fmtPct(null)).toBe('—');
    expect(fmtDuration(42)).toBe('42 s');
    expect(fmtDuration(192)).toBe('3 min 12 s');
    expect(fmtDuration(3840)).toBe('1 h 04 min');
    expect(fmtDuration(null)).toBe('—');
  });
  it('relative time and bytes', () => {
    const now = Date.parse('2026-01-01T12:00:00Z');
    expect(fmtAgo('2026-01-01T11:59:50Z', now)).toBe('just now');
    expect(fmtAgo('2026-01-01T11:55:00Z', now)).toBe('5 min ago');
    expect(fmtAgo('2026-01-01T09:00:00Z', now)).toBe('3 h ago');
    expect(fmtBytes(2048)).toBe('2.0 KB');
  });
});
