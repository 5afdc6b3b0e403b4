/**
 * The rules learnt from the field, on constructed streams shaped like the public reports:
 * open-instruct #1473 (a rollout/trainer log-prob gap that keeps rising), RAGEN #52 (Sokoban PPO responses turned
 * into "!!!!!!!" around steps 63–68), verl #747 / #2626 (NaN after "!!!!" outputs), RAGEN-2's template collapse
 * (responses stay diverse by entropy but stop depending on their prompt), open-r1 #587 (reward hacking: the
 * format reward rises with a KL spike while accuracy does not), and verl #1066 (grad-norm and entropy spikes with
 * a response-length jump: caught by the existing rules together).
 */
import { describe, expect, it } from 'vitest';
import { detectAlerts } from './detector';
import { responseDiversity } from '../training/diversity';
import type { MetricRecord } from '../../shared/metrics';

const steps = (n: number, f: (step: number) => Record<string, number>, first = 1): MetricRecord[] =>
  Array.from({ length: n }, (_, i) => ({ step: first + i, values: f(first + i) }));
const wobble = (step: number, a: number) => a * Math.sin(step * 1.7);
const fired = (recs: MetricRecord[], rule: string) => detectAlerts('r', recs).filter((a) => a.rule === rule);

describe('engine_gap: the rollout/trainer gap rising (open-instruct #1473) or far apart at once (verl rollout_corr)', () => {
  it('a log-prob gap rising from 0.01 to 0.2 nats warns, then turns critical at 10× its start; a flat one is quiet', () => {
    const gap = (s: number) => (s <= 40 ? 0.01 + wobble(s, 0.002) : 0.01 + (s - 40) * 0.004);
    const alerts = fired(
      steps(90, (s) => ({ 'mismatch/logprob_abs_mean': gap(s) })),
      'engine_gap',
    );
    expect(alerts).toHaveLength(1);
    expect(alerts[0].severity).toBe('critical');
    // 3× the start (0.01) is 0.03 nats: step 45 onward, smoothed over 3 steps and held 3 — raised by step 50.
    expect(alerts[0].firstStep).toBeGreaterThan(40);
    expect(Number(alerts[0].id.split(':').at(-1))).toBeLessThanOrEqual(50);
    expect(alerts[0].message).toMatch(
      /^The rollout\/trainer gap mismatch\/logprob_abs_mean is rising: mean [\d.]+ nats over steps \d+–\d+/,
    );
    expect(
      fired(
        steps(90, (s) => ({ 'mismatch/logprob_abs_mean': 0.01 + wobble(s, 0.003) })),
        'engine_gap',
      ),
    ).toEqual([]);
  });

  it("verl's training/rollout_probs_diff_mean (read under its own name) rising is judged in probability, not nats", () => {
    const recs = steps(60, (s) => ({ 'training/rollout_probs_diff_mean': s <= 20 ? 0.002 : 0.002 + (s - 20) * 0.001 }));
    const [a] = fired(recs, 'engine_gap');
    expect(a.metric).toBe('training/rollout_probs_diff_mean');
    expect(a.message).not.toMatch(/nats/);
  });

  it('one step with rollout_corr/kl at or above 1 nat per token is critical at once, its sibling keys in the same alert', () => {
    const recs = steps(3, (s) => ({ 'rollout_corr/kl': s === 1 ? 9.97 : NaN, 'rollout_corr/k3_kl': s === 1 ? 9.24 : NaN }));
    const alerts = fired(recs, 'engine_gap');
    expect(alerts.map((a) => [a.severity, a.metric, a.firstStep])).toEqual([['critical', 'rollout_corr/kl', 1]]);
    expect(alerts[0].message).toContain('rollout_corr/kl 9.97 nats at step 1, rollout_corr/k3_kl 9.24 nats at step 1');
    expect(
      fired(
        steps(20, () => ({ 'rollout_corr/kl': 0.002 })),
        'engine_gap',
      ),
    ).toEqual([]);
  });
});

/** A small deterministic generator (tests in src/core take no Math.random). */
function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

/**
 * One step's rows: 8 prompts × 4 responses of 12 tokens. Healthy: each prompt's responses draw from its own 20
 * tokens. `collapsed`: every response is token 0 repeated ("!!!!"). `template`: responses as varied as before,
 * but all prompts draw from the same 20 tokens — diverse, and independent of the input.
 */
function rows(step: number, collapsed: boolean, template = false) {
  const rand = lcg(step * 7919 + 1);
  const out = [];
  for (let p = 0; p < 8; p++) {
    for (let g = 0; g < 4; g++) {
      const base = template ? 100 : 100 + p * 20;
      const response = collapsed ? Array(12).fill(0) : Array.from({ length: 12 }, () => base + Math.floor(rand() * 20));
      out.push({ prompt: [p, step], response });
    }
  }
  return out;
}

