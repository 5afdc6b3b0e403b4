/**
 * Every text file in ../shared/data/real-runs parses with its true step count from that folder's README,
 * with a few values checked against the README's numbers and the mapped catalog keys present. Detection is
 * from content only (the files are passed without their names).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { describeRealRuns } from '../../../tests/support/realRuns';
import { createLineParser, detectFormat, guessFramework, mapSourceStep, type LineParser, type LogFormat, type SourceStep } from './index';

interface Parsed {
  format: LogFormat;
  steps: SourceStep[];
  parser: LineParser;
}

function parseFile(path: string): Parsed {
  const buf = readFileSync(path);
  const det = detectFormat(new Uint8Array(buf.buffer, buf.byteOffset, Math.min(buf.length, 65536)));
  if (!det) throw new Error(`no format detected for ${path}`);
  const steps: SourceStep[] = [];
  const parser = createLineParser(det.format, (s) => steps.push(s));
  for (const l of buf.toString('utf8').split('\n')) parser.push(l.endsWith('\r') ? l.slice(0, -1) : l);
  parser.end();
  return { format: det.format, steps, parser };
}

const stepNumbers = (steps: SourceStep[]): number[] => steps.map((s) => s.step);
const range = (a: number, b: number): number[] => Array.from({ length: b - a + 1 }, (_, i) => a + i);
const at = (steps: SourceStep[], step: number, run = ''): SourceStep => {
  const s = steps.find((x) => x.step === step && x.run === run);
  if (!s) throw new Error(`no step ${step}`);
  return s;
};

describeRealRuns('text-format parsers on the real runs', (dir) => {
  const f = (rel: string): string => join(dir, rel);

  it('1a verl console (old keys): 435 steps 0–434, grad-norm spike 65.958 at step 16, config and final validation read', () => {
    const { format, steps, parser } = parseFile(f('verl-console/Qwen2.5-0.5B-bsz256_2-prompt1024-resp512-0.567.log'));
    expect(format).toBe('verl-console');
    expect(stepNumbers(steps)).toEqual(range(0, 434));
    expect(at(steps, 16).values['actor/grad_norm']).toBeCloseTo(65.958, 3);
    expect(at(steps, 0).values['actor/lr(1e-4)']).toBeDefined();
    expect(parser.meta.finalMetrics?.['test_score/openai/gsm8k']).toBeCloseTo(0.5686, 4);
    expect(Object.keys(parser.meta.config ?? {})).toContain('actor_rollout_ref');
    expect(parser.skipped).toEqual({});
    const fw = guessFramework(Object.keys(at(steps, 9).values));
    expect(fw).toBe('verl');
    const m = mapSourceStep(at(steps, 9).values, fw);
    expect(m.keyMap['actor/entropy']).toBe('actor/entropy_loss');
    expect(m.keyMap['episode/score_mean']).toBe('critic/score/mean');
    expect(m.keyMap['val/score_mean']).toBe('val/test_score/openai/gsm8k');
    expect(m.values['val/score_mean']).toBeCloseTo(0.013, 3);
    expect(mapSourceStep(at(steps, 0).values, fw).values['actor/entropy']).toBeCloseTo(0.526, 3);
  });

  it('1b verl console with NUL bytes: 435 steps, damaged config echo rebuilt from its layout', () => {
    const { steps, parser } = parseFile(f('verl-console/Qwen2.5-0.5B-bsz256_2-prompt512-resp256-0.538.log'));
    expect(stepNumbers(steps)).toEqual(range(0, 434));
    expect(at(steps, 43).values['actor/grad_norm']).toBeCloseTo(41.9, 1);
    const cfg = parser.meta.config as Record<string, Record<string, unknown>>;
    expect(cfg.data.max_response_length).toBe(256);
    expect(parser.meta.notes.join(' ')).toMatch(/damaged/);
  });

  it('1c verl console: 106 steps, step 0 merges the pre-training validation line with the training line', () => {
    const { steps } = parseFile(f('verl-console/gemma-2-2b-it-ppo-bsz512_4-prompt1024-resp-512-0.640.log'));
    expect(stepNumbers(steps)).toEqual(range(0, 105));
    const s0 = at(steps, 0).values;
    expect(s0['test_score/openai/gsm8k']).toBeCloseTo(0.521, 3);
    expect(s0['timing/gen']).toBeCloseTo(48.956, 3);
    expect(at(steps, 73).values['actor/grad_norm']).toBeCloseTo(10.57, 2);
    expect(mapSourceStep(s0, 'verl').values['val/score_mean']).toBeCloseTo(0.521, 3);
  });

  it('1d verl SFT console: 59 steps 0–58, step 29 merged, step 58 validation only', () => {
    const { steps, parser } = parseFile(f('verl-console/gemma-2-2b-it-sft-0.411.log'));
    expect(stepNumbers(steps)).toEqual(range(0, 58));
    expect(at(steps, 29).values['val/loss']).toBeCloseTo(0.42, 3);
    expect(at(steps, 29).values['train/loss']).toBeDefined();
    expect(Object.keys(at(steps, 58).values)).toEqual(['val/loss']);
    expect(at(steps, 58).values['val/loss']).toBeCloseTo(0.411, 3);
    expect(at(steps, 0).values['train/loss']).toBeCloseTo(0.046, 3);
    expect(parser.meta.config).toHaveProperty('data');
  });

  it('1e verl console (new keys, resumed): 335 steps 101–435', () => {
    const { steps, parser } = parseFile(f('verl-console/dstack-configs_verl_demo.log'));
    expect(stepNumbers(steps)).toEqual(range(101, 435));
    expect(parser.meta.notes.join(' ')).toMatch(/first step is 101/);
    const m = mapSourceStep(at(steps, 110).values, 'verl');
    for (const k of [
      'actor/entropy',
      'actor/grad_norm',
      'episode/score_mean',
      'response_length/clip_ratio',
      'perf/tokens_per_s',
      'val/score_mean',
    ])
      expect(m.keyMap).toHaveProperty(k);
    expect(m.keyMap['val/score_mean']).toBe('val-core/openai/gsm8k/reward/mean@1');
    expect(Math.max(...steps.map((s) => s.values['actor/grad_norm']))).toBeCloseTo(3.89, 2);
  });

  it('1f–1i play-verl logs: their step ranges, and the multi-line final validation dict', () => {
    const cases: [string, number, number][] = [
      ['play-verl_verl_grpo_qwen2.5b_8gpu.log', 1, 435],
      ['play-verl_verl_ppo_qwen2.5b_8gpu.log', 1, 45],
      ['play-verl_verl_qwen2_7b_min.log', 1, 140],
      ['play-verl_verl_qwen2_7b_recommended.log', 1, 70],
    ];
    for (const [name, a, b] of cases) {
      const { steps, parser } = parseFile(f(`verl-console/${name}`));
      expect(stepNumbers(steps), name).toEqual(range(a, b));
      expect(parser.meta.finalMetrics?.['val-core/openai/gsm8k/reward/mean@1'], name).toBeGreaterThan(0.4);
    }
    const grpo = parseFile(f('verl-console/play-verl_verl_grpo_qwen2.5b_8gpu.log')).steps;
    expect(at(grpo, 2).values['actor/grad_norm']).toBe(0);
    expect(mapSourceStep(at(grpo, 1).values, 'verl').values['actor/kl_loss']).toBeCloseTo(0.001, 3);
  });

  it('verl file-logger JSONL: 4 steps 0–3, NaN (null) pg_loss at step 3, strings noted not skipped', () => {
    const { format, steps, parser } = parseFile(f('verl-jsonl/HanlinDu-verl_verl_examples_gsm8k.jsonl'));
    expect(format).toBe('verl-jsonl');
    expect(stepNumbers(steps)).toEqual([0, 1, 2, 3]);
    expect(at(steps, 3).values['actor/pg_loss']).toBeNaN();
    expect(at(steps, 2).values['response_length/clip_ratio']).toBe(1);
    expect(parser.skipped).toEqual({});
    expect(parser.meta.notes.join(' ')).toMatch(/resize\/mode/);
    expect(mapSourceStep(at(steps, 0).values, 'verl').keyMap['val/success_rate']).toBe('val-core/openai/gsm8k/acc/mean@1');
  });

  it('W&B CSV exports: one run per prefix with its own length; empty cells absent', () => {
    const ent = parseFile(f('wandb-csv/deep-grpo/training_dynamics/entropy.csv'));
    expect(ent.format).toBe('wandb-csv');
    const byRun = new Map<string, number>();
    for (const s of ent.steps) byRun.set(s.run, (byRun.get(s.run) ?? 0) + 1);
    expect(byRun.get('Qwen2.5-0.5B-Instruct-GSM8K-CRPO-sp-p1-b8-gamma2.0-lam1.0-01161659')).toBe(2958);
    expect(byRun.get('qwen2.5-0.5b-instruct-gsm8k-crpo-no-branch')).toBe(4595);
    expect(ent.steps.every((s) => Object.keys(s.values).join() === 'actor/main_chain/entropy')).toBe(true);
    expect(mapSourceStep(ent.steps[0].values, 'verl').keyMap['actor/entropy']).toBe('actor/main_chain/entropy');
    const len = parseFile(f('wandb-csv/deep-grpo/training_dynamics/response_length.csv'));
    expect(
      at(len.steps, 2958, 'Qwen2.5-0.5B-Instruct-GSM8K-CRPO-sp-p1-b8-gamma2.0-lam1.0-01161659').values['response_length/main_chain/mean'],
    ).toBeCloseTo(664.6, 1);
    const tree = parseFile(f('wandb-csv/deep-grpo/tree_methods_training_instability/entropy.csv'));
    expect(stepNumbers(tree.steps)).toEqual(range(1, 927));
    expect(at(tree.steps, 924, 'Qwen2.5-0.5B-Instruct-TreeRL').values['actor/entropy']).toBeCloseTo(1.54, 2);
    const val = parseFile(f('wandb-csv/deep-grpo/tree_methods_training_instability/test_reward.csv'));
    expect(val.steps).toHaveLength(186);
    expect(mapSourceStep(val.steps[0].values, 'verl').keyMap['val/success_rate']).toBe('val-core/openai/gsm8k/acc/mean@1');
    const lenRuns = new Map<string, number>();
    for (const s of len.steps) lenRuns.set(s.run, (lenRuns.get(s.run) ?? 0) + 1);
    expect([...lenRuns.values()]).toEqual([2958, 4595]);
    const tr = parseFile(f('wandb-csv/deep-grpo/training_dynamics/test_reward.csv'));
    const base = tr.steps.filter((s) => s.run === 'qwen2.5-0.5b-instruct-gsm8k-crpo-no-branch');
    const deep = tr.steps.filter((s) => s.run === 'Qwen2.5-0.5B-Instruct-GSM8K-CRPO-sp-p1-b8-gamma2.0-lam1.0-01161659');
    expect(base.map((s) => s.step)).toEqual(range(0, 919).map((i) => i * 5));
    expect(deep).toHaveLength(592);
    expect(Math.max(...deep.map((s) => s.values['val-core/GSM8K/reward/mean@1']))).toBeCloseTo(0.677, 3);
  });

  it('DeepSpeed-Chat step-3 log: 477 steps 0–476, reward joined to its step', () => {
    const { format, steps, parser } = parseFile(
      f('other-console/deepspeed-chat_step3_actor_opt-1.3b_critic_opt-350m_globalBatchSize64.log'),
    );
    expect(format).toBe('deepspeed-chat');
    expect(stepNumbers(steps)).toEqual(range(0, 476));
    expect(at(steps, 0).values['average reward score']).toBeCloseTo(-0.679, 3);
    expect(at(steps, 0).values['E2E latency']).toBeCloseTo(7.99, 2);
    const rewards = steps.map((s) => s.values['average reward score']);
    expect(Math.max(...rewards)).toBeCloseTo(5.11, 1);
    expect(rewards.indexOf(Math.max(...rewards))).toBe(431);
    expect(parser.meta.notes.join(' ')).toMatch(/14 fp16 loss-scale overflow/);
    expect(mapSourceStep(steps[5].values, 'deepspeed-chat').keyMap['episode/reward_mean']).toBe('average reward score');
  });

  it('trainer_state.json: 11 log_history steps 10–110, TRL keys mapped', () => {
    const { format, steps } = parseFile(f('tensorboard/trl-grpo_qwen2-0.5b_numinamath/checkpoint-113_trainer_state.json'));
    expect(format).toBe('trainer-state');
    expect(stepNumbers(steps)).toEqual(range(1, 11).map((i) => i * 10));
    expect(at(steps, 10).values.reward).toBeCloseTo(0.01796875, 8);
    const fw = guessFramework(Object.keys(steps[0].values));
    expect(fw).toBe('trl');
    const m = mapSourceStep(steps[0].values, fw);
    expect(m.keyMap).toMatchObject({
      'episode/reward_mean': 'reward',
      'actor/kl_loss': 'kl',
      'response_length/mean': 'completion_length',
      'episode/valid_format_ratio': 'rewards/format_reward',
    });
  });
});
