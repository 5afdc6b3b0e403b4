/**
 * `arlarena ladder --study`: a tiny ladder end to end — two levels × two presets × one seed — whose summary carries
 * the row fields and whose runs trained with each level's knobs (4 tiny runs, ≈ 1 min on 2 cores); a ladder
 * of arms that are those runs, taken from its ledger (nothing trains); and a ladder of two arms (2 tiny runs).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readLedger } from '../../app/studies/ledger';
import { machineWorkers } from '../../compute/gradPool';
import { RunStore } from '../../store/runStore';
import { testCliContext as ctx } from '../../testing/testContext';
import { TINY_LADDER, tinyCliSets } from '../../testing/tinyCli';
import ladder from './ladder';

const TINY = tinyCliSets();

describe('arlarena ladder --study: a tiny ladder end to end', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'arl-ladder-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("writes summary rows with the issue's fields; each level's runs trained with its knobs", async () => {
    const c = ctx(join(dir, 'data'));
    // TINY's optim.miniBatchRows=4 comes after the level and wins over its mini-batch rows; lr and lag stay.
    const code = await ladder.run([...TINY_LADDER, '--study', 'tiny', '--out', join(dir, 'out'), ...TINY, '--json'], c.ctx);
    expect(code).toBe(0);
    const summary = JSON.parse(await readFile(join(dir, 'out', 'tiny', 'summary.json'), 'utf8'));
    expect(summary.kind).toBe('ladder');
    expect(summary.levels.map((l: { level: number }) => l.level)).toEqual([0, 3]);
    expect(summary.rows).toHaveLength(4);
    for (const r of summary.rows) {
      for (const k of ['env', 'preset', 'level', 'seeds', 'collapsedShare', 'medianCollapseStep', 'survival', 'vsBaseline'])
        expect(r, k).toHaveProperty(k);
      expect(r.collapsedShare.ci95).toHaveLength(2);
      expect(r.survival[0][0]).toBe(0);
    }
    expect(summary.rows.find((r: { preset: string; level: number }) => r.preset === 'gspo' && r.level === 3).vsBaseline.verdict).toBe(
      'not separable',
    );
    const store = await RunStore.open(join(dir, 'data'));
    try {
      const runs = await Promise.all((await store.listRuns()).map((r) => store.getRun(r.id)));
      const lrs = runs
        .map((r) => {
          const c = r!.config as { training: { pressure: number }; optim: { lr: number }; rollout: { policyLag: number } };
          return [c.training.pressure, c.optim.lr, c.rollout.policyLag];
        })
        .sort();
      expect(lrs).toEqual([
        [0, 1e-4, 0],
        [0, 1e-4, 0],
        [3, 5e-4, 1],
        [3, 5e-4, 1],
      ]);
    } finally {
      await store.close();
    }
  }, 240_000);

  it('its ledger alone continues it on a fresh data dir: --export-ledger writes the same ledger, --resume trains nothing', async () => {
    const out = join(dir, 'out', 'tiny');
    const ledger = await readFile(join(out, 'ledger.jsonl'), 'utf8');
    const lines = ledger.trimEnd().split('\n');
    expect(lines).toHaveLength(5);
    // each line records what its run trained on, from its run record: TINY's wasm and tfjs engine, K = 0 the cores —
    // what a ladder of the same runs on this machine expects (the next test reuses them on that)
    const trained = (await readLedger(out))!.records;
    expect(trained.map((r) => r.backend)).toEqual(
      trained.map(() => ({ training: 'wasm', rollout: 'tfjs-wasm', workers: machineWorkers() })),
    );
    const summary = JSON.parse(await readFile(join(out, 'summary.json'), 'utf8'));
    expect(summary.progress).toEqual([
      { level: 0, done: 2, planned: 2 },
      { level: 3, done: 2, planned: 2 },
    ]);
    // The data dir's runs exported afresh (a ladder started before the ledger): the same ledger, the same rows.
    expect(await ladder.run(['--study', 'tiny', '--export-ledger', '--out', join(dir, 'export')], ctx(join(dir, 'data')).ctx)).toBe(0);
    expect(await readFile(join(dir, 'export', 'tiny', 'ledger.jsonl'), 'utf8')).toBe(ledger);
    expect(JSON.parse(await readFile(join(dir, 'export', 'tiny', 'summary.json'), 'utf8')).rows).toEqual(summary.rows);
    // A fresh clone: no data dir, the ledger committed; the ladder's own command with --resume.
    const command = (JSON.parse(lines[0]) as { plan: { command: string } }).plan.command;
    const args = [...command.split(' ').slice(2), '--resume'];
    expect(await ladder.run(args, ctx(join(dir, 'fresh')).ctx)).toBe(0);
    expect(JSON.parse(await readFile(join(out, 'summary.json'), 'utf8')).rows).toEqual(summary.rows);
    expect(await readFile(join(out, 'ledger.jsonl'), 'utf8')).toBe(ledger);
    // --resume alone (and the ledger's --out) does the same: the plan is the ledger's, not the bare command's defaults
    expect(await ladder.run(['--study', 'tiny', '--out', join(dir, 'out'), '--resume'], ctx(join(dir, 'fresh-bare')).ctx)).toBe(0);
    expect(await readFile(join(out, 'ledger.jsonl'), 'utf8')).toBe(ledger);
    for (const fresh of ['fresh', 'fresh-bare']) {
      const store = await RunStore.open(join(dir, fresh));
      try {
        expect(await store.listRuns()).toEqual([]);
      } finally {
        await store.close();
      }
    }
  }, 60_000);

  it("another ladder whose arms are the tiny ladder's runs takes them from its ledger and trains nothing", async () => {
    const tiny = (await readLedger(join(dir, 'out', 'tiny')))!.records;
    const c = ctx(join(dir, 'data-reuse'));
    const args = ['--levels', '0,3', '--seeds', '1', '--steps', '2', '--episodes', '2', '--study', 'tiny-reuse', '--out', join(dir, 'out')];
    expect(await ladder.run([...args, ...TINY, '--arms', 'g=grpo', 's=gspo vs g'], c.ctx)).toBe(0);
    expect(c.err()).toMatch(/level 3: s · sokoban · seed 1: reused run \S+ \(sha256:[0-9a-f]{16}\) from study tiny instead of training it/);
    const lines = (await readLedger(join(dir, 'out', 'tiny-reuse')))!.records;
    expect(lines).toHaveLength(4);
    for (const line of lines) {
      const trained = tiny.find((t) => t.level === line.level && t.preset === line.preset)!;
      expect(line).toEqual({ ...trained, arm: line.preset === 'grpo' ? 'g' : 's', reusedFrom: { study: 'tiny', runId: trained.runId } });
    }
    // the rows are the trained ladder's, cell for cell (the arm's name aside)
    const rowsOf = async (name: string) =>
      (JSON.parse(await readFile(join(dir, 'out', name, 'summary.json'), 'utf8')).rows as Array<Record<string, unknown>>).map(
        ({ arm: _arm, vsBaseline, ...row }) => ({ ...row, vsBaseline: vsBaseline && { ...vsBaseline, against: undefined } }),
      );
    expect(await rowsOf('tiny-reuse')).toEqual(await rowsOf('tiny'));
    const store = await RunStore.open(join(dir, 'data-reuse'));
    try {
      expect(await store.listRuns()).toEqual([]);
    } finally {
      await store.close();
    }
  }, 60_000);

  it('a ladder of arms: one row per arm with its preset, baseline arm and rollout time; each arm trained with its overrides', async () => {
    const c = ctx(join(dir, 'data-arms'));
    const code = await ladder.run(
      [
        '--levels',
        '0',
        '--seeds',
        '1',
        '--steps',
        '2',
        '--episodes',
        '2',
        '--study',
        'tiny-arms',
        '--out',
        join(dir, 'out'),
        ...TINY,
        '--arms',
        'base=grpo',
        'fast=grpo;optim.lr=0.001',
        // Arm base is the tiny ladder's level-0 grpo run (the same config hash), which would be taken from its ledger
        // beside this one instead of training; here each arm trains.
        '--no-reuse',
        '--json',
      ],
      c.ctx,
    );
    expect(code).toBe(0);
    const summary = JSON.parse(await readFile(join(dir, 'out', 'tiny-arms', 'summary.json'), 'utf8'));
    expect(summary.arms).toEqual([
      { name: 'base', preset: 'grpo', sets: {}, vs: null },
      { name: 'fast', preset: 'grpo', sets: { 'optim.lr': 0.001 }, vs: 'base' },
    ]);
    expect(summary.onCollapse).toMatch(/^stop: /);
    expect(summary.rows.map((r: { arm: string; preset: string }) => [r.arm, r.preset])).toEqual([
      ['base', 'grpo'],
      ['fast', 'grpo'],
    ]);
    const [base, fast] = summary.rows;
    expect(base.vsBaseline).toBeNull();
    expect(fast.vsBaseline).toMatchObject({ against: 'base', verdict: 'not separable' });
    expect(base.rolloutSecondsPerStep.n).toBe(1);
    expect(base.rolloutSecondsPerStep.mean).toBeGreaterThan(0);
    expect(fast.vsBaseline.rolloutSpeedup).toBeGreaterThan(0);
    const store = await RunStore.open(join(dir, 'data-arms'));
    try {
      const runs = await Promise.all((await store.listRuns()).map((r) => store.getRun(r.id)));
      const lrs = runs.map((r) => (r!.config as { optim: { lr: number } }).optim.lr).sort();
      expect(lrs).toEqual([1e-4, 1e-3]);
    } finally {
      await store.close();
    }
  }, 240_000);
});
