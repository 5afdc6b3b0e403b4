/**
 * The pressure ladder: named levels `training.pressure = 0…4` that push training off-policy in
 * steps with the SAME knobs for every preset — sequential updates per rollout batch (optim.miniBatchRows,
 * optim.epochs), the learning rate (optim.lr) and the policy lag (rollout.policyLag: rollouts by the policy of
 * k steps ago). A preset's own values (its clip ranges, advantage, filtering) are never changed by a level, so
 * a ladder compares methods under identical pressure.
 *
 * The levels are a first calibration from what was observed on sokoban (nano, B·G = 4·4): level 0 is the lab's
 * default, where the committed 40-step study saw no collapse; 16-row mini-batches at lr 1e-3 separated methods
 * on one seed; 8-row mini-batches at lr 1e-3 broke every method. The ladder study (resources/studies/…) measures
 * where collapse actually starts and may move them; a level's knobs are the config's own fields, so a run
 * records exactly what it trained with.
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
    why: "Twice the sequential updates at 3× the step: later mini-batches drift off-policy, as the paper's sequential mini-batches do.",
  },
  {
    level: 2,
    overrides: knobs(16, 1, 5e-4, 0),
    why: 'Four times the updates at 5× the step: where tolerant clipping is expected to start losing the format.',
  },
  {
    level: 3,
    overrides: knobs(16, 1, 1e-3, 1),
    why: 'The one-seed separating point (16-row mini-batches, lr 1e-3) plus rollouts one step stale, as one-step-off async trainers.',
  },
  {
    level: 4,
    overrides: knobs(8, 2, 1e-3, 2),
    why: 'Past the documented breaking point (8-row mini-batches at lr 1e-3 broke every method), two epochs, two steps of lag: the ceiling.',
  },
];

export function pressureLevel(level: number): PressureLevel {
  const l = PRESSURE_LEVELS.find((p) => p.level === level);
  if (!l) throw new RangeError(`training.pressure = ${level}: known levels are ${PRESSURE_LEVELS.map((p) => p.level).join(', ')}`);
  return l;
}
