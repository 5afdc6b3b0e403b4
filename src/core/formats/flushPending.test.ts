/** The text parsers' flushPending (live follow on a quiet log): the waiting step leaves now, and only once. */
import { describe, expect, it } from 'vitest';
import { createLineParser } from './index';
import { SKIP_LATE_VALUES } from './steps';
import type { LogFormat, SourceStep } from './types';

function parser(format: LogFormat) {
  const out: SourceStep[] = [];
  const p = createLineParser(format, (s) => out.push(s));
  return { p, out };
}

describe('flushPending on text parsers', () => {
  it('verl console: sends the last step without its next line; later lines for it are counted, the next step is normal', () => {
    const { p, out } = parser('verl-console');
    p.push('step:1 - actor/entropy:0.5 - critic/score/mean:0.1');
    p.push('step:2 - actor/entropy:0.4 - critic/score/mean:0.2');
    expect(out.map((s) => s.step)).toEqual([1]);
    p.flushPending!();
    expect(out.map((s) => s.step)).toEqual([1, 2]);
    p.flushPending!();
    expect(out).toHaveLength(2);
    p.push('step:2 - val-core/openai/gsm8k/reward/mean@1:0.7');
    p.push('step:3 - actor/entropy:0.3 - critic/score/mean:0.3');
    p.push('step:3 - val-core/openai/gsm8k/reward/mean@1:0.8');
    p.end();
    expect(out.map((s) => s.step)).toEqual([1, 2, 3]);
    expect(out[1].values).toEqual({ 'actor/entropy': 0.4, 'critic/score/mean': 0.2 });
    // Step 3 was not flushed early, so its validation line merges as always.
    expect(out[2].values['val-core/openai/gsm8k/reward/mean@1']).toBe(0.8);
    expect(p.skipped).toEqual({ [SKIP_LATE_VALUES]: 1 });
  });

  it('without flushPending the same lines merge (nothing is counted)', () => {
    const { p, out } = parser('verl-console');
    p.push('step:2 - actor/entropy:0.4');
    p.push('step:2 - val-core/openai/gsm8k/reward/mean@1:0.7');
    p.end();
    expect(out).toEqual([{ run: '', step: 2, values: { 'actor/entropy': 0.4, 'val-core/openai/gsm8k/reward/mean@1': 0.7 } }]);
    expect(p.skipped).toEqual({});
  });

  it('flat JSONL and TRL console dicts flush the same way; a TRL eval dict after the flush belongs to the flushed step', () => {
    const j = parser('jsonl');
    j.p.push('{"step": 5, "loss": 1.5}');
    j.p.flushPending!();
    j.p.push('{"step": 5, "val/score": 0.5}');
    j.p.push('{"step": 6, "loss": 1.4}');
    j.p.end();
    expect(j.out.map((s) => [s.step, Object.keys(s.values)])).toEqual([
      [5, ['loss']],
      [6, ['loss']],
    ]);
    expect(j.p.skipped).toEqual({ [SKIP_LATE_VALUES]: 1 });

    const t = parser('trl-console');
    t.p.push("{'loss': 0.5, 'grad_norm': 1.0, 'learning_rate': 1e-06, 'epoch': 0.1}");
    t.p.flushPending!();
    t.p.push("{'eval_loss': 0.4, 'epoch': 0.1}");
    t.p.push("{'loss': 0.45, 'grad_norm': 0.9, 'learning_rate': 1e-06, 'epoch': 0.2}");
    t.p.end();
    expect(t.out.map((s) => s.step)).toEqual([1, 2]);
    expect(t.p.skipped).toEqual({ [SKIP_LATE_VALUES]: 1 });
  });
});
