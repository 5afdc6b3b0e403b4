import { describe, expect, it } from 'vitest';
import { Rng } from '../util/rng';
import { expertEpisode, randomEpisode } from './episode';
import { FrozenLakeEnv } from './frozenlake';
import { formatResponse } from './parse';
import { SokobanEnv, solve } from './sokoban';
import { heldOutSeeds } from './splits';

const act = (a: string) => formatResponse('t', a);

describe('sokoban', () => {
  it('same seed → identical episode, byte for byte', () => {
    const a = JSON.stringify(expertEpisode(new SokobanEnv(), 123));
    const b = JSON.stringify(expertEpisode(new SokobanEnv(), 123));
    expect(a).toBe(b);
    const r1 = JSON.stringify(randomEpisode(new SokobanEnv(), 9, new Rng(5)));
    const r2 = JSON.stringify(randomEpisode(new SokobanEnv(), 9, new Rng(5)));
    expect(r1).toBe(r2);
    expect(new SokobanEnv().reset(1).observation).not.toBe(new SokobanEnv().reset(2).observation);
  });

  it('expert solves 1,000 training and 200 held-out seeds; solutions within 3–12 moves', () => {
    const env = new SokobanEnv();
    const seeds = [...Array.from({ length: 1000 }, (_, i) => i), ...heldOutSeeds(200)];
    for (const s of seeds) {
      const ep = expertEpisode(env, s, 0);
      expect(ep.won, `seed ${s}`).toBe(true);
      expect(ep.turns.length).toBeGreaterThanOrEqual(3);
      expect(ep.turns.length).toBeLessThanOrEqual(12);
      expect(ep.turns.every((t) => t.formatValid && t.actionValid)).toBe(true);
    }
  });

  it('larger rooms with more boxes are generated solvable', () => {
    const env = new SokobanEnv({ size: 7, boxes: 2, maxSteps: 40, maxSolution: 30 });
    for (let s = 0; s < 30; s++) expect(expertEpisode(env, s, 0).won).toBe(true);
  });

  it('gym-sokoban rewards: −0.1 a step, +1 onto target, +10 solved', () => {
    const env = new SokobanEnv();
    const ep = expertEpisode(env, 7, 0);
    const last = ep.turns[ep.turns.length - 1];
    expect(last.reward).toBeCloseTo(10.9, 10);
    for (const t of ep.turns.slice(0, -1)) expect([-0.1, 0.9, -1.1]).toContain(Math.round(t.reward * 10) / 10);
  });

  it('invalid output runs "still": no move, −0.1, action invalid', () => {
    const env = new SokobanEnv();
    const o = env.reset(3);
    for (const bad of ['', 'up', '<action>up</action>', '<think>x</think><action>jump</action>', '\u0000'.repeat(10)]) {
      const r = env.step(bad);
      expect(r.actionValid).toBe(false);
      expect(r.appliedAction).toBe('still');
      expect(r.reward).toBeCloseTo(-0.1, 10);
      expect(r.observation).toBe(o.observation);
    }
  });

  it('walking into a wall is a valid no-op; horizon ends the episode; finished env stays put', () => {
    const env = new SokobanEnv({ maxSteps: 3 });
    env.reset(0);
    let r = env.step(act('up'));
    for (let i = 0; i < 10 && !r.done; i++) r = env.step(act('up'));
    expect(r.done).toBe(true);
    expect(env.stepsTaken()).toBeLessThanOrEqual(3);
    const after = env.step(act('down'));
    expect(after.done).toBe(true);
    expect(after.reward).toBe(0);
    expect(after.observation).toBe(r.observation);
  });

  it('bad settings name the field and the fix', () => {
    expect(() => new SokobanEnv({ size: 99 })).toThrow(/sokoban.settings.size = 99/);
    expect(() => new SokobanEnv({ colour: 1 })).toThrow(/unknown setting "colour"; valid settings: size/);
    expect(() => new SokobanEnv({ minSolution: 9, maxSolution: 4 })).toThrow(/minSolution/);
  });

  it('BFS solver finds the optimal push on a hand-made corridor', () => {
    // # # # # #      player at 6, box at 7, target at 8 (row 1)
    const wall = new Uint8Array(25).fill(1);
    for (const i of [6, 7, 8]) wall[i] = 0;
    const target = new Uint8Array(25);
    target[8] = 1;
    expect(solve(5, wall, target, 6, [7])).toEqual([3]);
    expect(solve(5, wall, target, 8, [7])).toBeNull();
  });

  it('render gives the text and a picture with a legend', () => {
    const env = new SokobanEnv();
    env.reset(11);
    const r = env.render();
    expect(r.text).toBe(env.anchor());
    expect(r.picture?.cells.length).toBe(6);
    expect(r.picture?.legend['#']).toBe('wall');
  });

  it('random policy solves a small share of puzzles (calibration: ≈ 8.5 %)', () => {
    const env = new SokobanEnv();
    const rng = new Rng(1);
    let wins = 0;
    for (let s = 0; s < 400; s++) if (randomEpisode(env, s, rng, 0).won) wins++;
    expect(wins / 400).toBeGreaterThan(0.02);
    expect(wins / 400).toBeLessThan(0.2);
  });
});

describe('frozenlake', () => {
  it('deterministic; expert solves 1,000 non-slippery maps (4×4 and 6×6)', () => {
    expect(JSON.stringify(expertEpisode(new FrozenLakeEnv(), 5))).toBe(JSON.stringify(expertEpisode(new FrozenLakeEnv(), 5)));
    for (const size of [4, 6]) {
      const env = new FrozenLakeEnv({ size, maxSteps: 30 });
      for (let s = 0; s < 1000; s++) expect(expertEpisode(env, s, 0).won, `size ${size} seed ${s}`).toBe(true);
    }
  });

  it('slippery: deterministic per seed, expert still wins a good share of maps', () => {
    const env = new FrozenLakeEnv({ slippery: true, maxSteps: 100 });
    expect(JSON.stringify(expertEpisode(env, 4))).toBe(
      JSON.stringify(expertEpisode(new FrozenLakeEnv({ slippery: true, maxSteps: 100 }), 4)),
    );
    let wins = 0;
    for (let s = 0; s < 300; s++) if (expertEpisode(env, s, 0).won) wins++;
    expect(wins).toBeGreaterThan(100);
  });

  it('falling into a hole ends the episode without reward; invalid → still', () => {
    const env = new FrozenLakeEnv();
    let found = false;
    for (let s = 0; s < 200 && !found; s++) {
      const o = env.reset(s);
      const cells = o.observation.split(/\s+/);
      // a hole right of the start or below it
      const move = cells[1] === 'O' ? 'right' : cells[4] === 'O' ? 'down' : null;
      if (move === null) continue;
      const still = env.step('garbage');
      expect(still.actionValid).toBe(false);
      expect(still.observation).toBe(o.observation);
      const r = env.step(act(move));
      expect(r.done).toBe(true);
      expect(r.won).toBe(false);
      expect(r.reward).toBe(0);
      expect(r.observation).toContain('X');
      found = true;
    }
    expect(found).toBe(true);
  });
});
