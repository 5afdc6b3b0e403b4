/**
 * Alert texts quote the logged values at the steps they name. Every alert the detector raises —
 * on constructed streams shaped like the reported cases, on the synthetic shapes, on this lab's recorded runs
 * and on the real logs in ../shared/data/real-runs — is checked against its data by checkAlertMessage
 * (tests/support/alertQuotes.ts): each number is a logged value at the step it names, or a labelled derived
 * number; shares are in percent throughout; the steps it quotes for its metric are in its evidence window.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectAlerts } from '../src/core/stability/detector';
import { RULES } from '../src/core/stability/rules/index';
import { syntheticStream, type SyntheticShape } from '../src/core/stability/synthetic';
import type { Alert } from '../src/shared/api';
import type { MetricRecord } from '../src/shared/metrics';
import { decodeMetricRecord } from '../src/main/store/jsonl';
import { checkAlertMessage } from './support/alertQuotes';
import { loadRealRun } from './support/loadRealRun';
import { describeRealRuns } from './support/realRuns';

const rulesSeen = new Set<string>();

function checked(records: MetricRecord[]): Alert[] {
  const alerts = detectAlerts('r', records);
  for (const a of alerts) rulesSeen.add(a.rule);
  expect(alerts.flatMap((a) => checkAlertMessage(a, records))).toEqual([]);
  return alerts;
}

const series = (key: string, values: readonly number[], from = 1): MetricRecord[] =>
  values.map((v, i) => ({ step: from + i, values: { [key]: v } }));

/** A SAPO run on frozenlake (lr 0.05, seed 7, 10 steps), as reported: PPO KL 6.40 at step 2, 0.18 at step 7. */
const SAPO_KL = [0.012, 6.4, 0.9, 0.31, 0.5, 1.27, 0.18, 0.2, 0.15, 0.12];
/** Its clip fraction: a baseline (median of the first 5) of 0.522, falling to 25 % at step 10. */
const SAPO_CLIP = [0.1, 0.61, 0.55, 0.522, 0.5, 0.45, 0.4, 0.42, 0.41, 0.25];

