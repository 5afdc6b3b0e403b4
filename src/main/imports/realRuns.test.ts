/**
 * Every real public training log in ../shared/data/real-runs through importLogs, with the true step counts
 * and values its README states (nobody here wrote these files; see tests/support/realRuns.ts).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeRealRuns } from '../../../tests/support/realRuns';
import { RunStore } from '../store/runStore';
import { importLogs } from './importLogs';
import { SKIP_EMPTY_TB_DIR } from './importLogs';

let dir: string;
let store: RunStore;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-real-import-'));
  store = await RunStore.open(dir);
});
afterAll(async () => {
  await store?.close();
  await rm(dir, { recursive: true, force: true });
});

async function stepsOf(runId: string): Promise<number[]> {
  return (await store.readMetrics(runId)).map((r) => r.step);
}

async function valueAt(runId: string, step: number, key: string): Promise<number | undefined> {
  return (await store.readMetrics(runId)).find((r) => r.step === step)?.values[key];
}

/** [file below real-runs, format, runs as [first step, last step, count] in import order]. README §1–§5. */
const TABLE: Array<[string, string, Array<[number, number, number]>]> = [
  ['verl-console/Qwen2.5-0.5B-bsz256_2-prompt1024-resp512-0.567.log', 'verl-console', [[0, 434, 435]]],
  ['verl-console/Qwen2.5-0.5B-bsz256_2-prompt512-resp256-0.538.log', 'verl-console', [[0, 434, 435]]],
  ['verl-console/gemma-2-2b-it-ppo-bsz512_4-prompt1024-resp-512-0.640.log', 'verl-console', [[0, 105, 106]]],
  ['verl-console/gemma-2-2b-it-sft-0.411.log', 'verl-console', [[0, 58, 59]]],
  ['verl-console/dstack-configs_verl_demo.log', 'verl-console', [[101, 435, 335]]],
  ['verl-console/play-verl_verl_grpo_qwen2.5b_8gpu.log', 'verl-console', [[1, 435, 435]]],
  ['verl-console/play-verl_verl_ppo_qwen2.5b_8gpu.log', 'verl-console', [[1, 45, 45]]],
  ['verl-console/play-verl_verl_qwen2_7b_min.log', 'verl-console', [[1, 140, 140]]],
  ['verl-console/play-verl_verl_qwen2_7b_recommended.log', 'verl-console', [[1, 70, 70]]],
  ['verl-jsonl/HanlinDu-verl_verl_examples_gsm8k.jsonl', 'verl-jsonl', [[0, 3, 4]]],
  [
    'wandb-csv/deep-grpo/training_dynamics/entropy.csv',
    'wandb-csv',
    [
      [1, 2958, 2958],
      [1, 4595, 4595],
    ],
  ],
  [
    'wandb-csv/deep-grpo/training_dynamics/response_length.csv',
    'wandb-csv',
    [
      [1, 2958, 2958],
      [1, 4595, 4595],
    ],
  ],
  ['wandb-csv/deep-grpo/tree_methods_training_instability/entropy.csv', 'wandb-csv', [[1, 927, 927]]],
  ['wandb-csv/deep-grpo/tree_methods_training_instability/test_reward.csv', 'wandb-csv', [[0, 925, 186]]],
  ['tensorboard/trl-grpo_qwen2-0.5b_numinamath/checkpoint-113_trainer_state.json', 'trainer-state', [[10, 110, 11]]],
  ['other-console/deepspeed-chat_step3_actor_opt-1.3b_critic_opt-350m_globalBatchSize64.log', 'deepspeed-chat', [[0, 476, 477]]],
];

