import { describe, expect, it } from 'vitest';
import type { RunSummary } from '../../shared/api';
import { filterRuns, parseTags, sortRuns } from './runsTable';

function run(p: Partial<RunSummary> & { id: string }): RunSummary {
  return {
    name: p.id, tags: [], env: 'sokoban', preset: 'sampo', seed: 0, status: 'completed', step: 0, totalSteps: 10,
    createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:00Z', summary: {}, alertCount: 0, worstSeverity: null, ...p,
  };
}

const runs = [
  run({ id: 'a', name: 'Alpha', preset: 'grpo', status: 'running', summary: { 'episode/success_rate': 0.4 }, tags: ['base'] }),
  run({ id: 'b', name: 'beta', env: 'frozenlake', summary: { 'episode/success_rate': 0.7 } }),
  run({ id: 'c', name: 'Gamma', status: 'failed', summary: {} }),
];

describe('filterRuns', () => {
  it('searches name, preset, env and tags, all words must match', () => {
    expect(filterRuns(runs, { search: 'alpha grpo' }).map((r) => r.id)).toEqual(['a']);
    expect(filterRuns(runs, { search: 'base' }).map((r) => r.id)).toEqual(['a']);
    expect(filterRuns(runs, { search: 'frozen' }).map((r) => r.id)).toEqual(['b']);
  });
  it('filters by status, "active" and env', () => {
    expect(filterRuns(runs, { status: 'active' }).map((r) => r.id)).toEqual(['a']);
    expect(filterRuns(runs, { status: 'failed' }).map((r) => r.id)).toEqual(['c']);
    expect(filterRuns(runs, { env: 'sokoban' }).map((r) => r.id)).toEqual(['a', 'c']);
  });
});

describe('sortRuns', () => {
  it('sorts by success with missing values last in both directions', () => {
    expect(sortRuns(runs, 'success', 'desc').map((r) => r.id)).toEqual(['b', 'a', 'c']);
    expect(sortRuns(runs, 'success', 'asc').map((r) => r.id)).toEqual(['a', 'b', 'c']);
  });
  it('sorts names case-insensitively', () => {
    expect(sortRuns(runs, 'name', 'asc').map((r) => r.id)).toEqual(['a', 'b', 'c']);
  });
});

describe('parseTags', () => {
  it('trims, drops empties and duplicates', () => {
    expect(parseTags(' a, b,,a , c ')).toEqual(['a', 'b', 'c']);
  });
});
