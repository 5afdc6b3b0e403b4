/**
 * Run folders written by W&B's own client before 0.10 — wandb 0.9.7 in dry-run mode (tests/peers/wandb_old_peer.py
 * in the `wandb-old` venv): wandb-history.jsonl, wandb-summary.json, config.yaml, wandb-metadata.json, no .wandb
 * file. The lab finds each run folder by content and reads it back value for value: steps (explicit ones and rows
 * merged from two calls too), NaN and ±inf, nested keys, the config as W&B's config.yaml holds it, the summary,
 * and how the run ended (a process that exited with code 1 is "failed").
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { venvPython } from '../../../tests/support/peers';
import type { SourceStep } from '../../core/formats/types';
import { RunStore } from '../store/runStore';
import { importSources } from './importSources';
import { scanTrackers } from './trackers';

const PEER = resolve(import.meta.dirname, '../../../tests/peers/wandb_old_peer.py');

type Expected = Record<
  string,
  { folder: string; state: string; exitcode: number; config: unknown; steps: Record<string, Record<string, number | string>> }
>;

let dir: string;
let expected: Expected;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'arl-wandb-old-sdk-'));
  execFileSync(venvPython('wandb-old'), [PEER, 'write', dir], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 280_000 });
  expected = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')) as Expected;
}, 300_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const num = (v: number | string): number =>
  v === 'NaN' ? Number.NaN : v === 'Infinity' ? Number.POSITIVE_INFINITY : v === '-Infinity' ? Number.NEGATIVE_INFINITY : (v as number);

describe('run folders written by wandb 0.9.7 (dry-run)', () => {
  it('are found by content, one W&B run per folder, with the name, id, project and end the client recorded', async () => {
    const scan = await scanTrackers(join(dir, 'wandb'));
    expect(scan.runs.map((r) => r.format)).toEqual(['wandb-files', 'wandb-files', 'wandb-files']);
    expect(scan.runs.map((r) => r.label).sort()).toEqual(Object.keys(expected).sort());
    for (const run of scan.runs) {
      const want = expected[run.label];
      expect(run.info).toMatchObject({
        tracker: 'wandb',
        id: want.folder.slice(want.folder.lastIndexOf('-') + 1),
        name: run.label,
        project: 'arl-old',
        state: want.state,
        exitCode: want.exitcode,
      });
      expect(run.info.startTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      // The folder's files are the run's (output.log, wandb-events.jsonl too); W&B's debug.log beside the folders is not.
      expect(run.files.every((f) => f.includes(want.folder))).toBe(true);
    }
    expect(scan.others.map((f) => f.slice(f.lastIndexOf('/') + 1))).toEqual(['debug.log']);
  });

  it('read back value for value: every step, NaN and ±inf, nested keys as a.b, the config, the summary', async () => {
    const scan = await scanTrackers(join(dir, 'wandb'));
    for (const run of scan.runs) {
      const want = expected[run.label];
      const steps: SourceStep[] = [];
      const { meta, skipped } = await run.read({ add: (s) => steps.push(s), afterChunk: async () => undefined });
      expect(skipped).toEqual({});
      expect(steps.map((s) => s.step)).toEqual(
        Object.keys(want.steps)
          .map(Number)
          .sort((a, b) => a - b),
      );
      for (const s of steps) {
        for (const [k, v] of Object.entries(want.steps[String(s.step)])) {
          const got = s.values[k];
          if (Number.isNaN(num(v))) expect(got, `${run.label} step ${s.step} ${k}`).toBeNaN();
          else expect(got, `${run.label} step ${s.step} ${k}`).toBe(num(v));
        }
        // W&B's own run time is kept as a value; its wall clock is the step's time.
        expect(typeof s.values._runtime).toBe('number');
        expect(s.wallTime).toBeGreaterThan(1.5e9);
      }
      expect(meta.config).toEqual(want.config);
      if (run.label === 'grpo-finished') expect(meta.finalMetrics).toMatchObject({ final_score: 0.75, 'timing.gen': 12.5 });
      // The string the rows carry is no metric: named in the notes.
      if (run.label !== 'ppo-steps') expect(meta.notes.join('\n')).toMatch(/non-numeric history key\(s\) ignored .*note/);
    }
  });

  it('import as lab runs: verl keys mapped, the failed run tagged, the same folder again is "already imported"', async () => {
    const store = await RunStore.open(join(dir, 'store'));
    try {
      const r = await importSources(store, [join(dir, 'wandb')]);
      expect(r.trackers).toEqual({ 'wandb-files': 3 });
      expect(r.steps).toBe(12 + 5 + 4);
      const recs = await Promise.all(r.runIds.map((id) => store.getRun(id)));
      const fin = recs.find((x) => x?.name === 'grpo-finished')!;
      expect(fin.tags).toEqual(expect.arrayContaining(['wandb', 'project:arl-old']));
      expect(fin.preset).toBe('grpo');
      const rows = await store.readMetrics(fin.id);
      expect(rows.map((m) => m.step)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
      // verl's critic/score/mean is the catalog's episode/score_mean; val-core/…/mean@1 its val/score_mean.
      expect(rows[2].values['episode/score_mean']).toBe(0.2);
      expect(rows[2].values['val/score_mean']).toBe(0.27);
      expect(rows[3].values['actor/grad_norm']).toBeNaN();
      expect(rows[5].values['actor/grad_norm']).toBe(Number.NEGATIVE_INFINITY);
      const failed = recs.find((x) => x?.name === 'grpo-failed')!;
      expect(failed.tags).toContain('failed');
      const again = await importSources(store, [join(dir, 'wandb')]);
      expect(again.runIds).toEqual([]);
      expect([...(again.duplicateOf ?? [])].sort()).toEqual([...r.runIds].sort());
    } finally {
      await store.close();
    }
  });
});
