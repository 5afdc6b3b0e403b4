/** Default run names: what the run is, its seed and a short id — unique, stored names untouched. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RunStore, defaultRunName } from './runStore';
import { writeSyntheticRun } from './synthetic';

let dir = '';
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

describe('default run names', () => {
  it('name new runs by preset, env, seed and the tail of their id, unique even for the same config', async () => {
    dir = mkdtempSync(join(tmpdir(), 'arlarena-names-'));
    const store = await RunStore.open(dir);
    const base = { preset: 'grpo', env: 'sokoban', seed: 1, config: {}, totalSteps: 3 };
    const a = await store.createRun(base);
    const b = await store.createRun(base);
    expect(a.name).toBe(`grpo · sokoban · seed 1 · ${a.id.slice(-6)}`);
    expect(b.name).not.toBe(a.name);
    const s1 = await writeSyntheticRun(store, { steps: 5, shape: 'calm', seed: 1 });
    const s2 = await writeSyntheticRun(store, { steps: 5, shape: 'calm', seed: 1 });
    expect(s1.name).toBe(`synthetic calm (5 steps) · sokoban · seed 1 · ${s1.id.slice(-6)}`);
    expect(s2.name).not.toBe(s1.name);
    // A name given is kept, even when another run has it.
    expect((await store.createRun({ ...base, name: a.name })).name).toBe(a.name);
    await store.close();
  });

  it('falls back to the whole id when the short name is taken', () => {
    expect(defaultRunName('grpo · sokoban', 2, 'run-x-abcdef', () => false)).toBe('grpo · sokoban · seed 2 · abcdef');
    expect(defaultRunName('grpo · sokoban', 2, 'run-x-abcdef', () => true)).toBe('grpo · sokoban · seed 2 · run-x-abcdef');
  });

  it('leaves stored runs their names when the store is reopened', async () => {
    dir = mkdtempSync(join(tmpdir(), 'arlarena-names-'));
    let store = await RunStore.open(dir);
    const old = await store.createRun({
      preset: 'grpo',
      env: 'sokoban',
      seed: 1,
      config: {},
      totalSteps: 3,
      name: 'grpo · sokoban · seed 1',
    });
    await store.close();
    store = await RunStore.open(dir);
    expect((await store.getRun(old.id))?.name).toBe('grpo · sokoban · seed 1');
    await store.close();
  });
});
