/**
 * An imported run's alerts carry hints in its framework's terms (hints.ts sourceRecipeOf): a verl
 * console log whose echoed Hydra config names its settings, and a TRL trainer_state.json — both imported for
 * real, their alerts raised by the importer's detector and by `runs.detect` / `arlarena check` (recipeForRun).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { detectAlerts } from '../../core/stability/detector';
import { recipeForRun } from '../../core/stability/hints';
import type { Alert } from '../../shared/api';
import { RunStore } from '../store/runStore';
import { importLogs } from './importLogs';

let dir: string;
let store: RunStore;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-source-hints-'));
  store = await RunStore.open(join(dir, 'data'));
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const LAB_ONLY =
  /SAMPO|GRPO_SM|<think>|<action>|algorithm\.kl\.|algorithm\.entropyCoeff|optim\.gradClip|compute\.logProbEngine|rollout\.groupSize/;

/** A verl PPO run's console: the Hydra config verl prints before training, then steps whose loss turns NaN. */
function verlLog(): string {
  const cfg =
    "{'actor_rollout_ref': {'actor': {'clip_ratio': 0.2, 'entropy_coeff': 0.001, 'grad_clip': 1.0, 'kl_loss_coef': 0.001, 'optim': {'lr': 1e-06}, 'use_kl_loss': False}, 'rollout': {'n': 1, 'temperature': 1.0}}, 'algorithm': {'adv_estimator': 'gae', 'kl_ctrl': {'kl_coef': 0.001}, 'use_kl_in_reward': False}, 'data': {'max_response_length': 512, 'train_files': '~/data/gsm8k/train.parquet'}}";
  const lines = [`(main_task pid=1) ${cfg}`];
  for (let i = 1; i <= 40; i++) {
    lines.push(
      `(main_task pid=1) step:${i} - actor/entropy:${(0.6 - i * 0.002).toFixed(4)} - actor/pg_loss:${i >= 30 ? 'nan' : (0.05 - i * 0.001).toFixed(4)} - actor/grad_norm:${i >= 30 ? 'nan' : '0.8'} - critic/score/mean:${(0.1 + i * 0.01).toFixed(3)}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** TRL's trainer_state.json as the HF Trainer writes it (indent 2, bare NaN) for a GRPO run whose loss turns NaN. */
function trainerState(): string {
  const logHistory = Array.from({ length: 30 }, (_, i) => {
    const step = (i + 1) * 10;
    const bad = i >= 20;
    return {
      completion_length: 60,
      epoch: Number((step / 300).toFixed(3)),
      grad_norm: bad ? '__NaN__' : 0.5,
      kl: 0.0004,
      learning_rate: 1e-5,
      loss: bad ? '__NaN__' : Number((0.02 - i * 0.0005).toFixed(4)),
      reward: Number((0.2 + i * 0.01).toFixed(3)),
      step,
    };
  });
  const state = {
    best_metric: null,
    best_model_checkpoint: null,
    epoch: 1.0,
    eval_steps: 500,
    global_step: 300,
    is_hyper_param_search: false,
    log_history: logHistory,
    logging_steps: 10,
    max_steps: 300,
  };
  return JSON.stringify(state, null, 2).replaceAll('"__NaN__"', 'NaN');
}

async function importOne(name: string, text: string): Promise<{ id: string; alerts: Alert[] }> {
  const p = join(dir, name);
  await writeFile(p, text);
  const r = await importLogs(store, [p]);
  expect(r.runIds).toHaveLength(1);
  const rec = (await store.getRun(r.runIds[0]))!;
  return { id: rec.id, alerts: rec.alerts };
}

describe('hints on imported runs', () => {
  it("a verl run: the importer's alert names verl's settings with the echoed values, and runs.detect says the same", async () => {
    const { id, alerts } = await importOne('verl_ppo.log', verlLog());
    const rec = (await store.getRun(id))!;
    expect(rec.source?.framework).toBe('verl');
    const nonFinite = alerts.find((a) => a.rule === 'non_finite');
    expect(nonFinite, JSON.stringify(alerts.map((a) => a.rule))).toBeDefined();
    expect(nonFinite!.hint).toContain('actor_rollout_ref.actor.optim.lr, now 0.000001');
    expect(nonFinite!.hint).toContain('actor_rollout_ref.actor.grad_clip, now 1');
    for (const a of alerts) expect(a.hint).not.toMatch(LAB_ONLY);
    // The stored-run path (runs.detect, arlarena check) fits the same recipe from the record.
    const again = detectAlerts(id, await store.readMetrics(id), undefined, recipeForRun(rec));
    expect(again.find((a) => a.rule === 'non_finite')!.hint).toBe(nonFinite!.hint);
  });

  it("a TRL run: hints in GRPOConfig's names, no lab wording", async () => {
    const { id, alerts } = await importOne('trainer_state.json', trainerState());
    const rec = (await store.getRun(id))!;
    expect(rec.source?.framework).toBe('trl');
    const nonFinite = alerts.find((a) => a.rule === 'non_finite');
    expect(nonFinite, JSON.stringify(alerts.map((a) => a.rule))).toBeDefined();
    expect(nonFinite!.hint).toContain('learning_rate');
    expect(nonFinite!.hint).toContain('max_grad_norm');
    for (const a of alerts) expect(a.hint).not.toMatch(LAB_ONLY);
    const again = detectAlerts(id, await store.readMetrics(id), undefined, recipeForRun(rec));
    expect(again.map((a) => a.hint)).toEqual(alerts.map((a) => a.hint));
  });
});