describe('response_collapse: one repeated token (RAGEN #52), one answer, or a prompt-independent template (RAGEN-2)', () => {
  it('responses turning into "!!!!" from step 63 (the metrics computed from token ids) → critical by step 68, quiet before', () => {
    const recs = steps(80, (s) => ({ ...responseDiversity(rows(s, s >= 63)) }));
    const alerts = fired(recs, 'response_collapse');
    expect(alerts.map((a) => a.metric).sort()).toEqual(['response/distinct_2', 'response/identical_share', 'response/prompt_mi']);
    for (const a of alerts) expect(a.firstStep).toBeGreaterThanOrEqual(63);
    const identical = alerts.find((a) => a.metric === 'response/identical_share')!;
    expect(identical.severity).toBe('critical');
    expect(Number(identical.id.split(':').at(-1))).toBeLessThanOrEqual(68);
    expect(alerts.find((a) => a.metric === 'response/distinct_2')!.severity).toBe('critical');
  });

  it('then the loss turns NaN (verl #747): non_finite joins the response collapse', () => {
    const recs = steps(80, (s) => ({ ...responseDiversity(rows(s, s >= 63)), 'actor/pg_loss': s >= 70 ? NaN : 0.1 + wobble(s, 0.01) }));
    const rules = new Set(detectAlerts('r', recs).map((a) => a.rule));
    expect(rules).toContain('response_collapse');
    expect(rules).toContain('non_finite');
  });

  it('a template that no longer depends on the prompt: only the mutual information falls (warning); entropy stays put', () => {
    const recs = steps(80, (s) => ({ ...responseDiversity(rows(s, false, s >= 40)), 'actor/entropy': 0.8 + wobble(s, 0.02) }));
    const alerts = detectAlerts('r', recs);
    expect(alerts.map((a) => `${a.rule}:${a.metric}:${a.severity}`)).toEqual(['response_collapse:response/prompt_mi:warning']);
    expect(alerts[0].message).toMatch(/^Responses no longer depend on their prompt \(template collapse\)/);
  });

  it('healthy diverse responses are quiet', () => {
    expect(
      fired(
        steps(80, (s) => ({ ...responseDiversity(rows(s, false)) })),
        'response_collapse',
      ),
    ).toEqual([]);
  });
});

describe('format_hacking: KL rising with a format-only reward gain (open-r1 #587)', () => {
  const stream = (taskUp: boolean, klUp: boolean) =>
    steps(60, (s) => ({
      'episode/valid_format_ratio': Math.min(0.9, 0.1 + Math.max(0, s - 10) * 0.03),
      'episode/success_rate': 0.02 + (taskUp ? Math.max(0, s - 10) * 0.01 : wobble(s, 0.005)),
      'actor/kl_loss': klUp ? 0.001 + Math.max(0, s - 10) * 0.008 : 0.001 + wobble(s, 0.0002),
    }));

  it('format 10 % → 90 %, success flat at 2 %, KL 0.001 → 0.4 nats → warning on actor/kl_loss', () => {
    const alerts = fired(stream(false, true), 'format_hacking');
    expect(alerts.map((a) => [a.metric, a.severity])).toEqual([['actor/kl_loss', 'warning']]);
    expect(alerts[0].message).toMatch(
      /the gain is format only: episode\/valid_format_ratio mean \d+ % over steps \d+–\d+ against its start 10 %, episode\/success_rate mean \d+ % over steps \d+–\d+ against its start 2 %/,
    );
  });

  it('the same format gain with the task rising, or with KL flat, is no hacking', () => {
    expect(fired(stream(true, true), 'format_hacking')).toEqual([]);
    expect(fired(stream(false, false), 'format_hacking')).toEqual([]);
  });
});

describe("each rule from the field carries its own hint (a lab run's wording: the lab's settings)", () => {
  it('engine_gap: rollout correction; response_collapse: dynamic filtering; format_hacking: the format bonus', () => {
    const gap = fired(
      steps(90, (s) => ({ 'mismatch/logprob_abs_mean': s <= 40 ? 0.01 + wobble(s, 0.002) : 0.01 + (s - 40) * 0.004 })),
      'engine_gap',
    );
    const collapse = fired(
      steps(80, (s) => ({ ...responseDiversity(rows(s, s >= 63)) })),
      'response_collapse',
    );
    const hacking = fired(
      steps(60, (s) => ({
        'episode/valid_format_ratio': Math.min(0.9, 0.1 + Math.max(0, s - 10) * 0.03),
        'episode/success_rate': 0.02 + wobble(s, 0.005),
        'actor/kl_loss': 0.001 + Math.max(0, s - 10) * 0.008,
      })),
      'format_hacking',
    );
    expect(gap.length * collapse.length * hacking.length).toBeGreaterThan(0);
    for (const a of gap) expect(a.hint).toMatch(/rollout correction, algorithm\.rolloutCorrection/);
    for (const a of collapse) expect(a.hint).toMatch(/^responses are collapsing onto one answer or template: .*algorithm\.filter\.enabled/);
    for (const a of hacking)
      expect(a.hint).toMatch(/^the reward rises on format alone .*give the format bonus less weight than the task reward/);
  });
});

describe('verl #1066: grad-norm and entropy spikes with a response-length jump — the existing rules catch it together', () => {
  it('grad_norm_spike, entropy_shift and length_runaway all fire at the event', () => {
    const recs = steps(80, (s) => {
      const ev = s >= 60 && s <= 64;
      return {
        'actor/grad_norm': ev ? 40 : 1 + wobble(s, 0.05),
        'actor/entropy': ev ? 1.6 : 0.4 + wobble(s, 0.01),
        'response_length/mean': ev ? 900 : 300 + wobble(s, 10),
      };
    });
    const alerts = detectAlerts('r', recs);
    expect(new Set(alerts.map((a) => a.rule))).toEqual(new Set(['grad_norm_spike', 'entropy_shift', 'length_runaway']));
    for (const a of alerts) expect(a.firstStep).toBeGreaterThanOrEqual(59);
  });
});
