/**
 * Live follow of a text log shows its newest step while the log is quiet (the parser's flushPending), instead
 * of waiting for the next step's line, and lines for that step arriving later are counted, not stored twice.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SKIP_LATE_VALUES } from '../../core/formats/steps';
import { RunStore } from '../store/runStore';
import { LogFollower } from './follow';
import { until } from '../testing/until';

let dir: string;
let store: RunStore;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-follow-flush-'));
  store = await RunStore.open(join(dir, 'data'));
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const train = (step: number) =>
  `step:${step} - actor/entropy:${(0.5 - step * 0.01).toFixed(3)} - actor/grad_norm:0.250 - critic/score/mean:${(0.1 * step).toFixed(3)}\n`;

describe('follow: a quiet text log shows its newest step', () => {
  it('verl console: the last step is stored before any later line, and a late validation line for it is counted, not a second copy', async () => {
    const p = join(dir, 'verl.log');
    await writeFile(p, `some launcher noise\n${train(1)}${train(2)}`);
    const published: number[] = [];
    const f = await LogFollower.start(store, p, { pollMs: 30, onRecords: (_id, recs) => published.push(...recs.map((r) => r.step)) });
    try {
      const id = f.runId;
      // Step 2 has no later line: only the quiet-poll flush can store it.
      await until('step 2 stored while the log is quiet', async () => (await store.readMetrics(id)).some((r) => r.step === 2));
      const early = (await store.readMetrics(id)).find((r) => r.step === 2)!;
      expect(early.values['actor/entropy']).toBeCloseTo(0.48, 10);
      // Its validation line arrives after the flush, then the run goes on.
      await appendFile(p, `step:2 - val-core/openai/gsm8k/reward/mean@1:0.700\n${train(3)}`);
      await until('step 3 stored', async () => (await store.readMetrics(id)).some((r) => r.step === 3));
      const info = await f.stop();
      expect(info.status).toBe('completed');
      const recs = await store.readMetrics(id);
      expect(recs.map((r) => r.step)).toEqual([1, 2, 3]);
      expect(published).toEqual([1, 2, 3]);
      expect(recs[1].values['val/score_mean']).toBeUndefined();
      const rec = (await store.getRun(id))!;
      expect(rec.source!.skipped[SKIP_LATE_VALUES]).toBe(1);
    } finally {
      await f.stop();
    }
  });
});
