/** validity_drop: valid-format / valid-action ratio falling from its running max (spec §4: "valid-format ratio drops sharply"). */
import { Cadence, Streak, Window, fmt, pct } from '../stats';
import { finite, type Finding, type RuleDef } from '../types';

const KEYS = ['episode/valid_format_ratio', 'episode/valid_action_ratio'] as const;

export const validityDropRule: RuleDef = {
  id: 'validity_drop',
  title: 'Format / action validity falling',
  description: 'The share of well-formed responses (or admissible actions) falls from its best: the policy is losing the output format.',
  metrics: KEYS,
  needs: { anyOf: KEYS },
  enabled: (c) => c.validityDrop.enabled,
  create(cfg, hints) {
    const c = cfg.validityDrop;
    // `maxStep`: where the best smoothed level was reached (the alert cites it as its peak).
    const st = KEYS.map(() => ({ cad: new Cadence(), win: new Window(c.smooth), max: -Infinity, maxStep: 0, prevStep: 0, n: 0, streak: new Streak() }));
    return {
      feed(rec) {
        const out: Finding[] = [];
        KEYS.forEach((key, i) => {
          const v = finite(rec, key);
          if (v === undefined) return;
          const s = st[i];
          s.cad.push(rec.step);
          s.win.resize(s.cad.points(c.smooth));
          const minSteps = s.cad.points(c.minSteps);
          // A window that just shrank to a sparse run's interval may hold earlier points that count toward the best.
          if (s.n >= minSteps && s.win.full && s.win.mean() > s.max) {
            s.max = s.win.mean();
            // The window's mean before this point is the level at the previous logged step.
            s.maxStep = s.prevStep;
          }
          s.win.push(v);
          s.prevStep = rec.step;
          s.n++;
          const sm = s.win.mean();
          if (s.n >= minSteps && s.win.full && sm > s.max) {
            s.max = sm;
            s.maxStep = rec.step;
          }
          const drop = s.max - sm;
          const n = s.streak.update(Number.isFinite(drop) && drop >= c.warnDrop);
          if (n < s.cad.points(c.patience)) return;
          const what = key === 'episode/valid_format_ratio' ? 'Valid-format ratio' : 'Valid-action ratio';
          out.push({
            metric: key,
            severity: drop >= c.criticalDrop ? 'critical' : 'warning',
            message: `${what} fell to ${pct(sm)} (mean of last ${s.win.size} steps) from its best ${pct(s.max)} — down ${fmt(drop)} at step ${rec.step}.`,
            hint: key === 'episode/valid_format_ratio' ? hints.formatLoss : hints.admissibleLoss,
            peak: { step: s.maxStep, value: s.max },
            threshold: s.max - c.warnDrop,
          });
        });
        return out;
      },
    };
  },
};
