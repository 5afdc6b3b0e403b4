import { describe, expect, it } from 'vitest';
import { testCliContext } from '../../testing/testContext';
import { UsageError } from '../types';
import envs from './envs';

/** No data dir; stdout and stderr in one string, as a terminal shows them. */
const ctx = () => testCliContext('/nonexistent', { merged: true });

describe('arlarena envs', () => {
  it('lists the four environments, as JSON lines with --json', async () => {
    const c = ctx();
    expect(await envs.run(['--json'], c.ctx)).toBe(0);
    const rows = c
      .out()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows.map((r) => r.name)).toEqual(['sokoban', 'frozenlake', 'household', 'shop']);
    const t = ctx();
    await envs.run([], t.ctx);
    expect(t.out()).toContain('household');
  });

  it('show prints the first prompt; play replays a winning expert episode', async () => {
    const c = ctx();
    await envs.run(['show', 'household', '--seed', '4', '--json'], c.ctx);
    const shown = JSON.parse(c.out());
    expect(shown.prompt).toContain(shown.observation);
    const p = ctx();
    await envs.run(['play', 'sokoban', '--seed', '2', '--set', 'size=7', '--json'], p.ctx);
    const ep = JSON.parse(p.out());
    expect(ep.won).toBe(true);
    expect(ep.taskId).toBe('sokoban/7x7b1/2');
  });

  it('bad usage names the problem', async () => {
    await expect(envs.run(['show', 'nope'], ctx().ctx)).rejects.toThrow(UsageError);
    await expect(envs.run(['show', 'sokoban', '--set', 'size=99'], ctx().ctx)).rejects.toThrow(/sokoban.settings.size = 99/);
    await expect(envs.run(['frobnicate'], ctx().ctx)).rejects.toThrow(/valid: list, show, play/);
    await expect(envs.run(['show', 'sokoban', '--seed', '-3'], ctx().ctx)).rejects.toThrow(/--seed/);
  });
});
