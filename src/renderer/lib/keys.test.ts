import { describe, expect, it } from 'vitest';
import { KeySequence, isTypingTarget } from './keys';

describe('KeySequence', () => {
  const ks = () => new KeySequence({ 'g r': 'runs', 'g n': 'new', '?': 'help' }, 1000);
  it('completes a two-key sequence within the timeout', () => {
    const k = ks();
    expect(k.feed('g', 0)).toBeNull();
    expect(k.feed('r', 500)).toBe('runs');
  });
  it('drops a sequence after the timeout', () => {
    const k = ks();
    k.feed('g', 0);
    expect(k.feed('r', 1500)).toBeNull();
  });
  it('handles single keys and restarts on a new prefix', () => {
    const k = ks();
    expect(k.feed('?', 0)).toBe('help');
    k.feed('g', 10);
    expect(k.feed('x', 20)).toBeNull();
    k.feed('g', 30);
    expect(k.feed('n', 40)).toBe('new');
  });
  it('recognises typing targets', () => {
    expect(isTypingTarget({ tagName: 'INPUT' } as unknown as EventTarget)).toBe(true);
    expect(isTypingTarget({ tagName: 'DIV', isContentEditable: false } as unknown as EventTarget)).toBe(false);
    expect(isTypingTarget(null)).toBe(false);
  });
});