describeRealRuns('importLogs on the real runs', (root) => {
  const ids = new Map<string, string[]>();

  it.each(TABLE)('%s imports as %s with its true steps', async (rel, format, runs) => {
    const r = await importLogs(store, [join(root, rel)]);
    expect(r.format).toBe(format);
    expect(r.runIds).toHaveLength(runs.length);
    expect(r.steps).toBe(runs.reduce((n, [, , c]) => n + c, 0));
    for (const [i, [first, last, count]] of runs.entries()) {
      const steps = await stepsOf(r.runIds[i]);
      expect([steps[0], steps.at(-1), steps.length]).toEqual([first, last, count]);
      const rec = (await store.getRun(r.runIds[i]))!;
      expect(rec).toMatchObject({ kind: 'imported', status: 'completed', step: last, source: { format, following: false } });
      expect(rec.source!.sha256[0]).toMatch(/^[0-9a-f]{64}$/);
    }
    ids.set(rel, r.runIds);
  });

  it('verl 1a: values, mapped keys, the echoed config (preset gae, env gsm8k) and no critical alert on a healthy run', async () => {
    const [id] = ids.get(TABLE[0][0])!;
    expect(await valueAt(id, 16, 'actor/grad_norm')).toBeCloseTo(65.958, 3);
    expect(await valueAt(id, 434, 'episode/score_mean')).toBeCloseTo(0.707, 3);
    const rec = (await store.getRun(id))!;
    expect(rec.source!.keyMap).toMatchObject({
      'actor/entropy': 'actor/entropy_loss',
      'actor/grad_norm': 'actor/grad_norm',
      'episode/score_mean': 'critic/score/mean',
    });
    expect(rec.source!.framework).toBe('verl');
    expect(rec).toMatchObject({ preset: 'gae', env: 'gsm8k', seed: expect.any(Number) });
    expect((rec.config as { algorithm?: { adv_estimator?: string } }).algorithm?.adv_estimator).toBe('gae');
    // Source keys the catalog does not know are kept under their own names.
    expect(await store.metricKeys(id)).toContain('critic/vf_loss');
    expect(rec.alerts.filter((a) => a.severity === 'critical')).toEqual([]);
  });

  it('verl 1e starts at step 101, and 1c merges its step-0 validation line into the training step', async () => {
    const [e] = ids.get('verl-console/dstack-configs_verl_demo.log')!;
    expect((await stepsOf(e))[0]).toBe(101);
    const [c] = ids.get('verl-console/gemma-2-2b-it-ppo-bsz512_4-prompt1024-resp-512-0.640.log')!;
    const step0 = (await store.readMetrics(c))[0];
    // Its pre-training validation line (`step:0 - test_score/openai/gsm8k:0.521`) and the training line are one step.
    expect(step0.values['val/score_mean']).toBeCloseTo(0.521, 3);
    expect(step0.values['actor/grad_norm']).toBeDefined();
  });

  it('verl JSONL: the NaN (null) pg_loss at step 3 is kept, and the detector flags the non-finite values', async () => {
    const [id] = ids.get('verl-jsonl/HanlinDu-verl_verl_examples_gsm8k.jsonl')!;
    expect(Number.isNaN(await valueAt(id, 3, 'actor/pg_loss'))).toBe(true);
    expect((await store.getRun(id))!.alerts.some((a) => a.rule === 'non_finite')).toBe(true);
  });

  it('W&B CSV: one run per "<run> - " prefix, named after it', async () => {
    const runs = await Promise.all(ids.get('wandb-csv/deep-grpo/training_dynamics/entropy.csv')!.map((id) => store.getRun(id)));
    expect(runs.map((r) => r!.name)).toEqual([
      'entropy.csv · Qwen2.5-0.5B-Instruct-GSM8K-CRPO-sp-p1-b8-gamma2.0-lam1.0-01161659',
      'entropy.csv · qwen2.5-0.5b-instruct-gsm8k-crpo-no-branch',
    ]);
  });

  it("TensorBoard 2a: one event file is one run named by its folder, and agrees with the same run's trainer_state.json", async () => {
    const file =
      'tensorboard/trl-grpo_qwen2-0.5b_numinamath/runs/Apr01_09-57-15_h100x2-nc80-eastus2/events.out.tfevents.1743501588.h100x2-nc80-eastus2';
    const r = await importLogs(store, [join(root, file)]);
    expect(r).toMatchObject({ format: 'tensorboard', steps: 12 });
    const id = r.runIds[0];
    expect(await stepsOf(id)).toEqual([10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 113]);
    expect((await store.getRun(id))!.name).toBe('Apr01_09-57-15_h100x2-nc80-eastus2');
    const [ts] = ids.get('tensorboard/trl-grpo_qwen2-0.5b_numinamath/checkpoint-113_trainer_state.json')!;
    for (const step of [10, 60, 110]) {
      // TensorBoard stores float32: compare at its precision.
      expect(await valueAt(id, step, 'actor/grad_norm')).toBeCloseTo((await valueAt(ts, step, 'actor/grad_norm'))!, 5);
    }
    // The folder holding that file is the same source: already imported.
    const again = await importLogs(store, [join(root, 'tensorboard/trl-grpo_qwen2-0.5b_numinamath')]);
    expect(again).toMatchObject({ runIds: [], duplicateOf: [id] });
  });

  it('TensorBoard 2b folder: one run per directory with scalars; the two aborted launches are counted, not made into runs', async () => {
    const r = await importLogs(store, [join(root, 'tensorboard/trl-grpo-dapo_qwen2.5-vl-3b')]);
    expect(r.format).toBe('tensorboard');
    expect(r.runIds).toHaveLength(1);
    expect(r.skipped[SKIP_EMPTY_TB_DIR]).toBe(2);
    const id = r.runIds[0];
    expect(await stepsOf(id)).toEqual([10, 20, 30]);
    expect((await store.getRun(id))!.name).toBe('trl-grpo-dapo_qwen2.5-vl-3b/runs/Oct22_18-14-56_instance-20251022-125445');
    expect(await valueAt(id, 10, 'actor/entropy')).toBeCloseTo(1.028, 3);
    expect(await valueAt(id, 30, 'actor/entropy')).toBeCloseTo(0.0085, 4);
  });

  it('a second import of a real log is refused by SHA-256 and accepted with again', async () => {
    const rel = TABLE[3][0];
    const dup = await importLogs(store, [join(root, rel)]);
    expect(dup).toMatchObject({ runIds: [], duplicateOf: ids.get(rel) });
    const again = await importLogs(store, [join(root, rel)], { again: true });
    expect(again.runIds).toHaveLength(1);
    expect(again.steps).toBe(59);
  });
});
