/**
 * ladders.list / ladders.get through the real router (inputs and outputs checked against the contract), on level
 * studies and runs stored in a real data dir as `arlarena ladder --study` leaves them: one level finished, one half
 * way (a run still training, one not started).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeStudy, type StudyEntry, type StudyState } from '../../app/studies/studyFiles';
import type { RunStore } from '../../store/runStore';
import { openHandlerTestLab, type HandlerTestLab } from '../../testing/testLab';
import { createLaddersHandlers } from './ladders';

let lab: HandlerTestLab;
const call = async (m: string, input?: unknown): Promise<any> => lab.call(m, input);
const COMMAND = 'arlarena ladder --levels 0,2 --presets grpo,cispo --seeds 2 --steps 6 --study tiny';

/** A stored run with validations every 2 steps (held-out success `val` until `fallAt`, then 0). */
async function storedRun(store: RunStore, preset: string, seed: number, fallAt: number | null, step = 6): Promise<string> {
  const rec = await store.createRun({ preset, env: 'sokoban', seed, config: { preset, seed }, totalSteps: 6, status: 'running' });
  await store.appendMetrics(
    rec.id,
    [0, 2, 4, 6]
      .filter((s) => s <= step)
      .map((s) => ({ step: s, values: { 'val/success_rate': fallAt !== null && s >= fallAt ? 0 : 0.5 } })),
  );
  await store.flush(rec.id);
  await store.updateRun(rec.id, step === 6 ? { status: 'completed', step } : { step });
  return rec.id;
}

function outcome(preset: string, seed: number): NonNullable<StudyEntry['outcome']> {
  return {
    env: 'sokoban',
    preset,
    seed,
    steps: 6,
    heldOutGreedy: 0.25 * seed,
    heldOutSampled: 0.2,
    finalTrainSuccess: 0.3,
    bestTrainSuccess: 0.3,
    firstCriticalStep: null,
    stepsToThreshold: null,
  };
}

function state(level: number, entries: StudyEntry[]): StudyState {
  return {
    version: 1,
    name: `tiny-p${level}`,
    createdAt: '2026-12-05T01:00:00.000Z',
    plan: {
      command: COMMAND,
      envs: ['sokoban'],
      presets: ['grpo', 'cispo'],
      seeds: [1, 2],
      steps: 6,
      model: null,
      sets: { 'training.pressure': level },
      baseline: 'grpo',
      episodes: 4,
      threshold: 0.5,
    },
    entries,
  };
}

const ids: Record<string, string> = {};

beforeAll(async () => {
  lab = await openHandlerTestLab('arl-ladders-', (s) => createLaddersHandlers(s));
  const { store } = await lab.services.lab();
  const done = async (level: number, preset: string, seed: number, fallAt: number | null): Promise<StudyEntry> => {
    const id = await storedRun(store, preset, seed, fallAt);
    ids[`${level}/${preset}/${seed}`] = id;
    return { env: 'sokoban', preset, seed, runId: id, status: 'completed', wallSeconds: 3, outcome: outcome(preset, seed) };
  };
  // Level 0 finished: CISPO's seeds both lose their held-out success (at steps 2 and 4), GRPO's do not.
  await writeStudy(
    lab.dir,
    state(0, [await done(0, 'grpo', 1, null), await done(0, 'grpo', 2, null), await done(0, 'cispo', 1, 2), await done(0, 'cispo', 2, 4)]),
  );
  // Level 2 half way: GRPO seed 1 finished, seed 2 training at step 4; CISPO not started.
  const training = await storedRun(store, 'grpo', 2, null, 4);
  ids['2/grpo/2'] = training;
  await writeStudy(
    lab.dir,
    state(2, [
      await done(2, 'grpo', 1, null),
      { env: 'sokoban', preset: 'grpo', seed: 2, runId: training, status: 'running', wallSeconds: null, outcome: null },
      { env: 'sokoban', preset: 'cispo', seed: 1, runId: null, status: null, wallSeconds: null, outcome: null },
      { env: 'sokoban', preset: 'cispo', seed: 2, runId: null, status: null, wallSeconds: null, outcome: null },
    ]),
  );
});
afterAll(() => lab?.close());

describe('ladders.* on a stored ladder', () => {
  it('lists the ladder with its progress', async () => {
    const res = await call('ladders.list');
    expect(res.ok).toBe(true);
    expect(res.value).toEqual([
      expect.objectContaining({ name: 'tiny', levels: [0, 2], envs: ['sokoban'], cells: ['grpo', 'cispo'], seeds: 2, done: 5, planned: 8 }),
    ]);
    expect(res.value[0].complete).toBe(false);
  });

  it('gives the cells from the stored runs, the runs behind each curve, and the incomplete ones', async () => {
    const res = await call('ladders.get', { name: 'tiny' });
    expect(res.ok).toBe(true);
    const info = res.value;
    const cell = (level: number, preset: string) => info.cells.find((c: any) => c.level === level && c.preset === preset);
    const c0 = cell(0, 'cispo');
    expect(c0.runs.map((r: any) => [r.runId, r.collapseStep])).toEqual([
      [ids['0/cispo/1'], 2],
      [ids['0/cispo/2'], 4],
    ]);
    expect(c0.survival).toEqual([
      [0, 1],
      [2, 0.5],
      [4, 0],
    ]);
    expect(c0.medianCollapseStep).toBe(2);
    expect(c0.collapsedShare).toMatchObject({ collapsed: 2, n: 2, mean: 1 });
    // Two collapses (steps 2, 4; at risk (2, 2) then (1, 2)) against none: E = 2/4 + 1/3 = 5/6, V = 1/4 + 2/9 = 17/36,
    // O = 2, so χ² = (7/6)² / (17/36) = 49/17.
    expect(c0.vsBaseline.chiSquare).toBeCloseTo(49 / 17, 10);
    expect(cell(0, 'grpo')).toMatchObject({
      complete: true,
      survival: [
        [0, 1],
        [6, 1],
      ],
      vsBaseline: null,
    });
    expect(cell(0, 'grpo').heldOutSurvivors).toMatchObject({ n: 2, mean: 0.375 });

    const g2 = cell(2, 'grpo');
    expect(g2).toMatchObject({ done: 1, complete: false });
    expect(g2.runs.map((r: any) => [r.runId, r.status, r.done, r.step])).toEqual([
      [ids['2/grpo/1'], 'completed', true, 6],
      [ids['2/grpo/2'], 'running', false, 4],
    ]);
    const c2 = cell(2, 'cispo');
    expect(c2).toMatchObject({ done: 0, complete: false, survival: [], vsBaseline: null });
    expect(c2.runs.map((r: any) => [r.seed, r.runId, r.done])).toEqual([
      [1, null, false],
      [2, null, false],
    ]);
    expect(info.levels.map((l: any) => [l.level, l.started, l.done, l.planned])).toEqual([
      [0, true, 4, 4],
      [2, true, 1, 4],
    ]);
  });

  it('answers NOT_FOUND naming the ladders there, and VALIDATION for a malformed name', async () => {
    const missing = await call('ladders.get', { name: 'nope' });
    expect(missing.ok).toBe(false);
    expect(missing.error).toMatchObject({ code: 'NOT_FOUND', field: 'name', hint: 'ladders here: tiny' });
    const bad = await call('ladders.get', { name: '../etc' });
    expect(bad.error.code).toBe('VALIDATION');
    expect(bad.error.field).toBe('name');
  });
});
