/**
 * workspace.get / workspace.set: the project's workspace in the data directory — stored atomically in
 * workspace.json, parts replaced or removed, compared sets merged and bounded, bad input refused with the field,
 * a damaged file read part by part with the problem named, and a second handler set (another process serving the
 * same data directory) seeing what the first wrote.
 */
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MAX_COMPARE_SETS } from '../../../shared/workspace';
import { openHandlerTestLab, type HandlerTestLab } from '../../testing/testLab';
import { createWorkspaceHandlers } from './workspace';

let lab: HandlerTestLab;
const call = async (m: string, input?: unknown): Promise<any> => lab.call(m, input);

beforeAll(async () => {
  lab = await openHandlerTestLab('arl-workspace-', (s) => createWorkspaceHandlers(s));
});
afterAll(() => lab.close());

it('starts empty, stores each part in workspace.json, and answers it to another handler set on the same data directory', async () => {
  expect((await call('workspace.get')).value).toEqual({ workspace: {}, problem: null });
  const runs = { search: 'preset = sampo and val/success_rate > 0.4', sort: 'config:optim.lr', dir: 'asc', columns: ['config:optim.lr'] };
  expect((await call('workspace.set', { runs })).value.workspace).toEqual({ runs });
  await call('workspace.set', { compare: { smoothing: 'ema', strength: 0.8, xAxis: 'tokens', group: 'preset' } });
  await call('workspace.set', { charts: { compare: ['val/score_mean', 'critic/vf_explained_var'] } });
  await call('workspace.set', { sets: { 'a,b': { q: '&metrics=val/score_mean&hide=b', group: '' } } });
  const onDisk = JSON.parse(await readFile(join(lab.dir, 'workspace.json'), 'utf8'));
  expect(onDisk.version).toBe(1);
  expect(onDisk.runs).toEqual(runs);
  expect(onDisk.charts).toEqual({ compare: ['val/score_mean', 'critic/vf_explained_var'] });
  // No temp file is left beside it (writeFileAtomic renames its own).
  expect((await readdir(lab.dir)).filter((n) => n.includes('workspace') && n.endsWith('.tmp'))).toEqual([]);

  // The desktop app and `arlarena serve` over one data directory: another handler set reads the same workspace.
  const other = createWorkspaceHandlers(lab.services);
  const seen = await other['workspace.get']({} as never, { transport: 'electron', publishDownload: null });
  expect(seen.ok && seen.value.workspace).toEqual({
    runs,
    compare: { smoothing: 'ema', strength: 0.8, xAxis: 'tokens', group: 'preset' },
    charts: { compare: ['val/score_mean', 'critic/vf_explained_var'] },
    sets: { 'a,b': { q: '&metrics=val/score_mean&hide=b', group: '' } },
  });
});

it('replaces a part, removes it with null, merges compared sets and keeps the newest', async () => {
  await call('workspace.set', { charts: { run: ['actor/entropy'] } });
  let ws = (await call('workspace.get')).value.workspace;
  expect(ws.charts).toEqual({ run: ['actor/entropy'], compare: ['val/score_mean', 'critic/vf_explained_var'] });
  await call('workspace.set', { runs: null, charts: { compare: null } });
  ws = (await call('workspace.get')).value.workspace;
  expect(ws.runs).toBeUndefined();
  expect(ws.charts).toEqual({ run: ['actor/entropy'] });

  await call('workspace.set', { sets: { 'c,d': { q: '&x=wall', group: 'preset' } } });
  await call('workspace.set', { sets: { 'a,b': null } });
  expect(Object.keys((await call('workspace.get')).value.workspace.sets)).toEqual(['c,d']);

  const many = Object.fromEntries(Array.from({ length: MAX_COMPARE_SETS }, (_, i) => [`r${i},s${i}`, { q: `&x=tokens`, group: '' }]));
  await call('workspace.set', { sets: many });
  // c,d was saved before the 200 new ones: the oldest goes.
  const sets = (await call('workspace.get')).value.workspace.sets;
  expect(Object.keys(sets)).toHaveLength(MAX_COMPARE_SETS);
  expect(sets['c,d']).toBeUndefined();
  expect(sets[`r${MAX_COMPARE_SETS - 1},s${MAX_COMPARE_SETS - 1}`]).toBeDefined();
});

it('refuses what is not a workspace, naming the field, and changes nothing', async () => {
  const before = await readFile(join(lab.dir, 'workspace.json'), 'utf8');
  for (const bad of [
    { runs: { sort: 'x'.repeat(300) } },
    { runs: { dir: 'up' } },
    { compare: { strength: 1 } },
    { compare: { smoothing: 'gaussian' } },
    { sets: { 'a b': { q: '', group: '' } } },
    { sets: { 'a,b': { q: '', group: '', extra: 1 } } },
    { layout: 'grid' },
    { charts: { run: Array(501).fill('k') } },
  ]) {
    const res = await call('workspace.set', bad);
    expect(res.ok, JSON.stringify(bad)).toBe(false);
    expect(res.error.code).toBe('VALIDATION');
  }
  expect((await call('workspace.set', { compare: { strength: 1 } })).error.field).toContain('compare');
  expect(await readFile(join(lab.dir, 'workspace.json'), 'utf8')).toBe(before);
});

it('reads a damaged file part by part, names what it left out, and writes a clean file on the next change', async () => {
  const file = join(lab.dir, 'workspace.json');
  await writeFile(file, JSON.stringify({ version: 1, runs: { dir: 'sideways' }, compare: { xAxis: 'wall' }, sets: { 'a,b': { q: 1 } } }));
  let got = (await call('workspace.get')).value;
  expect(got.workspace).toEqual({ compare: { xAxis: 'wall' } });
  expect(got.problem).toContain('workspace.json');
  expect(got.problem).toContain('runs (dir:');
  expect(got.problem).toContain('1 compared set');

  await writeFile(file, '{"runs": {');
  got = (await call('workspace.get')).value;
  expect(got.workspace).toEqual({});
  expect(got.problem).toMatch(/workspace\.json is not JSON/);
  await call('workspace.set', { compare: { xAxis: 'step' } });
  got = (await call('workspace.get')).value;
  expect(got).toEqual({ workspace: { compare: { xAxis: 'step' } }, problem: null });
});

it('applies changes sent together in order, none lost', async () => {
  await Promise.all(
    Array.from({ length: 12 }, (_, i) => call('workspace.set', { sets: { [`p${i},q${i}`]: { q: `&x=wall`, group: '' } } })),
  );
  const sets = (await call('workspace.get')).value.workspace.sets;
  for (let i = 0; i < 12; i++) expect(sets[`p${i},q${i}`]).toEqual({ q: '&x=wall', group: '' });
});
