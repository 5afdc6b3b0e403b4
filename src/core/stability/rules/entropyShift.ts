/**
 * entropy_shift: policy entropy collapsing toward zero or blowing up against the run's own baseline.
 *
 * A fall alone is not a collapse (healthy long runs lose an order of magnitude while the score rises): it fires
 * when the entropy crashed within `crashSteps`, or when a sign from signs.ts (dead gradient, identical-return
 * groups, score or format falling, responses at the cap) says learning stopped; with a sign it is critical.
 */
import { Baseline, Cadence, Episode, Streak, Window, fmt } from '../stats';
import { at, firstPoints, level as smoothed, lazyText } from '../quote';
import { CollapseSigns } from '../signs';
import { finite, type RuleDef } from '../types';

const KEY = 'actor/entropy';

export const entropyShiftRule: RuleDef = {
  id: 'entropy_shift',
  title: 'Entropy collapse or blow-up',
  description:
    'Token entropy crashing far below its starting level together with a sign that learning stopped (the policy stops exploring), or far above it (the output distribution is being destroyed).',
  metrics: [
    KEY,
    'actor/grad_norm',
    'filter/zero_variance_share',
    'episode/valid_format_ratio',
    'episode/valid_action_ratio',
    'episode/success_rate',
    'episode/score_mean',
    'episode/reward_mean',
    'response_length/clip_ratio',
  ],
  needs: { allOf: [KEY] },
  enabled: (c) => c.entropyShift.enabled,
  create(cfg, hints) {
    const c = cfg.entropyShift;
    const cad = new Cadence();
    const base = new Baseline(c.baselineSteps);
    const win = new Window(c.smooth);
    /** Smoothed values of the last crashSteps, for "crashed recently". */
    const recent: Array<{ step: number; sm: number }> = [];
    const signs = new CollapseSigns(cfg);
    const low = new Streak();
    const high = new Streak();
    let crashed = false;
    const lowEp = new Episode('down');
    const highEp = new Episode('up');
    // A message's parts: what they quote is fixed when a finding is made (the window moves on), the text is built
    // only when the alert's text is read (types.ts).
    const parts = (sm: number, b: number) => {
      const pts = win.points();
      const baseN = base.n;
      return {
        mean: lazyText(() => smoothed(KEY, sm, pts)),
        baseline: lazyText(() => `its baseline ${fmt(b)} nats (${firstPoints(baseN)})`),
      };
    };
    return {
      feed(rec) {
        signs.feed(rec);
        const v = finite(rec, KEY);
        if (v === undefined) return [];
        cad.push(rec.step);
        base.resize(cad.points(c.baselineSteps));
        win.resize(cad.points(c.smooth));
        base.push(v);
        win.push(v, rec.step);
        lowEp.push(rec.step, v);
        highEp.push(rec.step, v);
        const sm = win.mean();
        while (recent.length > 0 && recent[0].step < rec.step - c.crashSteps) recent.shift();
        const level = recent.reduce((m, p) => Math.max(m, p.sm), -Infinity);
        // Recorded before the window is full too: a sparse run's first point is the level it crashed from.
        recent.push({ step: rec.step, sm });
        const b = base.get();
        if (b === null || b <= 0 || !win.full) return [];
        const patience = cad.points(c.patience);
        const isLow = sm < c.collapseFrac * b;
        if (!isLow) crashed = false;
        else if (sm < c.collapseFrac * level) crashed = true;
        const held = signs.current();
        const last = { step: rec.step, value: v };
        const collapsing = isLow && (crashed || held.length > 0);
        if (collapsing) lowEp.hold(win.size, (x) => x < c.collapseFrac * b);
        else lowEp.end();
        if (low.update(collapsing) >= patience) {
          const why = held.length > 0 ? `, together with ${held.join(', ')}` : `, crashed within ${c.crashSteps} steps`;
          const bottom = lowEp.extreme!;
          const { mean, baseline } = parts(sm, b);
          return [
            {
              metric: KEY,
              severity: held.length > 0 || sm < (c.collapseFrac / 5) * b ? 'critical' : 'warning',
              message: lazyText(
                () =>
                  `Entropy collapsed: ${mean()}, below ${fmt(c.collapseFrac)}× ${baseline()}${why}; ${bottom.step !== last.step ? `lowest ${at(KEY, bottom)}, ` : ''}latest ${at(KEY, last)}. The policy has stopped exploring.`,
              ),
              hint: hints.entropyCollapse,
              peak: bottom,
              threshold: c.collapseFrac * b,
              onset: lowEp.onset,
              quotes: [bottom, last],
            },
          ];
        }
        const warnHigh = sm > c.blowupWarnFactor * b && sm > b + c.blowupWarnNats;
        const warnLevel = Math.max(c.blowupWarnFactor * b, b + c.blowupWarnNats);
        if (warnHigh) highEp.hold(win.size, (x) => x > warnLevel);
        else highEp.end();
        if (high.update(warnHigh) >= patience) {
          const blown = sm > c.blowupFactor * b && sm > b + c.blowupMinNats;
          const top = highEp.extreme!;
          const { mean, baseline } = parts(sm, b);
          const tail = lazyText(() => `${top.step !== last.step ? `; highest ${at(KEY, top)}` : ''}; latest ${at(KEY, last)}`);
          return [
            {
              metric: KEY,
              severity: blown ? 'critical' : 'warning',
              message: blown
                ? lazyText(
                    () => `Entropy blew up: ${mean()}, above ${fmt(c.blowupFactor)}× ${baseline()}${tail()}. Outputs are turning to noise.`,
                  )
                : lazyText(() => `Entropy is drifting up: ${mean()}, above ${fmt(c.blowupWarnFactor)}× ${baseline()}${tail()}.`),
              hint: hints.entropyBlowup,
              peak: top,
              threshold: warnLevel,
              onset: highEp.onset,
              quotes: [top, last],
            },
          ];
        }
        return [];
      },
    };
  },
};
