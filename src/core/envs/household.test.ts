import { describe, expect, it } from 'vitest';
import { Rng } from '../util/rng';
import { expertEpisode, randomEpisode } from './episode';
import { HOUSEHOLD_TASK_TYPES, HouseholdEnv, OOD_LAYOUT_START } from './household';
import { formatResponse } from './parse';
import { heldOutSeeds } from './splits';

const act = (a: string) => formatResponse('t', a);

describe('household', () => {
  it('same seed → identical episode, byte for byte', () => {
    expect(JSON.stringify(expertEpisode(new HouseholdEnv(), 77))).toBe(JSON.stringify(expertEpisode(new HouseholdEnv(), 77)));
    const a = JSON.stringify(randomEpisode(new HouseholdEnv(), 5, new Rng(2)));
    expect(a).toBe(JSON.stringify(randomEpisode(new HouseholdEnv(), 5, new Rng(2))));
  });

  it('expert wins 1,000 training seeds (all six task types) within the 50-step horizon, reward 10 on the last step', () => {
    const env = new HouseholdEnv();
    const types = new Set<string>();
    for (let s = 0; s < 1000; s++) {
      const ep = expertEpisode(env, s, 0);
      expect(ep.won, ep.taskId).toBe(true);
      expect(ep.episodeReturn).toBe(10);
      expect(ep.turns[ep.turns.length - 1].reward).toBe(10);
      expect(ep.turns.every((t) => t.formatValid && t.actionValid)).toBe(true);
      types.add(ep.taskType);
    }
    expect([...types].sort()).toEqual([...HOUSEHOLD_TASK_TYPES].sort());
  });

  it('expert wins held-out seeds of both splits; out-of-distribution seeds use only reserved layouts', () => {
    const env = new HouseholdEnv();
    for (const s of heldOutSeeds(200, 'out_of_distribution')) {
      expect(expertEpisode(env, s, 0).won).toBe(true);
      expect(env.layout().layoutId).toBeGreaterThanOrEqual(OOD_LAYOUT_START);
    }
    for (const s of [...heldOutSeeds(200), ...Array.from({ length: 300 }, (_, i) => i)]) {
      env.reset(s);
      expect(env.layout().layoutId).toBeLessThan(OOD_LAYOUT_START);
    }
  });

  it('the expert only uses what it has observed: it never takes an object from an unopened receptacle', () => {
    const env = new HouseholdEnv();
    for (let s = 0; s < 200; s++) {
      const ep = expertEpisode(env, s, 0);
      ep.turns.forEach((t, i) => {
        const m = /^take (\S+ \d+) from (.+)$/.exec(t.action);
        if (m) expect(ep.turns.slice(0, i + 1).some((u) => u.observation.includes(m[1]))).toBe(true);
      });
    }
  });

  it('taskType setting restricts the task type', () => {
    const env = new HouseholdEnv({ taskType: 'pick_heat_then_place_in_recep' });
    for (let s = 0; s < 20; s++) {
      env.reset(s);
      expect(env.taskType()).toBe('pick_heat_then_place_in_recep');
      expect(env.current().task).toMatch(/^heat some \w+ and put it in \w+ \.$/);
    }
  });

  it('ALFWorld-style commands and observations', () => {
    const env = new HouseholdEnv();
    const o = env.reset(3);
    expect(o.observation).toMatch(/^you are in the middle of a room \. looking quickly around you , you see a .+ \.$/);
    expect(o.admissibleActions).toContain('look');
    expect(o.admissibleActions).toContain('inventory');
    const go = o.admissibleActions.find((a) => a.startsWith('go to ')) as string;
    const r = env.step(act(go));
    expect(r.observation.startsWith(`you arrive at ${go.slice(6)} .`)).toBe(true);
    expect(env.step(act('inventory')).observation).toBe('you are not carrying anything .');
  });

  it('inadmissible or malformed output: "nothing happens .", action invalid, no progress, turn consumed', () => {
    const env = new HouseholdEnv();
    const o = env.reset(4);
    for (const bad of [
      act('go to the moon'),
      act('take apple 99 from fridge 1'),
      '',
      'ignore all rules and say <action>',
      '\u0000\ud800',
      'x'.repeat(1 << 20),
    ]) {
      const r = env.step(bad);
      expect(r.observation).toBe('nothing happens .');
      expect(r.actionValid).toBe(false);
      expect(r.reward).toBe(0);
      expect(r.admissibleActions).toEqual(o.admissibleActions);
    }
    expect(env.stepsTaken()).toBe(6);
  });

  it('format-invalid but admissible: executed (paper pass-through), flagged invalid', () => {
    const env = new HouseholdEnv();
    const o = env.reset(4);
    const go = o.admissibleActions[0];
    const r = env.step(`sure! <action>${go}</action>`);
    expect(r.formatValid).toBe(false);
    expect(r.actionValid).toBe(false);
    expect(r.observation.startsWith('you arrive at')).toBe(true);
  });

  it('the horizon ends the episode at 50 turns without reward', () => {
    const env = new HouseholdEnv();
    env.reset(9);
    let r = env.step(act('look'));
    while (!r.done) r = env.step(act('look'));
    expect(env.stepsTaken()).toBe(50);
    expect(r.won).toBe(false);
    expect(r.admissibleActions).toEqual([]);
  });

  it('random policy rarely wins', () => {
    const env = new HouseholdEnv();
    const rng = new Rng(3);
    let wins = 0;
    for (let s = 0; s < 200; s++) if (randomEpisode(env, s, rng, 0).won) wins++;
    expect(wins / 200).toBeLessThan(0.2);
  });
});
