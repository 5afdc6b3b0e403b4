/**
 * The trainer logs the response-diversity keys the detector's response_collapse rule reads:
 * finite and in range on a tiny real run (responseDiversity itself is checked by hand in diversity.test.ts).
 */
import { beforeAll, expect, it } from 'vitest';
import { runTraining } from '../src/core/training/trainer';
import { deps, recorder, tinyConfig, useWasm } from './tinyTrainer';

beforeAll(useWasm);

it('a tiny GRPO run logs response/identical_share, response/distinct_2 and response/prompt_mi every step', async () => {
  const { hooks, rec } = recorder();
  const res = await runTraining(tinyConfig('grpo', {}), deps(), hooks);
  expect(res.status).toBe('completed');
  expect(rec.metrics.length).toBeGreaterThan(0);
  for (const m of rec.metrics) {
    const v = m.values;
    expect(v['response/identical_share']).toBeGreaterThan(0);
    expect(v['response/identical_share']).toBeLessThanOrEqual(1);
    // distinct-2 is NaN only when no response has two tokens; prompt MI only with a single prompt.
    for (const k of ['response/distinct_2', 'response/prompt_mi']) if (!Number.isNaN(v[k])) expect(v[k]).toBeGreaterThanOrEqual(0);
    expect(v['response/distinct_2']).toBeLessThanOrEqual(1);
    expect(Number.isFinite(v['response/identical_share'])).toBe(true);
  }
});
