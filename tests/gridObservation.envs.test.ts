/**
 * The trajectory viewer draws grid worlds from their stored text observation (src/shared/gridObservation.ts)
 * with the catalog's legend (EnvInfo.gridLegend). Here the real envs check that the text parses back to exactly the
 * picture the env itself renders, over many generated boards and moves.
 */
import { describe, expect, it } from 'vitest';
import { ENV_CATALOG, createEnv, listEnvs } from '../src/core/envs';
import { parseGridObservation } from '../src/shared/gridObservation';

describe('grid observations parse back to the env picture', () => {
  for (const name of ['sokoban', 'frozenlake'] as const) {
    it(`${name}: every observation of 20 episodes parses to the env's own cells`, () => {
      const legend = listEnvs().find((e) => e.name === name)?.gridLegend ?? null;
      expect(legend).not.toBeNull();
      const env = createEnv(name);
      const moves = ['up', 'right', 'down', 'left'];
      let checked = 0;
      for (let seed = 0; seed < 20; seed++) {
        let obs = env.reset(seed).observation;
        for (let t = 0; t < 6; t++) {
          const pic = env.render().picture;
          expect(pic).not.toBeNull();
          expect(parseGridObservation(obs, legend)).toEqual(pic?.cells);
          checked++;
          const step = env.step(`<think>t</think><action>${moves[(seed + t) % 4]}</action>`);
          if (step.done) break;
          obs = step.observation;
        }
      }
      expect(checked).toBeGreaterThan(20);
    });
  }

  it('text worlds carry no legend and their observations are not read as grids', () => {
    for (const e of ENV_CATALOG.filter((x) => x.gridLegend === null)) {
      const env = createEnv(e.name);
      const first = env.reset(3);
      expect(env.render().picture).toBeNull();
      expect(parseGridObservation(first.observation, ENV_CATALOG[0].gridLegend)).toBeNull();
    }
  });
});
