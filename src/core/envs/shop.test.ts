import { describe, expect, it } from 'vitest';
import { Rng } from '../util/rng';
import { expertEpisode, randomEpisode } from './episode';
import { formatResponse } from './parse';
import { ShopEnv } from './shop';
import { HELD_OUT_GOALS, getCatalog, goalAt, scorePurchase } from './shopCatalog';
import { heldOutSeeds } from './splits';

const act = (a: string) => formatResponse('t', a);

describe('shop catalogue', () => {
  it('is deterministic, has thousands of products, and every goal is satisfiable by its source product', () => {
    const a = getCatalog(0, 2000, 6000);
    expect(a.products.length).toBe(2000);
    expect(JSON.stringify(a.products.slice(0, 50))).toBe(JSON.stringify(getCatalog(0, 2000, 6001).products.slice(0, 50)));
    expect(JSON.stringify(goalAt(a, 17))).toBe(JSON.stringify(goalAt(getCatalog(0, 2000, 6001), 17)));
    expect(getCatalog(1, 2000, 6000).products[0].title).not.toBe(a.products[0].title);
    for (let i = 0; i < 1000; i++) {
      const g = goalAt(a, i);
      const p = a.products[g.product];
      expect(scorePurchase(g, p, g.options)).toBe(1);
      expect(g.instruction).toContain(`price lower than ${g.priceUpper}.00 dollars`);
    }
  });

  it('WebShop score: partial credit for attributes, options and price, scaled by the type match', () => {
    const cat = getCatalog(0, 2000, 6000);
    const g = goalAt(cat, 0);
    const p = cat.products[g.product];
    const total = g.attributes.length + Object.keys(g.options).length + 1;
    expect(scorePurchase(g, p, {})).toBeCloseTo((total - Object.keys(g.options).length) / total, 10);
    const other = cat.products.find((q) => q.category !== g.category) as typeof p;
    expect(scorePurchase(g, other, {})).toBeLessThanOrEqual(0.1 + 1e-12);
  });
});

describe('shop env', () => {
  it('same seed → identical episode, byte for byte', () => {
    expect(JSON.stringify(expertEpisode(new ShopEnv(), 8))).toBe(JSON.stringify(expertEpisode(new ShopEnv(), 8)));
    expect(JSON.stringify(randomEpisode(new ShopEnv(), 8, new Rng(4)))).toBe(JSON.stringify(randomEpisode(new ShopEnv(), 8, new Rng(4))));
  });

  it('expert buys a perfect match on 1,000 training and 200 held-out seeds (reward 10, score 1)', () => {
    const env = new ShopEnv();
    for (const s of [...Array.from({ length: 1000 }, (_, i) => i), ...heldOutSeeds(200)]) {
      const ep = expertEpisode(env, s, 0);
      expect(ep.won, ep.taskId).toBe(true);
      expect(ep.score).toBe(1);
      expect(ep.episodeReturn).toBe(10);
      expect(ep.turns.every((t) => t.formatValid && t.actionValid)).toBe(true);
    }
  });

  it('held-out seeds use goals < 500, training seeds goals ≥ 500 (disjoint goal splits)', () => {
    const env = new ShopEnv();
    for (const s of [...heldOutSeeds(300), ...heldOutSeeds(300, 'out_of_distribution')])
      expect(env.goalIndex(s)).toBeLessThan(HELD_OUT_GOALS);
    for (let s = 0; s < 2000; s++) expect(env.goalIndex(s)).toBeGreaterThanOrEqual(HELD_OUT_GOALS);
  });

  it('pages, paging and navigation follow WebShop', () => {
    const env = new ShopEnv();
    const o = env.reset(1);
    expect(o.observation).toBe('search');
    expect(o.admissibleActions).toEqual(['search[<your query>]']);
    const r = env.step(act(`search[${env.currentGoal().type}]`));
    expect(r.observation).toMatch(/^back to search \[SEP\] page 1 \( total results : \d+ \)/);
    expect(r.admissibleActions[0]).toBe('click[back to search]');
    if (r.admissibleActions.includes('click[next >]')) {
      const r2 = env.step(act('click[next >]'));
      expect(r2.observation).toContain('page 2');
      expect(r2.admissibleActions).toContain('click[< prev]');
    }
    const item = env.current().admissibleActions.find((a) => /^click\[b\d+\]$/.test(a)) as string;
    const it = env.step(act(item));
    expect(it.observation).toContain('[SEP] buy now');
    expect(env.step(act('click[features]')).observation.startsWith('back to search [SEP] < prev [SEP] ')).toBe(true);
    expect(env.step(act('click[< prev]')).observation).toBe(it.observation);
  });

  it('buying the wrong thing ends the episode with partial score and no reward', () => {
    const env = new ShopEnv();
    env.reset(2);
    env.step(act('search[chocolate]'));
    const first = env.current().admissibleActions.find((a) => /^click\[b\d+\]$/.test(a)) as string;
    env.step(act(first));
    const r = env.step(act('click[buy now]'));
    expect(r.done).toBe(true);
    if (!r.won) {
      expect(r.reward).toBe(0);
      expect(r.score).toBeLessThan(1);
    }
  });

  it('invalid actions leave the page unchanged and are flagged', () => {
    const env = new ShopEnv();
    const o = env.reset(3);
    for (const bad of [
      act('click[buy now]'),
      act('search[]'),
      act('search[<your query>]'),
      act('buy it'),
      'no tags at all',
      '',
      '\ud800'.repeat(1000),
      `<think>x</think><action>search[${'a'.repeat(1 << 20)}]</action>`,
    ]) {
      const r = env.step(bad);
      expect(r.actionValid).toBe(false);
      expect(r.observation).toBe(o.observation);
      expect(r.reward).toBe(0);
    }
    const r = env.step(act('search[tea]'));
    const again = env.step(act('search[tea]'));
    expect(again.actionValid).toBe(false);
    expect(again.observation).toBe(r.observation);
  });

  it('horizon 15 ends an episode without a purchase at score 0', () => {
    const env = new ShopEnv();
    env.reset(4);
    let r = env.step(act('look'));
    while (!r.done) r = env.step(act('look'));
    expect(env.stepsTaken()).toBe(15);
    expect(r.won).toBe(false);
    expect(r.score).toBe(0);
  });
});
