/**
 * the hint of a numerically broken run names the setting that is actually out of the
 * ordinary (compared with the preset's value), not the default learning rate.
 */
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../config/index';
import { hintsFor, recipeOf } from './hints';

function configWith(path: string[], value: number): unknown {
  const c = structuredClone(resolveConfig('grpo', 'sokoban').config) as unknown as Record<string, Record<string, unknown>>;
  c[path[0]][path[1]] = value;
  return c;
}

describe('hints name the unusual setting', () => {
  it('optim.eps = 1e-300: the non-finite and skipped-update hints name optim.eps, not the default lr', () => {
    const h = hintsFor(recipeOf(configWith(['optim', 'eps'], 1e-300)));
    expect(h.nonFinite).toMatch(/optim\.eps = 1e-300.*1e-8/);
    expect(h.skipped).toMatch(/optim\.eps = 1e-300/);
    expect(h.nonFinite).not.toMatch(/optim\.lr/);
  });

  it('a far too large lr is named as such; a run at its preset values keeps the usual advice', () => {
    expect(hintsFor(recipeOf(configWith(['optim', 'lr'], 0.9))).nonFinite).toMatch(/optim\.lr = 0\.9.*0\.0001/);
    const plain = hintsFor(recipeOf(resolveConfig('grpo', 'sokoban').config));
    expect(plain.nonFinite).toMatch(/lower the learning rate/);
    expect(recipeOf(resolveConfig('sampo', 'shop').config)?.unusual ?? []).toEqual([]);
  });
});
