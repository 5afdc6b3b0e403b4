/**
 * The collapse detector's verdicts on real training logs nobody here wrote:
 * ../shared/data/real-runs, read in place. Each file goes through the committed pure pipeline the importer
 * uses — detectFormat → the format's parser → mapSourceStep (the framework from the parser, else guessed from
 * the keys) — and the stream through detectAlerts. The expected verdict of each run is its README's:
 * healthy runs raise nothing critical; the broken and collapsing runs raise a critical alert from the rule that
 * should fire; the two warning-sign runs raise at least a warning. src/core/stability/README.md tabulates them.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { detectAlerts } from '../src/core/stability/detector';
import { ruleCoverage } from '../src/core/stability/coverage';
import { sourceRecipeOf } from '../src/core/stability/hints';
import type { Alert } from '../src/shared/api';
import { describeRealRuns } from './support/realRuns';
import { loadRealRun as load, type LoadedRun as Loaded } from './support/loadRealRun';

const critical = (alerts: readonly Alert[]) => alerts.filter((a) => a.severity === 'critical');
const show = (alerts: readonly Alert[]) =>
  alerts.map((a) => `${a.severity} ${a.rule} ${a.metric} @${a.firstStep}-${a.lastStep}: ${a.message}`);
const one = (dir: string, rel: string): Loaded => {
  const runs = load(join(dir, rel));
  expect(runs).toHaveLength(1);
  return runs[0];
};
const alertsOf = (l: Loaded) => detectAlerts(l.run || 'run', l.records);

describeRealRuns('collapse detector on real healthy runs: nothing critical', (dir) => {
  it.each([
    ['verl-console/Qwen2.5-0.5B-bsz256_2-prompt1024-resp512-0.567.log'],
    ['verl-console/Qwen2.5-0.5B-bsz256_2-prompt512-resp256-0.538.log'],
    ['verl-console/gemma-2-2b-it-ppo-bsz512_4-prompt1024-resp-512-0.640.log'],
    ['verl-console/gemma-2-2b-it-sft-0.411.log'],
    ['verl-console/dstack-configs_verl_demo.log'],
    ['verl-console/play-verl_verl_grpo_qwen2.5b_8gpu.log'],
    ['verl-console/play-verl_verl_ppo_qwen2.5b_8gpu.log'],
    [
      'tensorboard/trl-grpo_qwen2-0.5b_numinamath/runs/Apr01_09-57-15_h100x2-nc80-eastus2/events.out.tfevents.1743501588.h100x2-nc80-eastus2',
    ],
    ['tensorboard/trl-grpo_qwen2-0.5b_numinamath/checkpoint-113_trainer_state.json'],
    ['other-console/deepspeed-chat_step3_actor_opt-1.3b_critic_opt-350m_globalBatchSize64.log'],
  ])('%s', (rel) => {
    const run = one(dir, rel);
    expect(run.records.length).toBeGreaterThan(10);
    expect(show(critical(alertsOf(run)))).toEqual([]);
  });

  it('the deep-grpo W&B exports (two runs per file: entropy falling, length growing, test reward rising) raise no alert at all', () => {
    const sub = join(dir, 'wandb-csv', 'deep-grpo', 'training_dynamics');
    for (const f of readdirSync(sub).filter((x) => x.endsWith('.csv'))) {
      const runs = load(join(sub, f));
      expect(runs.length, f).toBe(2);
      for (const r of runs) expect(show(alertsOf(r)), `${f} ${r.run}`).toEqual([]);
    }
  });

  it('verl 1a: the grad-norm spikes (66 at step 16, 31× its median; 15–18 later) are warnings, and entropy falling 0.53 → 0.07 with the score rising is no alert', () => {
    const alerts = alertsOf(one(dir, 'verl-console/Qwen2.5-0.5B-bsz256_2-prompt1024-resp512-0.567.log'));
    const spikes = alerts.filter((a) => a.rule === 'grad_norm_spike');
    expect(spikes.map((a) => a.firstStep)).toContain(16);
    expect(spikes.every((a) => a.severity === 'warning')).toBe(true);
    expect(alerts.filter((a) => a.rule !== 'grad_norm_spike')).toEqual([]);
  });

  it('verl GRPO: 86 % of responses at the 192-token cap at the start, falling as it learns, is no length alert', () => {
    const alerts = alertsOf(one(dir, 'verl-console/play-verl_verl_grpo_qwen2.5b_8gpu.log'));
    expect(show(alerts)).toEqual([]);
  });

  it('a converged 7B run (1e, resumed at step 101, entropy 0.02–0.04) is quiet, and every rule with its metrics ran', () => {
    const run = one(dir, 'verl-console/dstack-configs_verl_demo.log');
    expect(run.records[0].step).toBe(101);
    expect(show(alertsOf(run))).toEqual([]);
    const keys = new Set(run.records.flatMap((r) => Object.keys(r.values)));
    const ran = ruleCoverage(keys)
      .filter((c) => c.applicable)
      .map((c) => c.rule);
    expect(ran).toEqual(
      expect.arrayContaining([
        'non_finite',
        'grad_norm_spike',
        'success_collapse',
        'entropy_shift',
        'kl_drift',
        'clip_fraction_drift',
        'length_runaway',
      ]),
    );
    expect(ran).not.toContain('dead_signal');
  });

  it('the SFT log (1d) has only losses: only non_finite applies', () => {
    const run = one(dir, 'verl-console/gemma-2-2b-it-sft-0.411.log');
    const keys = new Set(run.records.flatMap((r) => Object.keys(r.values)));
    expect(
      ruleCoverage(keys)
        .filter((c) => c.applicable)
        .map((c) => c.rule),
    ).toEqual(['non_finite']);
  });

  it('the aborted TRL-DAPO launches hold no scalars: no run, no alert', () => {
    const root = join(dir, 'tensorboard', 'trl-grpo-dapo_qwen2.5-vl-3b', 'runs');
    for (const d of ['Oct22_17-50-33', 'Oct22_18-12-59']) {
      const sub = readdirSync(root).find((x) => x.startsWith(d))!;
      const file = readdirSync(join(root, sub)).find((x) => x.startsWith('events'))!;
      expect(statSync(join(root, sub, file)).size).toBeGreaterThan(0);
      expect(load(join(root, sub, file))).toEqual([]);
    }
  });
});

describeRealRuns('collapse detector on real broken and collapsing runs: critical from the rule that should fire', (dir) => {
  it('verl-jsonl HanlinDu: pg_loss and ppo_kl turn NaN at step 3 → one critical non_finite naming both; the 11 rollout_corr/* keys null from step 2 → one warning listing them', () => {
    const alerts = alertsOf(one(dir, 'verl-jsonl/HanlinDu-verl_verl_examples_gsm8k.jsonl'));
    const nf = alerts.filter((a) => a.rule === 'non_finite');
    expect(nf.map((a) => `${a.severity} ${a.metric}@${a.firstStep}-${a.lastStep}`)).toEqual([
      'warning rollout_corr/kl@2-3',
      'critical actor/pg_loss@3-3',
    ]);
    expect(nf[0].message).toMatch(
      /^11 metrics under rollout_corr\/ became NaN at step 2, and are still NaN at step 3: rollout_corr\/kl, rollout_corr\/k3_kl, .*rollout_corr\/chi2_seq\.$/,
    );
    expect(nf[1].message).toBe('2 metrics under actor/ became NaN at step 3: actor/pg_loss, actor/ppo_kl.');
  });

  it('verl-jsonl HanlinDu: responses 61 → 512 tokens, clip ratio 1.0 with a score of 0 at every step → critical length_runaway (the cap with no reward)', () => {
    const alerts = alertsOf(one(dir, 'verl-jsonl/HanlinDu-verl_verl_examples_gsm8k.jsonl'));
    const cap = alerts.find((a) => a.rule === 'length_runaway' && a.metric === 'response_length/clip_ratio');
    expect(cap).toMatchObject({ severity: 'critical', firstStep: 2, lastStep: 3 });
    expect(cap!.message).toContain('from 2 % at step 1 to 100 % at step 2');
    expect(cap!.message).toContain('response_length/mean from 61.2 tokens at step 1 to 512 tokens at step 2');
    expect(cap!.message).toContain('episode/score_mean 0 % at step 1 and at every logged step through step 3');
  });

  it('TRL-DAPO 18-14-56 (logged every 10 steps): entropy 1.03 → 0.0085 with the gradient dead → critical entropy_shift; format → 0 and responses at the cap are critical too', () => {
    const root = join(dir, 'tensorboard', 'trl-grpo-dapo_qwen2.5-vl-3b', 'runs');
    const sub = readdirSync(root).find((x) => x.startsWith('Oct22_18-14-56'))!;
    const file = readdirSync(join(root, sub)).find((x) => x.startsWith('events'))!;
    const run = one(dir, join('tensorboard', 'trl-grpo-dapo_qwen2.5-vl-3b', 'runs', sub, file));
    expect(run.records.map((r) => r.step)).toEqual([10, 20, 30]);
    const alerts = alertsOf(run);
    const entropy = alerts.find((a) => a.rule === 'entropy_shift');
    expect(entropy).toMatchObject({ severity: 'critical', firstStep: 20 });
    expect(entropy!.message).toMatch(/collapsed.*actor\/grad_norm mean 0 /);
    expect(alerts.find((a) => a.rule === 'length_runaway' && a.metric === 'response_length/clip_ratio')?.severity).toBe('critical');
    expect(alerts.find((a) => a.rule === 'validity_drop' && a.metric === 'episode/valid_format_ratio')?.severity).toBe('critical');
  });

  it('W&B TreeRL: entropy blow-up (0.12–0.40 until step 726, 1.54 at 924) → critical entropy_shift, nothing critical before it', () => {
    const runs = load(join(dir, 'wandb-csv', 'deep-grpo', 'tree_methods_training_instability', 'entropy.csv'));
    expect(runs).toHaveLength(1);
    const alerts = alertsOf(runs[0]);
    const blow = critical(alerts).find((a) => a.rule === 'entropy_shift');
    expect(blow?.message).toMatch(/blew up/);
    expect(blow!.firstStep).toBeGreaterThanOrEqual(727);
    expect(Math.min(...alerts.map((a) => a.firstStep))).toBeGreaterThanOrEqual(727);
  });

  it('W&B TreeRL test reward alone (0.656 at step 350 → about 0.60) is a slip, not a collapse: no critical', () => {
    const runs = load(join(dir, 'wandb-csv', 'deep-grpo', 'tree_methods_training_instability', 'test_reward.csv'));
    expect(show(critical(alertsOf(runs[0])))).toEqual([]);
  });
});

describeRealRuns('collapse detector on the real warning-sign runs: a warning, not critical', (dir) => {
  it('play-verl qwen2_7b_min: the length jump 155 → 370 over steps 97–100 (val 0.84 → 0.69) is a length warning; it recovered by 105, so not critical', () => {
    const alerts = alertsOf(one(dir, 'verl-console/play-verl_verl_qwen2_7b_min.log'));
    const jump = alerts.find((a) => a.rule === 'length_runaway' && a.metric === 'response_length/mean');
    expect(jump?.severity).toBe('warning');
    expect(jump!.firstStep).toBeGreaterThanOrEqual(97);
    expect(jump!.lastStep).toBeLessThanOrEqual(105);
    expect(show(critical(alerts))).toEqual([]);
    // Entropy 0.24 → 0.026 with the score rising 0.30 → 0.93 is learning.
    expect(alerts.filter((a) => a.rule === 'entropy_shift')).toEqual([]);
  });

  it('play-verl qwen2_7b_recommended: entropy drifting up 0.25 → 0.68 is an entropy warning; the score stays at 0.95, so not critical', () => {
    const alerts = alertsOf(one(dir, 'verl-console/play-verl_verl_qwen2_7b_recommended.log'));
    const drift = alerts.find((a) => a.rule === 'entropy_shift');
    expect(drift).toMatchObject({ severity: 'warning' });
    expect(drift!.message).toMatch(/drifting up/);
    expect(drift!.firstStep).toBeGreaterThan(40);
    expect(show(critical(alerts))).toEqual([]);
  });
});

describeRealRuns('the rules from the field (engine_gap, response_collapse, format_hacking) on every real log', (dir) => {
  const FIELD = ['engine_gap', 'response_collapse', 'format_hacking'];
  const walk = (d: string): string[] =>
    readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? walk(join(d, n)) : [join(d, n)]));
  const runs = () =>
    walk(dir)
      .filter((p) => !p.endsWith('README.md'))
      .flatMap((p) => load(p).map((r) => ({ file: p.slice(dir.length + 1), ...r })));

  it('raise one alert in all: verl-jsonl HanlinDu, critical engine_gap at step 1 (rollout_corr/kl 9.97, k3_kl 9.24, log_ppl_abs_diff 9.94 nats per token)', () => {
    const raised = runs().flatMap((r) =>
      alertsOf(r)
        .filter((a) => FIELD.includes(a.rule))
        .map((a) => `${r.file}: ${a.severity} ${a.rule} ${a.metric}@${a.firstStep}-${a.lastStep}`),
    );
    expect(raised).toEqual(['verl-jsonl/HanlinDu-verl_verl_examples_gsm8k.jsonl: critical engine_gap rollout_corr/kl@1-1']);
    const gap = alertsOf(one(dir, 'verl-jsonl/HanlinDu-verl_verl_examples_gsm8k.jsonl')).find((a) => a.rule === 'engine_gap')!;
    expect(gap.message).toContain(
      'rollout_corr/kl 9.97 nats at step 1, rollout_corr/k3_kl 9.24 nats at step 1, rollout_corr/log_ppl_abs_diff 9.94 nats at step 1',
    );
    // Told in verl's own words when the run is known to be verl's (an import's recipe).
    const verlGap = detectAlerts(
      'run',
      one(dir, 'verl-jsonl/HanlinDu-verl_verl_examples_gsm8k.jsonl').records,
      undefined,
      sourceRecipeOf({}, 'verl'),
    ).find((a) => a.rule === 'engine_gap')!;
    expect(verlGap.hint).toMatch(/algorithm\.rollout_correction\.rollout_is=token/);
  });

  it('apply only where the metrics exist: engine_gap on HanlinDu alone, format_hacking on the TRL Qwen2-0.5B run (both of its files), response_collapse on none', () => {
    const applies = runs().flatMap((r) => {
      const keys = new Set(r.records.flatMap((x) => Object.keys(x.values)));
      return ruleCoverage(keys)
        .filter((c) => FIELD.includes(c.rule) && c.applicable)
        .map((c) => `${c.rule} ${r.file.split('/')[0]}/${r.file.split('/').at(-1)!.slice(0, 24)}`);
    });
    expect(applies.sort()).toEqual([
      'engine_gap verl-jsonl/HanlinDu-verl_verl_examp',
      'format_hacking tensorboard/checkpoint-113_trainer_s',
      'format_hacking tensorboard/events.out.tfevents.1743',
    ]);
  });

  it('format_hacking is quiet on the TRL run whose gain is nearly all format (0.010 → 0.105): the gain is under 0.3 and KL stays at 0.016, under 0.05', () => {
    const run = one(
      dir,
      'tensorboard/trl-grpo_qwen2-0.5b_numinamath/runs/Apr01_09-57-15_h100x2-nc80-eastus2/events.out.tfevents.1743501588.h100x2-nc80-eastus2',
    );
    const format = run.records.map((r) => r.values['episode/valid_format_ratio']).filter(Number.isFinite);
    const kl = run.records.map((r) => r.values['actor/kl_loss']).filter(Number.isFinite);
    expect(Math.max(...format) - Math.min(...format)).toBeLessThan(0.3);
    expect(Math.max(...kl)).toBeLessThan(0.05);
    expect(alertsOf(run).filter((a) => a.rule === 'format_hacking')).toEqual([]);
  });
});
