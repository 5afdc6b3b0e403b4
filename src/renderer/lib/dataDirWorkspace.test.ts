/**
 * The views' storage that also keeps the workspace in the data directory: which keys carry which part, what is
 * sent and when, the data directory winning at open, a browser's older workspace going up, a refused change
 * resent part by part, and the views' own load/save functions working through it.
 */
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import type { WorkspacePatch } from '../../shared/workspace';
import {
  mergePatches,
  partOfKey,
  patchFor,
  splitPatch,
  storageKeyOf,
  SyncedStorage,
  unsentKey,
  workspaceEntries,
} from './dataDirWorkspace';
import {
  loadCompareDefaults,
  loadRunsWorkspace,
  projectKey,
  projectStorageKey,
  resetCurrentProject,
  saveCompareDefaults,
  saveRunsWorkspace,
  setCurrentProject,
} from './projectWorkspace';
import { loadSavedWorkspace, saveWorkspace, workspaceStorageKey } from './compareWorkspace';
import { loadChartChoice, saveChartChoice } from './metricPicker';

const DATA_DIR = '/data/lab';
const P = projectKey(DATA_DIR);

function mapStore(): Pick<Storage, 'getItem' | 'setItem'> & { m: Map<string, string> } {
  const m = new Map<string, string>();
  return { m, getItem: (k) => m.get(k) ?? null, setItem: (k, v) => void m.set(k, v) };
}

function recorder(ok = true) {
  const sent: WorkspacePatch[] = [];
  return { sent, send: async (p: WorkspacePatch) => (sent.push(p), { ok }) };
}

beforeEach(() => {
  vi.useFakeTimers();
  setCurrentProject(DATA_DIR, null);
});
afterEach(() => {
  vi.useRealTimers();
  resetCurrentProject();
});

it('maps the views’ storage keys to the parts of the workspace and back, for the current project only', () => {
  const parts = [
    [projectStorageKey(P, 'runs'), { kind: 'runs' }],
    [projectStorageKey(P, 'compare'), { kind: 'compare' }],
    [`arlarena.charts.run@${P}`, { kind: 'charts', view: 'run' }],
    [`arlarena.charts.compare@${P}`, { kind: 'charts', view: 'compare' }],
    [workspaceStorageKey(['b', 'a']), { kind: 'set', key: 'a,b' }],
  ] as const;
  for (const [key, part] of parts) {
    expect(partOfKey(key, P)).toEqual(part);
    expect(storageKeyOf(part, P)).toBe(key);
  }
  expect(partOfKey(projectStorageKey('12345678', 'runs'), P)).toBeNull();
  expect(partOfKey('arlarena.charts.run', P)).toBeNull();
  expect(partOfKey('arlarena.compare.ws:a b', P)).toBeNull();
  expect(partOfKey('arlarena.project', P)).toBeNull();
});

it('turns stored text into a change, merges and splits changes', () => {
  expect(patchFor({ kind: 'runs' }, '{"sort":"config:optim.lr"}')).toEqual({ runs: { sort: 'config:optim.lr' } });
  expect(patchFor({ kind: 'charts', view: 'run' }, '["a/b"]')).toEqual({ charts: { run: ['a/b'] } });
  expect(patchFor({ kind: 'set', key: 'a,b' }, '{"q":"&x=wall","group":""}')).toEqual({ sets: { 'a,b': { q: '&x=wall', group: '' } } });
  expect(patchFor({ kind: 'runs' }, '[1]')).toBeNull();
  expect(patchFor({ kind: 'charts', view: 'run' }, '{}')).toBeNull();
  expect(patchFor({ kind: 'compare' }, 'not json')).toBeNull();
  const m = mergePatches(
    { runs: { search: 'x' }, charts: { run: ['a'] }, sets: { 'a,b': { q: '1', group: '' } } },
    { runs: { search: 'y' }, charts: { compare: ['b'] }, sets: { 'c,d': { q: '2', group: '' } } },
  );
  expect(m).toEqual({
    runs: { search: 'y' },
    charts: { run: ['a'], compare: ['b'] },
    sets: { 'a,b': { q: '1', group: '' }, 'c,d': { q: '2', group: '' } },
  });
  expect(splitPatch(m)).toHaveLength(5);
  expect(workspaceEntries({ runs: { search: 'x' }, sets: { 'a,b': { q: '', group: '' } } }, P)).toEqual([
    [projectStorageKey(P, 'runs'), '{"search":"x"}'],
    ['arlarena.compare.ws:a,b', '{"q":"","group":""}'],
  ]);
});

it('at open the data directory’s workspace wins over this browser’s copy; parts only the browser had go up', async () => {
  const local = mapStore();
  const store = new SyncedStorage(local, 100);
  // This browser's older copy: a runs workspace and a chart choice; the lab has another runs workspace.
  saveRunsWorkspace(P, { search: 'old', columns: ['config:optim.lr'] }, local);
  saveChartChoice('run', ['actor/entropy'], local);
  // A view saved before the lab answered: dropped, the lab's copy wins.
  store.setItem(projectStorageKey(P, 'runs'), '{"search":"typed before"}');
  const { sent, send } = recorder();
  store.connect(P, { runs: { search: 'preset = sampo', sort: 'config:optim.lr', dir: 'asc' } }, send);
  expect(loadRunsWorkspace(P, store)).toEqual({ search: 'preset = sampo', sort: 'config:optim.lr', dir: 'asc' });
  expect(local.getItem(projectStorageKey(P, 'runs'))).toBe('{"search":"preset = sampo","sort":"config:optim.lr","dir":"asc"}');
  await vi.advanceTimersByTimeAsync(100);
  expect(sent).toEqual([{ charts: { run: ['actor/entropy'] } }]);
});

