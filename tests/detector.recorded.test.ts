/**
 * The collapse detector on recorded real runs ("detector rules ... on a recorded collapsing run";
 * calibration: "a run that collapses must alert, a stable SAMPO run must not").
 *
 * Fixtures are the metric streams of real runs of this lab on sokoban from the shipped warm start
 * (tests/fixtures/runs/README.md says how each was made):
 *   - cispo-harsh: CISPO under a strongly off-policy setting (8-row mini-batches ≈ 28 sequential updates per step,
 *     lr 1e-3): the valid-format ratio fell from 96 % to under 1 % within three steps while the PPO KL rose to
 *     several nats — the paper's collapse signature (format breaking under tolerant clipping);
 *   - sampo-harsh: SAMPO under the very same setting: format stays ≥ 79 %, PPO KL ≤ 0.13 (held-out success still
 *     fell: the setting is too aggressive for any method, but the format did not break);
 *   - sampo-harsh-val: the same SAMPO run re-made with validations that log their episode count, including one of
 *     the starting policy at step 0;
 *   - sapo-harsh: SAPO under the same setting: format broke like CISPO's, then entropy fell from 0.18 to 0.033 and
 *     the gradient to 0.001 — the policy collapsed onto one malformed answer;
 *   - sampo-main: SAMPO with the laptop defaults, 30 steps: calm.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectAlerts } from '../src/core/stability/detector';
import { ruleCoverage } from '../src/core/stability/coverage';
import { checkAlertMessage } from './support/alertQuotes';
import { recipeOf } from '../src/core/stability/hints';
import { resolveConfig } from '../src/core/config/index';
import type { MetricRecord } from '../src/shared/metrics';
import { decodeMetricRecord } from '../src/main/store/jsonl';

function recorded(name: string): MetricRecord[] {
  const text = readFileSync(join(__dirname, 'fixtures', 'runs', `${name}.metrics.jsonl`), 'utf8');
  // Decoded exactly as the run store reads its metric files (non-finite values are stored as strings).
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => decodeMetricRecord(JSON.parse(l))!);
}

describe('collapse detector on recorded runs', () => {
  it('a collapsing CISPO run raises critical format-validity and KL alerts at the steps where it broke', () => {
    const rows = recorded('cispo-harsh');
    const alerts = detectAlerts('cispo-harsh', rows);
    const format = alerts.find((a) => a.rule === 'validity_drop' && a.metric === 'episode/valid_format_ratio');
    expect(format?.severity).toBe('critical');
    // The format ratio was ≥ 96 % at step 1 and < 1 % by step 3: the alert must not wait long after that.
    expect(format!.firstStep).toBeLessThanOrEqual(6);
    const kl = alerts.find((a) => a.rule === 'kl_drift');
    expect(kl?.severity).toBe('critical');
    expect(format!.hint.length).toBeGreaterThan(20);
    // Responses ran to the limit (clip ratio 0 at step 1, 0.78 at step 4, 0.88 at step 7): the break happens
    // inside the first five steps, so the clip ratio's start must be their lowest share, not their median.
    // Raised at step 7 (its id ends with the step it was raised at; its window opens where the rise began).
    expect(alerts.find((a) => a.rule === 'length_runaway' && a.metric === 'response_length/clip_ratio')?.id).toBe(
      'length_runaway:response_length/clip_ratio:7',
    );
  });

  it('SAMPO under the same harsh setting keeps its format: no validity alert, nothing critical', () => {
    // Not a healthy run: its held-out greedy success fell from the warm start's 38.5 % to 0 % by step 10 (one
    // validation point, so no success-collapse evidence in the stream — see the fixtures README). What the
    // sequence-level bound does keep is the output format, which is what the paper credits it with.
    const alerts = detectAlerts('sampo-harsh', recorded('sampo-harsh'));
    expect(alerts.filter((a) => a.rule === 'validity_drop')).toEqual([]);
    expect(alerts.filter((a) => a.severity === 'critical')).toEqual([]);
  });

  it('the same harsh SAMPO run, validated at step 0: its held-out fall is a critical success-collapse alert', () => {
    // 13/64 at step 0 (the warm start) → 1/64 at step 10: z ≈ 3.4 by the two-proportion test. The format alerts
    // stay quiet, as in the run without the step-0 point.
    const alerts = detectAlerts('sampo-harsh-val', recorded('sampo-harsh-val'));
    const fall = alerts.find((a) => a.rule === 'success_collapse' && a.metric === 'val/success_rate');
    expect(fall).toMatchObject({ severity: 'critical', firstStep: 10 });
    expect(alerts.filter((a) => a.rule === 'validity_drop')).toEqual([]);
  });

  it('a SAPO run that collapses onto one answer raises an entropy-collapse alert as well as the format alert', () => {
    const alerts = detectAlerts('sapo-harsh', recorded('sapo-harsh'));
    const entropy = alerts.find((a) => a.rule === 'entropy_shift' && /collapsed/.test(a.message));
    expect(entropy).toBeDefined();
    // Entropy was ≤ 0.035 from step 6 on: three smoothed steps below a quarter of the baseline by step 10.
    expect(entropy!.firstStep).toBeLessThanOrEqual(10);
    // The crash came with its format gone, so it is critical, and the message says so.
    expect(entropy!.severity).toBe('critical');
    expect(entropy!.message).toMatch(/together with .*valid_format_ratio/);
    expect(alerts.find((a) => a.rule === 'validity_drop')?.severity).toBe('critical');
  });

  it('SAMPO with the laptop defaults raises no alert at all', () => {
    expect(detectAlerts('sampo-main', recorded('sampo-main'))).toEqual([]);
  });

  it('fits each hint to the run: a SAMPO run is not told to try SAMPO, a CISPO run is', () => {
    // The recorded runs' own settings (fixtures/runs/README.md): harsh = lr 1e-3 with 8-row mini-batches.
    const harsh = { 'optim.lr': 1e-3, 'optim.miniBatchRows': 8, 'training.validateEvery': 10 };
    const sampo = recipeOf(resolveConfig('sampo', 'sokoban', harsh).config);
    const cispo = recipeOf(resolveConfig('cispo', 'sokoban', harsh).config);
    expect(sampo?.policyLoss).toBe('gspo');
    expect(cispo?.policyLoss).toBe('cispo');

    const fall = detectAlerts('sampo-harsh-val', recorded('sampo-harsh-val'), undefined, sampo).find((a) => a.rule === 'success_collapse');
    expect(fall?.hint).toMatch(/already clips at the sequence level/);
    expect(fall?.hint).toMatch(/optim\.lr, now 0\.001/);
    expect(fall?.hint).not.toMatch(/try SAMPO/);

    const broke = detectAlerts('cispo-harsh', recorded('cispo-harsh'), undefined, cispo).find((a) => a.rule === 'validity_drop');
    expect(broke?.hint).toMatch(/try SAMPO or GSPO/);
    // Without a recipe (a bare metrics stream) the hints stay generic, and the alerts themselves do not change.
    const bare = detectAlerts('sampo-harsh-val', recorded('sampo-harsh-val'));
    expect(bare.find((a) => a.rule === 'success_collapse')?.hint).toMatch(/try SAMPO/);
    const fitted = detectAlerts('sampo-harsh-val', recorded('sampo-harsh-val'), undefined, sampo);
    expect(fitted.map(({ hint: _h, ...a }) => a)).toEqual(bare.map(({ hint: _h, ...a }) => a));
    expect(recipeOf({ preset: 'x' })).toBeUndefined();
  });
});

describe('the rules from the field on the recorded lab runs', () => {
  it('engine_gap and format_hacking apply (mismatch/*, format, KL and success are logged) and stay quiet; response_collapse does not apply to runs recorded before response/* was logged', () => {
    for (const name of ['cispo-harsh', 'sampo-harsh', 'sampo-harsh-val', 'sapo-harsh', 'sampo-main']) {
      const rows = recorded(name);
      const logged = new Set(rows.flatMap((r) => Object.keys(r.values).filter((k) => Number.isFinite(r.values[k]))));
      const applies = ruleCoverage(logged)
        .filter((c) => c.applicable)
        .map((c) => c.rule);
      expect(applies, name).toEqual(expect.arrayContaining(['engine_gap', 'format_hacking']));
      expect(applies, name).not.toContain('response_collapse');
      // Both engines hold the same weights in these runs: float rounding only (mean |Δ log-prob| ≤ 5.3e-7 nats,
      // max ≤ 1.8e-5), far under the rise the rule needs (+0.01 nats over its start).
      expect(Math.max(...rows.map((r) => r.values['mismatch/logprob_abs_mean']).filter(Number.isFinite)), name).toBeLessThan(1e-6);
      expect(
        detectAlerts(name, rows).filter((a) => ['engine_gap', 'response_collapse', 'format_hacking'].includes(a.rule)),
        name,
      ).toEqual([]);
    }
  });
});

describe('alert texts on a recorded SAPO run (frozenlake, lr 0.05, seed 7): the case a user reported', () => {
  // It was told "PPO KL is 0.649 (step 7)" where step 7 logged 0.18 (a 3-step mean cited as a logged value) and
  // the peak went unmentioned, and "Clip fraction is 36 % (step 10), baseline 0.522" (a mean, and % beside a ratio).
  const rows = recorded('sapo-frozenlake-lr005');
  const alerts = detectAlerts('sapo-frozenlake-lr005', rows);

  it('PPO KL: the 6.41 peak at step 2 is named and cited, the mean is labelled with its steps, the window opens by step 2', () => {
    const kl = alerts.find((a) => a.rule === 'kl_drift' && a.metric === 'actor/ppo_kl')!;
    expect(kl.peak).toEqual({ step: 2, value: rows.find((r) => r.step === 2)!.values['actor/ppo_kl'] });
    expect(kl.message).toContain('highest 6.41 nats at step 2');
    expect(kl.message).toMatch(/^PPO KL \(old‖new\) mean [\d.]+ nats per token over steps \d+–\d+, above the limit 0\.05/);
    expect(kl.firstStep).toBeLessThanOrEqual(2);
  });

  it('clip fraction: in percent throughout (baseline 53 %), the logged 35 % at step 10 named, the 59 % peak too', () => {
    const clip = alerts.find((a) => a.rule === 'clip_fraction_drift')!;
    expect(clip.message).toContain('baseline 53 %');
    expect(clip.message).toContain('35 % at step 10');
    expect(clip.message).toContain('highest 59 % at step 2');
    expect(clip.message).not.toMatch(/0\.\d{3}/);
  });

  it('every alert quotes the logged values at the steps it names', () => {
    expect(alerts.length).toBeGreaterThan(3);
    expect(alerts.flatMap((a) => checkAlertMessage(a, rows))).toEqual([]);
  });
});
