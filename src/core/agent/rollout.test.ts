import { describe, expect, it } from 'vitest';
import { buildPrompt, createEnv } from '../envs';
import { Rng } from '../util/rng';
import { fitTestbedTokenizer } from './corpus';
import type { GenerateResult, RolloutEngine } from './engine';
import { runRollout } from './rollout';
import type { SamplingOptions } from './sampling';

/** An engine that answers every prompt with a fixed move (per call index) — exercises the bookkeeping only. */
class ScriptedEngine implements RolloutEngine {
  readonly name = 'scripted';
  calls: number[][][] = [];
  constructor(private readonly responses: number[][]) {}
  async setWeights(): Promise<void> {}
  async generate(prompts: readonly (readonly number[])[], opts: SamplingOptions, rng: Rng): Promise<GenerateResult> {
    this.calls.push(prompts.map((p) => [...p]));
    const pick = () => this.responses[rng.int(this.responses.length)].slice(0, opts.maxNewTokens);
    const tokens = prompts.map(pick);
    return {
      tokens,
      logProbs: tokens.map((t) => t.map(() => -0.5)),
      finish: tokens.map((t) => (opts.stopIds.includes(t[t.length - 1]) ? 'stop' : 'length')),
    };
  }
  async logProbs(): Promise<number[][]> {
    return [];
  }
  async dispose(): Promise<void> {}
}

describe('runRollout', () => {
  const tok = fitTestbedTokenizer({ envs: ['sokoban'], episodesPerEnv: 10 });
  const moves = ['up', 'down', 'left', 'right'].map((m) => tok.encode(`<think>push</think><action>${m}</action>`));
  const garbage = tok.encode('<think>hmm');

  it('steps B×G envs in lockstep and emits one row per active turn', async () => {
    const engine = new ScriptedEngine([...moves, garbage]);
    const res = await runRollout({
      engine,
      tokenizer: tok,
      makeEnv: () => createEnv('sokoban'),
      buildPrompt: (obs, history) => buildPrompt({ promptIntro: createEnv('sokoban').promptIntro }, obs, history, 1),
      tasks: [{ seed: 1 }, { seed: 2 }, { seed: 3 }],
      groupSize: 2,
      maxTurns: 6,
      sampling: { maxNewTokens: 12, temperature: 1, topP: 1, topK: 0 },
      maxSeqLen: 384,
      rng: new Rng(5),
      uidPrefix: 's0',
    });
    expect(res.trajectories).toHaveLength(6);
    expect(res.rows.length).toBe(res.trajectories.reduce((s, t) => s + t.length, 0));
    // Groups: the two rollouts of a task share uid, not trajUid.
    expect(res.trajectories[0].uid).toBe('s0.t0');
    expect(res.trajectories[1].uid).toBe('s0.t0');
    expect(res.trajectories[1].trajUid).toBe('s0.t0.g1');
    for (const t of res.trajectories) {
      const rows = t.rowIndices.map((i) => res.rows[i]);
      expect(rows.map((r) => r.turn)).toEqual(rows.map((_, i) => i));
      expect(rows.every((r) => r.trajUid === t.trajUid)).toBe(true);
      expect(t.episodeReturn).toBeCloseTo(
        rows.reduce((s, r) => s + r.envReward, 0),
        10,
      );
      expect(rows[rows.length - 1].done).toBe(true);
      expect(rows.slice(0, -1).every((r) => !r.done)).toBe(true);
      expect(t.taskId).toMatch(/^sokoban\//);
    }
    // Each generate call covers exactly the envs still active, and prompts start with <bos>.
    expect(engine.calls[0]).toHaveLength(6);
    for (const call of engine.calls) for (const p of call) expect(p[0]).toBe(tok.bosId);
    const r1 = res.rows.find((r) => r.turn === 1);
    expect(r1?.promptText).toMatch(/already taken 1 step/);
    // The garbage response is invalid format; well-formed moves are valid.
    const bad = res.rows.filter((r) => r.responseText === tok.decode(garbage));
    const good = res.rows.filter((r) => r.responseText !== tok.decode(garbage));
    expect(bad.length).toBeGreaterThan(0);
    expect(bad.every((r) => !r.formatValid && r.overlong)).toBe(true);
    expect(good.every((r) => r.formatValid && !r.overlong)).toBe(true);
    for (const r of res.rows) expect(r.behaviourLogProbs).toHaveLength(r.responseIds.length);
  });

  it('truncates prompts that do not fit, keeping <bos> and the latest tokens', async () => {
    const engine = new ScriptedEngine(moves);
    const res = await runRollout({
      engine,
      tokenizer: tok,
      makeEnv: () => createEnv('sokoban'),
      buildPrompt: (obs, history) => buildPrompt({ promptIntro: 'intro' }, obs, history, 2),
      tasks: [{ seed: 4 }],
      groupSize: 1,
      maxTurns: 2,
      sampling: { maxNewTokens: 16, temperature: 1, topP: 1, topK: 0 },
      maxSeqLen: 64,
      rng: new Rng(1),
    });
    for (const r of res.rows) {
      expect(r.promptIds.length).toBeLessThanOrEqual(48);
      expect(r.truncated).toBe(true);
      expect(r.promptIds[0]).toBe(tok.bosId);
      expect(tok.decode(r.promptIds)).toBe(tok.decode(tok.encode(r.promptText)).slice(-tok.decode(r.promptIds.slice(1)).length));
    }
  });
});