it('sends each change a moment after the last one, together, and nothing for a value unchanged', async () => {
  const store = new SyncedStorage(mapStore(), 100);
  const { sent, send } = recorder();
  store.connect(P, {}, send);
  saveRunsWorkspace(P, { search: 'a' }, store);
  saveRunsWorkspace(P, { search: 'ab' }, store);
  saveCompareDefaults(P, { smoothing: 'ema', strength: 0.8, xAxis: 'tokens' }, store);
  saveWorkspace(['y', 'x'], { metrics: ['val/score_mean'], hidden: ['y'], group: 'preset' }, store);
  await vi.advanceTimersByTimeAsync(50);
  expect(sent).toEqual([]);
  await vi.advanceTimersByTimeAsync(60);
  expect(sent).toEqual([
    {
      runs: { search: 'ab' },
      compare: { smoothing: 'ema', strength: 0.8, xAxis: 'tokens' },
      sets: { 'x,y': { q: '&metrics=val/score_mean&hide=y', group: 'preset' } },
    },
  ]);
  saveRunsWorkspace(P, { search: 'ab' }, store);
  await vi.advanceTimersByTimeAsync(200);
  expect(sent).toHaveLength(1);
  // Another project's key (a tab's earlier data directory) stays in this browser.
  saveRunsWorkspace('12345678', { search: 'elsewhere' }, store);
  await vi.advanceTimersByTimeAsync(200);
  expect(sent).toHaveLength(1);
  expect(loadSavedWorkspace(['x', 'y'], store)).toEqual({ metrics: ['val/score_mean'], hidden: ['y'], group: 'preset' });
});

it('resends a refused change part by part, and without the lab keeps the workspace in the browser only', async () => {
  const store = new SyncedStorage(mapStore(), 10);
  const sent: WorkspacePatch[] = [];
  store.connect(P, {}, async (p) => (sent.push(p), { ok: Object.keys(p).length === 1 && !p.compare }));
  saveRunsWorkspace(P, { search: 'a' }, store);
  saveCompareDefaults(P, { smoothing: 'mean' }, store);
  await vi.advanceTimersByTimeAsync(20);
  expect(sent).toEqual([
    { runs: { search: 'a' }, compare: { smoothing: 'mean' } },
    { runs: { search: 'a' } },
    { compare: { smoothing: 'mean' } },
  ]);

  const alone = new SyncedStorage(null, 10);
  const { sent: none, send } = recorder();
  alone.connect(P, null, send);
  saveChartChoice('compare', ['val/score_mean'], alone);
  await vi.advanceTimersByTimeAsync(50);
  expect(none).toEqual([]);
  // Blocked storage: memory holds it for the page.
  expect(loadChartChoice('compare', alone)).toEqual(['val/score_mean']);
});

it('a change not yet taken by the data directory (the tab closed too soon) wins over it at the next open, and goes up', async () => {
  const local = mapStore();
  const first = new SyncedStorage(local, 100);
  const { send } = recorder();
  first.connect(P, { runs: { search: 'old' } }, send);
  saveRunsWorkspace(P, { search: 'newer' }, first);
  // The page closes before the change is sent: the browser's storage lists it as unsent.
  expect(JSON.parse(local.getItem(unsentKey(P))!)).toEqual([projectStorageKey(P, 'runs')]);

  const next = new SyncedStorage(local, 100);
  const { sent, send: send2 } = recorder();
  next.connect(P, { runs: { search: 'old' }, compare: { xAxis: 'wall' } }, send2);
  expect(loadRunsWorkspace(P, next)?.search).toBe('newer');
  expect(loadCompareDefaults(P, next)).toEqual({ xAxis: 'wall' });
  await vi.advanceTimersByTimeAsync(100);
  expect(sent).toEqual([{ runs: { search: 'newer' } }]);
  // Taken: nothing is listed any more, and the open after that takes the data directory's copy again.
  expect(JSON.parse(local.getItem(unsentKey(P))!)).toEqual([]);
  const third = new SyncedStorage(local, 100);
  third.connect(P, { runs: { search: 'from another browser' } }, recorder().send);
  expect(loadRunsWorkspace(P, third)?.search).toBe('from another browser');
});

it('a change the lab could not take stays listed as unsent; one it refused as out of bounds does not', async () => {
  const local = mapStore();
  const store = new SyncedStorage(local, 10);
  store.connect(P, {}, async (p) =>
    p.runs ? { ok: false, error: { code: 'VALIDATION' } } : { ok: false, error: { code: 'UNAVAILABLE' } },
  );
  saveCompareDefaults(P, { smoothing: 'ema' }, store);
  saveRunsWorkspace(P, { search: 'x' }, store);
  await vi.advanceTimersByTimeAsync(20);
  expect(JSON.parse(local.getItem(unsentKey(P))!)).toEqual([projectStorageKey(P, 'compare')]);
});
