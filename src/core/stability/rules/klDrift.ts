/** kl_drift: the update drifting off-policy (PPO KL) or far from the reference policy (KL loss). */
import { Baseline, Cadence, Episode, Streak, Window, fmt } from '../stats';
import { at, firstPoints, level, lazyText } from '../quote';
import { finite, type Finding, type RuleDef } from '../types';

const PPO_KL = 'actor/ppo_kl';
const KL_LOSS = 'actor/kl_loss';

export const klDriftRule: RuleDef = {
  id: 'kl_drift',
  title: 'KL drift',
  description:
    'The new policy moves far from the behaviour policy within a step (PPO KL), or far from the reference policy over training (KL loss).',
  metrics: [PPO_KL, KL_LOSS],
  needs: { anyOf: [PPO_KL, KL_LOSS] },
  enabled: (c) => c.klDrift.enabled,
  create(cfg, hints) {
    const c = cfg.klDrift;
    const ppoWin = new Window(c.smooth);
    const ppoStreak = new Streak();
    const ppoEp = new Episode('up', Math.abs);
    const klBase = new Baseline(c.baselineSteps);
    const klWin = new Window(c.smooth);
    const klStreak = new Streak();
    const klEp = new Episode('up');
    const ppoCad = new Cadence();
    const klCad = new Cadence();
    return {
      feed(rec) {
        const out: Finding[] = [];
        const p = finite(rec, PPO_KL);
        if (p !== undefined) {
          ppoCad.push(rec.step);
          ppoWin.resize(ppoCad.points(c.smooth));
          // |KL|: verl's k1 estimate can come out negative; its size is the drift.
          ppoWin.push(Math.abs(p), rec.step);
          ppoEp.push(rec.step, p);
          const sm = ppoWin.mean();
          const over = ppoWin.full && sm > c.ppoKlWarn;
          if (over) ppoEp.hold(ppoWin.size, (v) => v > c.ppoKlWarn);
          else ppoEp.end();
          if (ppoStreak.update(over) >= ppoCad.points(c.patience)) {
            const top = ppoEp.extreme!;
            const last = { step: rec.step, value: p };
            const pts = ppoWin.points();
            const peakText = lazyText(() =>
              top.step !== last.step ? `; highest ${at(PPO_KL, top)}, latest ${at(PPO_KL, last)}` : `; ${at(PPO_KL, last)}`,
            );
            out.push({
              metric: PPO_KL,
              severity: sm > c.ppoKlCritical ? 'critical' : 'warning',
              message: lazyText(
                () =>
                  `PPO KL (old‖new) ${level(PPO_KL, sm, pts, 'nats per token')}, above the limit ${fmt(c.ppoKlWarn)}${peakText()}: updates drift far off-policy.`,
              ),
              hint: hints.klStep,
              peak: top,
              threshold: c.ppoKlWarn,
              onset: ppoEp.onset,
              quotes: [top, last],
            });
          }
        }
        const k = finite(rec, KL_LOSS);
        if (k !== undefined) {
          klCad.push(rec.step);
          klBase.resize(klCad.points(c.baselineSteps));
          klWin.resize(klCad.points(c.smooth));
          klBase.push(k);
          klWin.push(k, rec.step);
          klEp.push(rec.step, k);
          const b = klBase.get();
          if (b !== null && klWin.full) {
            const sm = klWin.mean();
            const limit = Math.max(c.klLossFloor, c.klLossFactor * b);
            const over = sm > limit;
            if (over) klEp.hold(klWin.size, (v) => v > limit);
            else klEp.end();
            if (klStreak.update(over) >= klCad.points(c.patience)) {
              const top = klEp.extreme!;
              const last = { step: rec.step, value: k };
              const pts = klWin.points();
              const baseN = klBase.n;
              const peakText = lazyText(() =>
                top.step !== last.step ? `; highest ${at(KL_LOSS, top)}, latest ${at(KL_LOSS, last)}` : `; ${at(KL_LOSS, last)}`,
              );
              out.push({
                metric: KL_LOSS,
                severity: sm > 4 * limit ? 'critical' : 'warning',
                message: lazyText(
                  () =>
                    `KL to the reference policy ${level(KL_LOSS, sm, pts)}, above the limit ${fmt(limit)} (baseline ${fmt(b)}, ${firstPoints(baseN)})${peakText()}.`,
                ),
                hint: hints.klDrift,
                peak: top,
                threshold: limit,
                onset: klEp.onset,
                quotes: [top, last],
              });
            }
          }
        }
        return out;
      },
    };
  },
};
