/**
 * The pressure ladder: named levels `training.pressure = 0…4` that push training off-policy in
 * steps with the SAME knobs for every preset — sequential updates per rollout batch (optim.miniBatchRows,
 * optim.epochs), the learning rate (optim.lr) and the policy lag (rollout.policyLag: rollouts by the policy of
 * k steps ago). A preset's own values (its clip ranges, advantage, filtering) are never changed by a level, so
 * a ladder compares methods under identical pressure.
 *
 * The levels are calibrated on sokoban (nano, B·G = 4·4, 40 steps, one seed per cell, 2026-12-05): at 32-row
 * mini-batches and lr 3e-4 CISPO collapsed at step 25 while GRPO and SAMPO held; at lr 5e-4 CISPO collapsed at
 * step 10 and the others held; 16-row mini-batches at lr 5e-4 broke GRPO and CISPO alike by step 5, and lr 1e-3
 * by step 2 — so the separating range is 32 rows × lr 3e-4…5e-4, where levels 1–3 sit, with level 4 as the
 * ceiling. The ladder study (resources/studies/…) measures it over seeds; a level's knobs are the config's own
 * fields, so a run records exactly what it trained with.
 */
import type { FieldValue } from './fields';

export interface PressureLevel {
  readonly level: number;
  /** The knobs this level sets (applied after the preset, before the user's own overrides). */
  readonly overrides: Readonly<Record<string, FieldValue>>;
  /** One line: what the level does and why it sits where it does. */
  readonly why: string;
}

const knobs = (miniBatchRows: number, epochs: number, lr: number, policyLag: number) => ({
  'optim.miniBatchRows': miniBatchRows,
  'optim.epochs': epochs,
  'optim.lr': lr,
  'rollout.policyLag': policyLag,
});

export const PRESSURE_LEVELS: readonly PressureLevel[] = [
  {
    level: 0,
    overrides: knobs(64, 1, 1e-4, 0),
    why: 'The lab default: few sequential updates per batch at the calibrated lr, on-policy rollouts — no collapse seen in 40 steps.',
  },
  {
    level: 1,
    overrides: knobs(32, 1, 3e-4, 0),
    why: 'Twice the sequential updates at 3× the step: later mini-batches drift off-policy; tolerant clipping (CISPO) lost one seed at step 25.',
  },
  {
    level: 2,
    overrides: knobs(32, 1, 5e-4, 0),
    why: 'The same updates at 5× the step: the calibration point where CISPO collapsed by step 10 while GRPO and SAMPO held.',
  },
  {
    level: 3,
    overrides: knobs(32, 1, 5e-4, 1),
    why: 'Level 2 with rollouts one step stale, as one-step-off asynchronous trainers sample: off-policy before the first update.',
  },
  {
    level: 4,
    overrides: knobs(16, 1, 5e-4, 1),
    why: 'The ceiling: 16-row mini-batches at lr 5e-4 broke GRPO and CISPO alike by step 5 even on-policy; here one step stale too.',
  },
];

export function pressureLevel(level: number): PressureLevel {
  const l = PRESSURE_LEVELS.find((p) => p.level === level);
  if (!l) throw new RangeError(`training.pressure = ${level}: known levels are ${PRESSURE_LEVELS.map((p) => p.level).join(', ')}`);
  return l;
}
