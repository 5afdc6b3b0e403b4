/** validity_drop: valid-format / valid-action ratio falling from its running max (spec §4: "valid-format ratio drops sharply"). */
import { Cadence, Episode, Streak, Window, extreme, type Pt } from '../stats';
import { at, level, lazyText } from '../quote';
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
    // `best`: the logged points of the window whose mean is the best level so far (the message names its span and
    // the alert cites its highest point).
    const st = KEYS.map(() => ({
      cad: new Cadence(),
      win: new Window(c.smooth),
      max: -Infinity,
      best: [] as Pt[],
      n: 0,
      streak: new Streak(),
      ep: new Episode('down'),
    }));
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
            s.best = s.win.points();
          }
          s.win.push(v, rec.step);
          s.ep.push(rec.step, v);
          s.n++;
          const sm = s.win.mean();
          if (s.n >= minSteps && s.win.full && sm > s.max) {
            s.max = sm;
            s.best = s.win.points();
          }
          const drop = s.max - sm;
          const fell = Number.isFinite(drop) && drop >= c.warnDrop;
          if (fell) s.ep.hold(s.win.size, (x) => x <= s.max - c.warnDrop);
          else s.ep.end();
          const n = s.streak.update(fell);
          if (n < s.cad.points(c.patience)) return;
          const what = key === 'episode/valid_format_ratio' ? 'Valid-format ratio' : 'Valid-action ratio';
          const top = extreme(s.best, 'up')!;
          const low = s.ep.extreme!;
          const last = { step: rec.step, value: v };
          // Snapshots: the window moves on and the best is replaced (not changed) before the text may be built.
          const pts = s.win.points();
          const { max, best } = s;
          out.push({
            metric: key,
            severity: drop >= c.criticalDrop ? 'critical' : 'warning',
            message: lazyText(
              () =>
                `${what} ${level(key, sm, pts)}, down ${Math.round(drop * 100)} percentage points from its best ${level(key, max, best)}${best.length > 1 ? ` (highest ${at(key, top)})` : ''}; ${low.step !== last.step ? `lowest ${at(key, low)}, ` : ''}latest ${at(key, last)}.`,
            ),
            hint: key === 'episode/valid_format_ratio' ? hints.formatLoss : hints.admissibleLoss,
            peak: top,
            threshold: s.max - c.warnDrop,
            onset: s.ep.onset,
            quotes: [top, low, last],
          });
        });
        return out;
      },
    };
  },
};
