/**
 * A colour code after Ray's worker prefix (`\x1b[36m(TaskRunner pid=1)\x1b[0m \x1b[32mstep:1 - …\x1b[0m`) hid every
 * step line ("no metric step was found"): the line's own text starts after the codes, and a code closing the
 * line does not spoil its last value.
 */
import { describe, expect, it } from 'vitest';
import { createLineParser, detectFormat, type SourceStep } from './index';

const ESC = '\x1b';

describe('verl console behind colour codes after the Ray prefix', () => {
  it('detects and reads the step lines', () => {
    const lines = [1, 2, 3].map(
      (i) => `${ESC}[36m(TaskRunner pid=1)${ESC}[0m ${ESC}[32mstep:${i} - actor/entropy:0.5 - critic/score/mean:0.${i}${ESC}[0m`,
    );
    expect(detectFormat(new TextEncoder().encode(lines.join('\n') + '\n'))?.format).toBe('verl-console');
    const steps: SourceStep[] = [];
    const p = createLineParser('verl-console', (s) => steps.push(s));
    for (const l of lines) p.push(l);
    p.end();
    expect(steps.map((s) => s.step)).toEqual([1, 2, 3]);
    expect(steps[2].values).toEqual({ 'actor/entropy': 0.5, 'critic/score/mean': 0.3 });
  });
});