describe('alert messages quote the logged values at the steps they name', () => {
  it('PPO KL: the 6.40 peak at step 2 is named, the mean is labelled with its steps, the window opens at the peak', () => {
    const recs = SAPO_KL.map((v, i) => ({ step: i + 1, values: { 'actor/ppo_kl': v, 'actor/pg_clipfrac': SAPO_CLIP[i] } }));
    const alerts = checked(recs);
    const kl = alerts.find((a) => a.rule === 'kl_drift')!;
    expect(kl.message).toContain('highest 6.4 nats at step 2');
    expect(kl.message).toMatch(/mean [\d.]+ nats per token over steps \d+–\d+/);
    expect(kl.firstStep).toBeLessThanOrEqual(2);
    expect(kl.peak).toEqual({ step: 2, value: 6.4 });
    expect(kl.evidence.steps).toContain(2);
  });

  it('clip fraction: percent throughout (baseline 52 %, not 0.522), the latest logged 25 % at step 10 named', () => {
    const recs = SAPO_KL.map((v, i) => ({ step: i + 1, values: { 'actor/ppo_kl': v, 'actor/pg_clipfrac': SAPO_CLIP[i] } }));
    const clip = checked(recs).find((a) => a.rule === 'clip_fraction_drift')!;
    expect(clip.message).toContain('baseline 52 %');
    expect(clip.message).not.toMatch(/0\.522/);
    expect(clip.message).toContain('25 % at step 10');
    expect(clip.message).toContain('highest 61 % at step 2');
  });

  it('a length jump names its rise and its window covers it (155 → 370 tokens over steps 98–100)', () => {
    const lens = [...Array.from({ length: 97 }, (_, i) => 150 + (i % 5)), 184.3, 240, 369.6, 241.5, 157, 160, 164, 159];
    const alerts = checked(series('response_length/mean', lens));
    const jump = alerts.find((a) => a.rule === 'length_runaway')!;
    expect(jump.firstStep).toBeLessThanOrEqual(98);
    expect(jump.lastStep).toBeGreaterThanOrEqual(100);
    expect(jump.message).toContain('370 tokens at step 100');
    expect(jump.message).toContain('184 tokens at step 98');
  });

  it('a key that turns NaN and stays NaN is reported at the step it broke, with its last finite value', () => {
    const recs: MetricRecord[] = [1, 2, 3, 4].map((step) => ({
      step,
      values: { 'actor/pg_loss': step === 1 ? 0.12 : NaN, 'actor/grad_norm': 1 },
    }));
    const nf = checked(recs).find((a) => a.rule === 'non_finite')!;
    expect(nf.firstStep).toBe(2);
    expect(nf.message).toMatch(/became NaN at step 2; it was 0\.12 at step 1, and is still NaN at step 4/);
  });

  it('a key non-finite over several steps in changing kinds is reported from the step it broke, not the last change', () => {
    // The MLflow peer's grad norm: NaN at step 3, Infinity at 4, -Infinity at 5. The alert spans steps 3-5; its text
    // said "became -Infinity at step 5", leaving steps 3 and 4 unexplained.
    const gn: Record<number, number> = { 3: NaN, 4: Infinity, 5: -Infinity };
    const recs: MetricRecord[] = [1, 2, 3, 4, 5, 6].map((step) => ({
      step,
      values: { 'actor/grad_norm': gn[step] ?? 1 + step / 10, 'actor/pg_loss': 0.1 },
    }));
    const nf = checked(recs).filter((a) => a.rule === 'non_finite');
    expect(nf).toHaveLength(1);
    expect(nf[0].firstStep).toBe(3);
    expect(nf[0].message).toBe('Gradient norm became NaN at step 3; it was 1.2 at step 2, and is -Infinity at step 5.');
  });

  it('every rule that can fire on a constructed stream writes a checkable message', () => {
    const spikes = Array.from({ length: 40 }, (_, i) => (i === 29 || i === 30 ? 50 + i : 1 + (i % 3) * 0.01));
    checked(series('actor/grad_norm', spikes));
    checked(series('actor/kl_loss', [0.01, 0.01, 0.012, 0.011, 0.01, 0.3, 0.9, 1.4, 2.5, 2.7, 3.1]));
    checked(series('filter/zero_variance_share', [0.2, 0.4, 0.96, 0.97, 0.99, 1, 1, 1]));
    checked(series('mismatch/logprob_abs_max', [0.1, 0.2, 3, 6, 7]));
    checked(series('mismatch/logprob_abs_mean', [0.01, 0.02, 0.1, 0.2, 0.3]));
    checked(series('episode/valid_format_ratio', [0.9, 0.95, 0.97, 0.96, 0.5, 0.2, 0.1, 0.0, 0.01]));
    checked(
      series('episode/reward_mean', [
        ...Array.from({ length: 30 }, (_, i) => 0.1 + (i < 20 ? i * 0.1 : 2) + (i % 2) * 0.01),
        ...Array.from({ length: 15 }, (_, i) => 0.2 + (i % 2) * 0.01),
      ]),
    );
    const val = [0, 10, 20, 30].map((step) => ({
      step,
      values: { 'val/success_rate': step === 10 ? 0.3 : step === 0 ? 0.2 : 0, 'val/episodes': 64 },
    }));
    checked(val);
    const entropy = Array.from({ length: 30 }, (_, i) => ({
      step: i + 1,
      values: { 'actor/entropy': i < 10 ? 1 : i < 14 ? 0.5 : 0.01, 'actor/grad_norm': i < 10 ? 0.3 : 0.0005 },
    }));
    checked(entropy);
    checked(series('actor/entropy', [0.3, 0.31, 0.3, 0.29, 0.3, 0.5, 0.9, 1.2, 1.3, 1.4, 1.5]));
    // The rules from the field: engine gap (rising, and far apart at once), response collapse, format hacking.
    checked(series('mismatch/logprob_abs_mean', [0.01, 0.012, 0.011, 0.01, 0.012, 0.03, 0.05, 0.08, 0.12, 0.15, 0.2]));
    checked(series('training/rollout_probs_diff_mean', [0.002, 0.002, 0.003, 0.002, 0.002, 0.01, 0.02, 0.03, 0.05]));
    checked([
      { step: 1, values: { 'rollout_corr/kl': 9.97, 'rollout_corr/k3_kl': 9.24 } },
      { step: 2, values: { 'rollout_corr/kl': 3.1 } },
    ]);
    checked(series('response/identical_share', [0.03, 0.05, 0.04, 0.03, 0.05, 0.6, 0.95, 1, 1, 1]));
    checked(series('response/distinct_2', [0.8, 0.82, 0.79, 0.8, 0.81, 0.3, 0.05, 0.02, 0.02, 0.02]));
    checked(series('response/prompt_mi', [2, 2.1, 1.9, 2, 2.05, 1, 0.3, 0.2, 0.2, 0.2]));
    checked(
      Array.from({ length: 40 }, (_, i) => ({
        step: i + 1,
        values: {
          'episode/valid_format_ratio': Math.min(0.9, 0.1 + Math.max(0, i - 8) * 0.05),
          'episode/success_rate': 0.02,
          'actor/kl_loss': 0.001 + Math.max(0, i - 8) * 0.02,
        },
      })),
    );
  });

  it.each(['cispo_collapse', 'entropy_collapse', 'dead_signal', 'length_runaway', 'mismatch', 'kl_drift'] as SyntheticShape[])(
    'synthetic %s',
    (shape) => {
      expect(checked(syntheticStream({ steps: 300, seed: 3, shape })).length).toBeGreaterThan(0);
    },
  );

  it.each(['cispo-harsh', 'sampo-harsh', 'sampo-harsh-val', 'sapo-harsh', 'sampo-main'])('recorded lab run %s', (name) => {
    const text = readFileSync(join(__dirname, 'fixtures', 'runs', `${name}.metrics.jsonl`), 'utf8');
    checked(
      text
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => decodeMetricRecord(JSON.parse(l))!),
    );
  });
});

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

describeRealRuns('alert messages on the real logs quote what the logs hold', (dir) => {
  it('every alert on every real log', () => {
    let n = 0;
    for (const file of walk(dir).filter((p) => !p.endsWith('README.md'))) {
      for (const run of loadRealRun(file)) n += checked(run.records).length;
    }
    expect(n).toBeGreaterThan(10);
  });

  it('the rules seen across all these streams include every rule of the catalog', () => {
    expect([...rulesSeen].sort()).toEqual(RULES.map((r) => r.id).sort());
  });
});
