import { afterEach, describe, expect, it } from 'vitest';
import {
  currentProject,
  hasRunsWorkspace,
  loadCompareDefaults,
  loadRunsWorkspace,
  parseRunsWorkspace,
  projectKey,
  projectStorageKey,
  resetCurrentProject,
  runsWorkspaceQuery,
  saveCompareDefaults,
  saveRunsWorkspace,
  setCurrentProject,
  type RunsWorkspace,
} from './projectWorkspace';
import { loadChartChoice, saveChartChoice } from './metricPicker';
import { parseWorkspace, workspaceQuery } from './compareWorkspace';

function memory(): Storage & { map: Map<string, string> } {
  const map = new Map<string, string>();
  return {
    map,
    getItem: (k: string) => map.get(k) ?? null,
    setItem: (k: string, v: string) => void map.set(k, v),
    removeItem: (k: string) => void map.delete(k),
    clear: () => map.clear(),
    key: (i: number) => [...map.keys()][i] ?? null,
    get length() {
      return map.size;
    },
  };
}

afterEach(() => resetCurrentProject());

describe('the workspace per project', () => {
  it('a project is its data directory: a short stable key, different folders apart', () => {
    expect(projectKey('/home/r/lab-data')).toMatch(/^[0-9a-f]{8}$/);
    expect(projectKey('/home/r/lab-data')).toBe(projectKey('/home/r/lab-data'));
    expect(projectKey('/home/r/lab-data')).not.toBe(projectKey('/home/r/other-data'));
  });

  it("the runs table's workspace goes into the address and back", () => {
    const ws: RunsWorkspace = {
      search: 'preset = sampo and val/success_rate > 0.4',
      status: 'completed',
      sort: 'config:optim.lr',
      dir: 'asc',
      columns: ['val/score_mean', 'config:optim.lr', 'config:algorithm.loss'],
    };
    const q = runsWorkspaceQuery(ws);
    expect(q).toContain('sort=config:optim.lr');
    expect(q).toContain('cols=val/score_mean,config:optim.lr,config:algorithm.loss');
    expect(parseRunsWorkspace(`?view=runs${q}`)).toEqual(ws);
    expect(hasRunsWorkspace(`?view=runs${q}`)).toBe(true);
    expect(hasRunsWorkspace('?view=runs')).toBe(false);
    // The default sort and empty parts leave the address bare.
    expect(runsWorkspaceQuery({ sort: 'createdAt', dir: 'desc', columns: [] })).toBe('');
    // What does not fit is dropped, not trusted.
    expect(parseRunsWorkspace('?view=runs&status=exploded&sort=rm%20-rf&cols=ok/key,has%20space&dir=up')).toEqual({ columns: ['ok/key'] });
  });

  it('is saved per project: another data directory keeps its own', () => {
    const store = memory();
    const a = projectKey('/data/a');
    const b = projectKey('/data/b');
    saveRunsWorkspace(a, { search: 'grpo', columns: ['config:optim.lr'] }, store);
    expect(loadRunsWorkspace(a, store)).toEqual({ search: 'grpo', columns: ['config:optim.lr'] });
    expect(loadRunsWorkspace(b, store)).toBeNull();
    // Unknown project (app.info not answered yet): nothing saved or read.
    saveRunsWorkspace(null, { search: 'x' }, store);
    expect(store.map.size).toBe(1);
    store.setItem(projectStorageKey(b, 'runs'), 'not json');
    expect(loadRunsWorkspace(b, store)).toBeNull();
  });

  it("Compare's smoothing, x-axis and grouping become the project's defaults", () => {
    const store = memory();
    const p = projectKey('/data/a');
    saveCompareDefaults(p, { smoothing: 'ema', strength: 0.8, xAxis: 'tokens', xKey: '', group: 'algorithm.loss' }, store);
    expect(loadCompareDefaults(p, store)).toEqual({ smoothing: 'ema', strength: 0.8, xAxis: 'tokens', group: 'algorithm.loss' });
    expect(loadCompareDefaults(projectKey('/data/b'), store)).toBeNull();
    store.setItem(projectStorageKey(p, 'compare'), '{"smoothing":"wild","strength":4,"group":"a b"}');
    expect(loadCompareDefaults(p, store)).toEqual({});
  });

  it('the chart choice is kept per project, the one kept before projects read until the project has its own', () => {
    const store = memory();
    saveChartChoice('compare', ['actor/entropy'], store);
    expect(loadChartChoice('compare', store)).toEqual(['actor/entropy']);
    const session = memory();
    setCurrentProject('/data/a', session);
    expect(currentProject(session)).toBe(projectKey('/data/a'));
    expect(loadChartChoice('compare', store)).toEqual(['actor/entropy']);
    saveChartChoice('compare', ['val/score_mean'], store);
    expect(loadChartChoice('compare', store)).toEqual(['val/score_mean']);
    setCurrentProject('/data/b', session);
    expect(loadChartChoice('compare', store)).toEqual(['actor/entropy']);
    // A reloaded tab knows its project before app.info answers.
    resetCurrentProject();
    expect(currentProject(session)).toBe(projectKey('/data/b'));
  });

  it("Compare's address keeps the parallel-coordinates panel's axes and metric", () => {
    const q = workspaceQuery({ parallel: { keys: ['algorithm.loss', 'optim.lr'], metric: 'val/success_rate' } });
    expect(q).toBe('&pc=algorithm.loss,optim.lr&pcy=val/success_rate');
    expect(parseWorkspace(`?view=compare&runs=a,b${q}`)).toEqual({
      parallel: { keys: ['algorithm.loss', 'optim.lr'], metric: 'val/success_rate' },
    });
  });
});
