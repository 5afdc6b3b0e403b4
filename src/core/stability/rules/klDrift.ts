/** kl_drift: the update drifting off-policy (PPO KL) or far from the reference policy (KL loss). */
import { Baseline, Cadence, Streak, Window, fmt } from '../stats';
import { finite, type Finding, type RuleDef } from '../types';

const PPO_KL = 'actor/ppo_kl';
const KL_LOSS = 'actor/kl_loss';

export const klDriftRule: RuleDef = {
  id: 'kl_drift',
  title: 'KL drift',
  description: 'The new policy moves far from the behaviour policy within a step (PPO KL), or far from the reference policy over training (KL loss).',
  metrics: [PPO_KL, KL_LOSS],
  needs: { anyOf: [PPO_KL, KL_LOSS] },
  enabled: (c) => c.klDrift.enabled,
  create(cfg, hints) {
    const c = cfg.klDrift;
    const ppoWin = new Window(c.smooth);
    const ppoStreak = new Streak();
    const klBase = new Baseline(c.baselineSteps);
    const klWin = new Window(c.smooth);
    const klStreak = new Streak();
    const ppoCad = new Cadence();
    const klCad = new Cadence();
    return {
      feed(rec) {
        const out: Finding[] = [];
        const p = finite(rec, PPO_KL);
        if (p !== undefined) {
          ppoCad.push(rec.step);
          ppoWin.resize(ppoCad.points(c.smooth));
          ppoWin.push(Math.abs(p));
          const sm = ppoWin.mean();
          if (ppoStreak.update(ppoWin.full && sm > c.ppoKlWarn) >= ppoCad.points(c.patience)) {
            out.push({
              metric: PPO_KL,
              severity: sm > c.ppoKlCritical ? 'critical' : 'warning',
              message: `PPO KL (old‖new) is ${fmt(sm)} nats per token (step ${rec.step}), above ${fmt(c.ppoKlWarn)}: updates drift far off-policy.`,
              hint: hints.klStep,
              peak: { step: rec.step, value: sm },
              threshold: c.ppoKlWarn,
            });
          }
        }
        const k = finite(rec, KL_LOSS);
        if (k !== undefined) {
          klCad.push(rec.step);
          klBase.resize(klCad.points(c.baselineSteps));
          klWin.resize(klCad.points(c.smooth));
          klBase.push(k);
          klWin.push(k);
          const b = klBase.get();
          if (b !== null && klWin.full) {
            const sm = klWin.mean();
            const limit = Math.max(c.klLossFloor, c.klLossFactor * b);
            if (klStreak.update(sm > limit) >= klCad.points(c.patience)) {
              out.push({
                metric: KL_LOSS,
                severity: sm > 4 * limit ? 'critical' : 'warning',
                message: `KL to the reference policy reached ${fmt(sm)} nats (step ${rec.step}), above ${fmt(limit)} (baseline ${fmt(b)}).`,
                hint: hints.klDrift,
                peak: { step: rec.step, value: sm },
                threshold: limit,
              });
            }
          }
        }
        return out;
      },
    };
  },
};
