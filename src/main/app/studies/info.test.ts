import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StudyInfo } from '../../../shared/studies';
import { studyInfo } from './info';
import { listStudies, readStudy, writeStudy, type Arm, type StudyState } from './studyFiles';

function state(): StudyState {
  const outcome = (preset: string, seed: number, greedy: number) => ({
    env: 'sokoban',
    preset,
    seed,
    steps: 4,
    heldOutGreedy: greedy,
    heldOutSampled: greedy,
    finalTrainSuccess: 0.5,
    bestTrainSuccess: 0.6,
    firstCriticalStep: preset === 'cispo' && seed === 1 ? 3 : null,
    stepsToThreshold: 2,
  });
  const entries = ['grpo', 'cispo'].flatMap((preset) =>
    [1, 2, 3].map((seed) => ({
      env: 'sokoban',
      preset,
      seed,
      runId: `r-${preset}-${seed}`,
      status: 'completed',
      wallSeconds: 10,
      outcome: preset === 'cispo' && seed === 3 ? null : outcome(preset, seed, preset === 'grpo' ? 0.3 + 0.01 * seed : 0.1 + 0.01 * seed),
    })),
  );
  return {
    version: 1,
    name: 's1',
    createdAt: '2026-12-01T00:00:00.000Z',
    plan: {
      command: 'arlarena arena --study s1',
      envs: ['sokoban'],
      presets: ['grpo', 'cispo'],
      seeds: [1, 2, 3],
      steps: 4,
      model: null,
      sets: {},
      baseline: 'grpo',
      episodes: 10,
      threshold: 0.5,
    },
    entries,
  };
}

describe('studies in the data dir and what the Study view gets', () => {
  it('writes, lists and reads back; a foreign folder is skipped; the view payload matches the contract', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'arl-studies-'));
    try {
      await writeStudy(dir, state());
      await mkdir(join(dir, 'studies', 'junk'), { recursive: true });
      await writeFile(join(dir, 'studies', 'junk', 'study.json'), '{"version": 2}');
      await expect(readStudy(dir, 'junk')).rejects.toThrow(/not a study file: version/);
      const all = await listStudies(dir);
      expect(all.map((s) => s.name)).toEqual(['s1']);
      const info = StudyInfo.parse(studyInfo(all[0]));
      expect([info.done, info.planned]).toEqual([5, 6]);
      const cispo = info.rows.find((r) => r.preset === 'cispo')!;
      // pairs on seeds 1 and 2 only (seed 3 unfinished): differences −0.2, −0.2 → worse, p = 0
      expect(cispo.seeds).toEqual([1, 2]);
      expect(cispo.vsBaseline!.diff).toBeCloseTo(-0.2, 12);
      expect(cispo.vsBaseline!.verdict).toBe('worse');
      expect(cispo.criticalAlertShare).toBe(0.5);
      expect(info.rows.find((r) => r.preset === 'grpo')!.vsBaseline).toBeNull();
      expect(info.runs.filter((r) => !r.done).map((r) => r.runId)).toEqual(['r-cispo-3']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a study of arms (two arms of one preset) shows one row per arm, stored and read back', async () => {
    const base = state();
    const arms: Arm[] = [
      { name: 'fp32', preset: 'grpo', sets: {}, vs: null },
      { name: 'int8', preset: 'grpo', sets: { 'compute.rolloutPrecision': 'int8' }, vs: 'fp32' },
    ];
    const armState: StudyState = {
      ...base,
      name: 'arms1',
      plan: { ...base.plan, presets: ['grpo'], baseline: 'fp32', arms, stopOnCollapse: { fraction: 0.5 } },
      entries: base.entries.map((e) => {
        const arm = e.preset === 'grpo' ? 'fp32' : 'int8';
        return { ...e, preset: 'grpo', arm, runId: `r-${arm}-${e.seed}`, outcome: e.outcome ? { ...e.outcome, preset: 'grpo' } : null };
      }),
    };
    const dir = await mkdtemp(join(tmpdir(), 'arl-studies-'));
    try {
      await writeStudy(dir, armState);
      const back = await readStudy(dir, 'arms1');
      expect(back.plan.arms).toEqual(arms);
      expect(back.entries.map((e) => e.arm)).toEqual(['fp32', 'fp32', 'fp32', 'int8', 'int8', 'int8']);
      const info = StudyInfo.parse(studyInfo(back));
      expect(info.presets).toEqual(['fp32', 'int8']);
      expect(info.rows.map((r) => r.preset)).toEqual(['fp32', 'int8']);
      expect(info.rows[1].vsBaseline!.verdict).toBe('worse');
      expect(info.runs[3]).toMatchObject({ preset: 'int8', runId: 'r-int8-1' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
