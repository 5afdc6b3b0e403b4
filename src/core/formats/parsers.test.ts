/**
 * The text parsers on small fixtures written here, one per format and edge case, so every format stays
 * covered where ../shared/data/real-runs is absent.
 */
import { describe, expect, it } from 'vitest';
import { createLineParser, detectFormat, mapSourceStep, type LogFormat, type SourceStep } from './index';
import { parseRecord } from './csv';
import { createTrainerStateParser } from './trl';
import { literalEnd, LiteralScanner, parsePprintDict, parsePyLiteral } from './pyLiteral';
import { fastDecimal, parseMetricNumber } from './steps';

function run(format: LogFormat, text: string) {
  const steps: SourceStep[] = [];
  const p = createLineParser(format, (s) => steps.push(s));
  for (const l of text.split('\n')) p.push(l);
  p.end();
  return { steps, p };
}

const ESC = '\x1b';
const ray = (s: string, who = 'TaskRunner') => `${ESC}[36m(${who} pid=14640)${ESC}[0m ${s}`;

describe('verl console', () => {
  it('reads step lines behind ANSI codes and Ray prefixes, numpy reprs, nan/inf and keys with parentheses', () => {
    const { steps, p } = run(
      'verl-console',
      [
        ray(
          'step:1 - actor/pg_loss:np.float64(0.125) - actor/lr(1e-4):0.100 - critic/kl:-0.000 - actor/grad_norm:nan - x/up:inf - x/down:-inf',
        ),
        `${ESC}[2m${ESC}[36m(main_task pid=7)${ESC}[0m step:2 - actor/pg_loss:0.5`,
        'step:3 - actor/pg_loss:1e-05',
      ].join('\n'),
    );
    expect(steps.map((s) => s.step)).toEqual([1, 2, 3]);
    const v = steps[0].values;
    expect(v['actor/pg_loss']).toBe(0.125);
    expect(v['actor/lr(1e-4)']).toBe(0.1);
    expect(Object.is(v['critic/kl'], -0)).toBe(true);
    expect(v['actor/grad_norm']).toBeNaN();
    expect(v['x/up']).toBe(Infinity);
    expect(v['x/down']).toBe(-Infinity);
    expect(steps[2].values['actor/pg_loss']).toBe(1e-5);
    expect(p.skipped).toEqual({});
  });

  it('drops the suffix Ray adds to lines it deduplicated', () => {
    const { steps } = run('verl-console', ray('step:3 - a:1 - b:2.5 [repeated 2x across cluster]'));
    expect(steps[0].values).toEqual({ a: 1, b: 2.5 });
  });

  it("says a run is verl-agent when its echoed config has verl-agent's env section", () => {
    const { p } = run(
      'verl-console',
      [ray("{'env': {'env_name': 'alfworld/AlfredTWEnv', 'max_steps': 50}, 'trainer': {'total_epochs': 1}}"), ray('step:1 - a:1')].join(
        '\n',
      ),
    );
    expect(p.meta.framework).toBe('verl-agent');
    expect(run('verl-console', 'step:1 - a:1').p.meta.framework).toBe('verl');
  });

  it('merges a validation-only line into the training line of the same step', () => {
    const { steps } = run(
      'verl-console',
      ['step:0 - test_score/openai/gsm8k:0.521', 'step:0 - actor/pg_loss:0.1', 'step:1 - actor/pg_loss:0.2', 'step:1 - val/loss:0.4'].join(
        '\n',
      ),
    );
    expect(steps).toEqual([
      { run: '', step: 0, values: { 'test_score/openai/gsm8k': 0.521, 'actor/pg_loss': 0.1 } },
      { run: '', step: 1, values: { 'actor/pg_loss': 0.2, 'val/loss': 0.4 } },
    ]);
  });

  it('does not count model text, progress bars or warnings containing "step:" as steps', () => {
    const { steps, p } = run(
      'verl-console',
      [
        ray("[response] Let's start with the first step:"),
        ray('step: this is prose'),
        'Training Progress:  23%|██▎       | 100/435 [step: 3]',
        'WARNING step:5 was slow',
        ray('step:7'),
        'noise with a NUL \u0000 byte',
        ray('step:4 - actor/pg_loss:0.3'),
      ].join('\n'),
    );
    expect(steps.map((s) => s.step)).toEqual([4]);
    expect(p.skipped).toEqual({});
  });

  it('counts a step line whose metrics do not parse as skipped, and ignores non-numeric values with a note', () => {
    const { steps, p } = run('verl-console', ['step:1 - oops - nothing here', 'step:2 - a:1 - mode:schedule'].join('\n'));
    expect(steps.map((s) => s.step)).toEqual([2]);
    expect(steps[0].values).toEqual({ a: 1 });
    expect(p.skipped['step line without numeric metrics']).toBe(1);
    expect(p.meta.notes.join(' ')).toMatch(/non-numeric values ignored: mode/);
  });

  it('keeps the last step when the log is cut mid-line and notes a resumed run', () => {
    const { steps, p } = run('verl-console', ['step:101 - a:1 - b:2', 'step:102 - a:1 - b:'].join('\n'));
    expect(steps.map((s) => [s.step, s.values])).toEqual([
      [101, { a: 1, b: 2 }],
      [102, { a: 1 }],
    ]);
    expect(p.meta.notes.join(' ')).toMatch(/first step is 101/);
  });

  it('parses the echoed pprint config into meta.config, before training only', () => {
    const { p } = run(
      'verl-console',
      [
        ray("{'actor_rollout_ref': {'actor': {'clip_ratio': 0.2,"),
        ray("                                 'optim': {'lr': 1e-06, 'min_lr_ratio': None}},"),
        ray("                       'model': {'path': 'Qwen/Qwen2-7B-Instruct'}},"),
        ray(" 'algorithm': {'adv_estimator': 'gae', 'gamma': 1.0, 'use': True, 'x': nan}}"),
        ray('step:1 - a:1'),
        ray("{'late': 1}"),
      ].join('\n'),
    );
    expect(p.meta.config).toEqual({
      actor_rollout_ref: { actor: { clip_ratio: 0.2, optim: { lr: 1e-6, min_lr_ratio: null } }, model: { path: 'Qwen/Qwen2-7B-Instruct' } },
      algorithm: { adv_estimator: 'gae', gamma: 1, use: true, x: 'nan' },
    });
  });

  it('rebuilds a config whose lines the log lost from pprint columns, and says so', () => {
    const { p, steps } = run(
      'verl-console',
      [
        ray("{'actor_rollout_ref': {'actor': {'clip_ratio': 0.2,"),
        ray("                                 'fsdp_config': {'wrap_policy': {'min_num_params': 0"),
        ray("                                 'grad_clip': 1.0},"),
        ray(" 'data': {'max_response_length': 256,"),
        ray("          'train_files': 'x.parquet',(WorkerDict pid=1) spliced"),
        ray('step:1 - a:1'),
      ].join('\n'),
    );
    expect(steps).toHaveLength(1);
    const c = p.meta.config as any;
    expect(c.actor_rollout_ref.actor.clip_ratio).toBe(0.2);
    expect(c.actor_rollout_ref.actor.grad_clip).toBe(1);
    expect(c.data).toEqual({ max_response_length: 256, train_files: 'x.parquet' });
    expect(p.meta.notes.join(' ')).toMatch(/rebuilt from its pprint layout/);
  });

  it('reads "Final validation metrics" in its one-line and pprint-wrapped spellings', () => {
    const one = run(
      'verl-console',
      ['step:1 - a:1', ray(`"Final validation metrics: {'test_score/openai/gsm8k': 0.5685}"`, 'main_task')].join('\n'),
    );
    expect(one.p.meta.finalMetrics).toEqual({ 'test_score/openai/gsm8k': 0.5685 });
    const wrapped = run(
      'verl-console',
      [
        'step:1 - a:1',
        ray(`("Final validation metrics: {'val-core/openai/gsm8k/reward/mean@1': "`),
        ray(` "0.821, 'val-aux/openai/gsm8k/reward/std@1': 0.0}")`),
      ].join('\n'),
    );
    expect(wrapped.p.meta.finalMetrics).toEqual({ 'val-core/openai/gsm8k/reward/mean@1': 0.821, 'val-aux/openai/gsm8k/reward/std@1': 0 });
    expect(wrapped.steps).toHaveLength(1);
  });
});

describe('JSONL', () => {
  it('verl file logger: step + data, null = NaN, strings noted, a truncated last line skipped', () => {
    const { steps, p } = run(
      'verl-jsonl',
      [
        '{"step":0,"data":{"val-core/openai/gsm8k/acc/mean@1":0.0}}',
        '{"step":1,"data":{"actor/pg_loss":null,"resize/mode":"schedule","critic/lr":0.00001}}',
        '{"step":2,"data":{"actor/pg_lo',
      ].join('\n'),
    );
    expect(steps.map((s) => s.step)).toEqual([0, 1]);
    expect(steps[1].values['actor/pg_loss']).toBeNaN();
    expect(steps[1].values['critic/lr']).toBe(1e-5);
    expect('resize/mode' in steps[1].values).toBe(false);
    expect(p.skipped).toEqual({ 'unparsable JSON line': 1 });
    expect(p.meta.notes.join(' ')).toMatch(/resize\/mode/);
  });

  it('flat records: bare NaN/Infinity, "300/1296" steps, nested objects flattened, records without a step counted', () => {
    const { steps, p } = run(
      'jsonl',
      [
        '{"step": 1, "loss": NaN, "kl": Infinity, "neg": -Infinity, "note": "NaN stays text"}',
        '{"global_step": "300/1296", "env": {"all": {"reward": {"total": 0.5}}}}',
        '{"loss": 1}',
        'not json',
        '',
      ].join('\n'),
    );
    expect(steps.map((s) => s.step)).toEqual([1, 300]);
    expect(steps[0].values.loss).toBeNaN();
    expect(steps[0].values.kl).toBe(Infinity);
    expect(steps[0].values.neg).toBe(-Infinity);
    expect('note' in steps[0].values).toBe(false);
    expect(steps[1].values).toEqual({ 'env/all/reward/total': 0.5 });
    expect(p.skipped).toEqual({
      'record without a step field (step, global_step, _step, train/global_step, trainer/global_step, global_step/max_steps, iteration, iter, progress/batch)': 1,
      'line that is not a JSON object': 1,
    });
  });

  it('ms-swift logging.jsonl: the step from global_step/max_steps, its progress fields dropped, framework ms-swift, its GRPO keys mapped', () => {
    // The layout of ms-swift's trainer callback (json.dumps of the logs dict plus its progress fields).
    const { steps, p } = run(
      'jsonl',
      [
        '{"loss": 0.3, "grad_norm": 2.0, "learning_rate": 1e-06, "completions/mean_length": 121.0, "rewards/accuracy_reward/mean": 0.04, "rewards/format_reward/mean": 0.9, "reward": 0.6, "reward_std": 0.2, "kl": NaN, "clip_ratio/region_mean": 0.02, "global_step/max_steps": "1/5", "percentage": "20.00%", "elapsed_time": "1m 1s", "remaining_time": "1m 2s", "memory(GiB)": 21.5, "train_speed(iter/s)": 0.12}',
        '{"loss": 0.15, "kl": 0.002, "global_step/max_steps": "2/5", "percentage": "40.00%", "memory(GiB)": 21.5, "train_speed(iter/s)": 0.12}',
      ].join('\n'),
    );
    expect(steps.map((s) => s.step)).toEqual([1, 2]);
    expect(detectFormat(new TextEncoder().encode('{"loss": 0.3, "global_step/max_steps": "1/5", "percentage": "20.00%"}\n'))?.format).toBe(
      'jsonl',
    );
    expect(p.meta.framework).toBe('ms-swift');
    for (const k of ['memory(GiB)', 'train_speed(iter/s)', 'percentage', 'elapsed_time']) expect(k in steps[0].values).toBe(false);
    expect(p.meta.notes.join(' ')).not.toContain('percentage');
    const m = mapSourceStep(steps[0].values, 'ms-swift');
    expect(m.keyMap).toMatchObject({
      'actor/pg_loss': 'loss',
      'actor/kl_loss': 'kl',
      'response_length/mean': 'completions/mean_length',
      'episode/success_rate': 'rewards/accuracy_reward/mean',
      'episode/valid_format_ratio': 'rewards/format_reward/mean',
      'actor/pg_clipfrac': 'clip_ratio/region_mean',
      'episode/reward_mean': 'reward',
    });
    expect(m.values['actor/kl_loss']).toBeNaN();
    expect(m.values.reward_std).toBe(0.2);
  });

  it('ms-swift 4 logging.jsonl: train_speed(s/it) is progress, the end-of-training log is a summary, the closing run summary no step', () => {
    // Shortened from what ms-swift 4.6.0's `swift rlhf --rlhf_type grpo` wrote (swift.integration.test.ts runs it):
    // reward functions named by class, a step whose record holds only the update's keys, the Trainer's end log
    // with the last step, then ms-swift's run summary with the whole log_history and no global_step/max_steps.
    const { steps, p } = run(
      'jsonl',
      [
        '{"loss": 1e-08, "grad_norm": 1.10944867, "learning_rate": 0.00853553, "completions/mean_length": 12.0, "reward": 0.03846154, "reward_std": 0.07692308, "rewards/MathAccuracy/mean": 0.0, "rewards/Format/mean": 0.0, "rewards/Format/std": 0.0, "rewards/DigitShare/mean": 0.03846154, "kl": 0.0, "clip_ratio/region_mean": 0.0, "step_time": 0.34762556, "epoch": 0.03125, "global_step/max_steps": "1/2", "elapsed_time": "0s", "remaining_time": "1s", "train_speed(s/it)": 0.354534}',
        '{"loss": -0.01141518, "grad_norm": 0.14885515, "learning_rate": 0.005, "kl": 0.05455333, "clip_ratio/region_mean": 0.97916669, "epoch": 0.0625, "global_step/max_steps": "2/2", "elapsed_time": "0s", "remaining_time": "0s", "train_speed(s/it)": 0.19259}',
        '{"train_runtime": 0.5133, "train_samples_per_second": 31.17, "train_steps_per_second": 7.792, "total_flos": 0.0, "train_loss": -0.0047622, "epoch": 0.0625, "global_step/max_steps": "2/2", "elapsed_time": "1s", "remaining_time": "0s", "train_speed(s/it)": 0.127415}',
        '{"model_parameter_info": "Qwen2ForCausalLM: 0.0283M Params", "last_model_checkpoint": null, "best_model_checkpoint": null, "best_metric": null, "global_step": 2, "log_history": [{"loss": 1.4901161193847656e-08, "step": 1}, {"loss": -0.01141518, "step": 2}], "memory": 0}',
      ].join('\n'),
    );
    expect(steps.map((s) => s.step)).toEqual([1, 2]);
    expect(p.meta.framework).toBe('ms-swift');
    expect(p.skipped).toEqual({});
    expect(Object.keys(steps[1].values).sort()).toEqual(['clip_ratio/region_mean', 'epoch', 'grad_norm', 'kl', 'learning_rate', 'loss']);
    for (const s of steps)
      for (const k of ['train_speed(s/it)', 'train_runtime', 'memory', 'best_metric', 'global_step']) expect(k in s.values).toBe(false);
    expect(p.meta.finalMetrics).toEqual({
      train_runtime: 0.5133,
      train_samples_per_second: 31.17,
      train_steps_per_second: 7.792,
      total_flos: 0,
      train_loss: -0.0047622,
      epoch: 0.0625,
    });
    expect(p.meta.notes.join('\n')).toContain('end-of-training summary (not a step): train_runtime=0.5133');
    expect(p.meta.notes.join('\n')).toContain("ms-swift's run summary after training");
    const m = mapSourceStep(steps[0].values, 'ms-swift');
    expect(m.keyMap).toMatchObject({
      'episode/success_rate': 'rewards/MathAccuracy/mean',
      'episode/valid_format_ratio': 'rewards/Format/mean',
      'episode/reward_mean': 'reward',
    });
    expect(m.values['rewards/DigitShare/mean']).toBe(0.03846154);
    // The run summary alone in a file is still no step (nothing to import), not a step 2 of its numbers.
    expect(run('jsonl', '{"last_model_checkpoint": null, "global_step": 2, "log_history": [], "memory": 0}').steps).toEqual([]);
  });
});

describe('TRL / HF Trainer', () => {
  it('console dicts: ordinal steps, eval dict joins its step, the summary goes to finalMetrics', () => {
    const { steps, p } = run(
      'trl-console',
      [
        "{'loss': 0.0042, 'grad_norm': 0.108, 'learning_rate': 9.1e-06, 'reward': 0.018, 'epoch': 0.09}",
        " 20%|██        | 20/100 [00:10<00:40]\r{'loss': 0.0105, 'grad_norm': nan, 'epoch': 0.18}",
        "{'eval_loss': 0.5, 'eval_reward': 0.2, 'epoch': 0.18}",
        "{'train_runtime': 123.4, 'train_samples_per_second': 2.5, 'train_loss': 0.01, 'epoch': 1.0}",
        "{'loss': 0.1, 'epoch': 0.3",
      ].join('\n'),
    );
    expect(steps.map((s) => s.step)).toEqual([1, 2]);
    expect(steps[1].values).toMatchObject({ loss: 0.0105, eval_loss: 0.5, eval_reward: 0.2 });
    expect(steps[1].values.grad_norm).toBeNaN();
    expect(p.meta.finalMetrics).toMatchObject({ train_runtime: 123.4, train_loss: 0.01 });
    expect(p.meta.notes.join(' ')).toMatch(/log-line numbers/);
  });

  it('trainer_state.json: steps from log_history, config from the top-level fields', () => {
    const doc = JSON.stringify(
      {
        global_step: 20,
        logging_steps: 10,
        log_history: [
          { loss: 0.1, reward: 0.2, step: 10 },
          { eval_loss: 0.3, step: 10 },
          { loss: NaN, step: 20 },
          { train_runtime: 5, train_loss: 0.1, step: 20 },
        ],
      },
      null,
      2,
    ).replace('null', 'NaN');
    const { steps, p } = run('trainer-state', doc);
    expect(steps.map((s) => [s.step, Object.keys(s.values)])).toEqual([
      [10, ['loss', 'reward', 'eval_loss']],
      [20, ['loss']],
    ]);
    expect(steps[1].values.loss).toBeNaN();
    expect(p.meta.config).toEqual({ global_step: 20, logging_steps: 10 });
    expect(p.meta.finalMetrics).toEqual({ train_runtime: 5, train_loss: 0.1 });
  });

  it('a trainer_state.json past the size cap is refused with a note, not held', () => {
    const steps: SourceStep[] = [];
    const p = createTrainerStateParser((s) => steps.push(s), { maxChars: 40 });
    for (const l of ['{"log_history": [', '  {"loss": 0.1, "step": 10},', '  {"loss": 0.2, "step": 20}', ']}']) p.push(l);
    p.end();
    expect(steps).toEqual([]);
    expect(p.skipped).toEqual({ 'trainer_state.json too large to hold': 1 });
    expect(p.meta.notes.join(' ')).toMatch(/larger than 40 characters/);
  });

  it('a trainer_state.json that is not JSON is counted, not thrown', () => {
    const { steps, p } = run('trainer-state', '{"log_history": [ {"step": 1,');
    expect(steps).toEqual([]);
    expect(p.skipped).toEqual({ 'unparsable trainer_state.json': 1 });
  });
});

describe('CSV', () => {
  it('W&B export: one run per prefix, __MIN/__MAX dropped, empty cells absent', () => {
    const { steps, p } = run(
      'wandb-csv',
      [
        '"Step","run-a - actor/entropy","run-a - actor/entropy__MIN","run-a - actor/entropy__MAX","my - run - b - actor/entropy"',
        '"1","0.4","0.39","0.41","0.5"',
        '"2","","","","0.6"',
        '"3","NaN","","",""',
      ].join('\n'),
    );
    expect(steps).toEqual([
      { run: 'run-a', step: 1, values: { 'actor/entropy': 0.4 } },
      { run: 'my - run - b', step: 1, values: { 'actor/entropy': 0.5 } },
      { run: 'my - run - b', step: 2, values: { 'actor/entropy': 0.6 } },
      { run: 'run-a', step: 3, values: { 'actor/entropy': Number.NaN } },
    ]);
    expect(p.meta.notes.join(' ')).toMatch(/2 W&B __MIN\/__MAX companion/);
  });

  it('plain CSV with a step column; bad rows counted; a quoted newline reassembled', () => {
    const { steps, p } = run(
      'csv',
      ['global_step,loss,"tag, with comma",name', '1,0.5,2,"a ""quoted"" name"', 'x,1,2,3', '2,0.25,,"two', 'lines"'].join('\n'),
    );
    expect(steps).toEqual([
      { run: '', step: 1, values: { loss: 0.5, 'tag, with comma': 2 } },
      { run: '', step: 2, values: { loss: 0.25 } },
    ]);
    expect(p.skipped).toEqual({ 'row whose step is not a non-negative integer': 1 });
    expect(p.meta.notes.join(' ')).toMatch(/non-numeric cells ignored: name/);
  });

  it('splits RFC 4180 records', () => {
    expect(parseRecord('a,"b,c","d""e",,f')).toEqual(['a', 'b,c', 'd"e', '', 'f']);
    expect(parseRecord('"open')).toBeNull();
    expect(parseRecord('"x"y')).toBeNull();
  });
});

describe('DeepSpeed-Chat', () => {
  it('joins the reward and timing lines to the step line before them', () => {
    const { steps, p } = run(
      'deepspeed-chat',
      [
        '[2023-04-18 08:48:01,543] [INFO] [loss_scaler.py:188:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step.',
        'epoch: 0|step: 0|ppo_ep: 1|act_loss: 0.21|cri_loss: 0.12|unsuper_loss: 0.0',
        'average reward score: -0.679',
        '-------------------------------------------------------------------------------------',
        '|E2E latency=7.99s |Gather latency=0.00s (0.00%) |Generate time=5.26s (65.81%) |CurSamplesPerSec=8.01 |AvgSamplesPerSec=8.01',
        'epoch: 0|step: 1|ppo_ep: 1|act_loss: nan|cri_loss: 0.16|unsuper_loss: 0.0',
      ].join('\n'),
    );
    expect(steps.map((s) => s.step)).toEqual([0, 1]);
    expect(steps[0].values).toMatchObject({
      act_loss: 0.21,
      'average reward score': -0.679,
      'E2E latency': 7.99,
      'Generate time': 5.26,
      CurSamplesPerSec: 8.01,
    });
    expect(steps[1].values.act_loss).toBeNaN();
    expect(p.meta.notes.join(' ')).toMatch(/1 fp16 loss-scale overflow/);
  });
});

describe('value and literal readers', () => {
  it('reads the number spellings of Python loggers and nothing else', () => {
    expect(parseMetricNumber('np.float64(0.1)')).toBe(0.1);
    expect(parseMetricNumber("tensor(0.5, device='cuda:0')")).toBe(0.5);
    expect(parseMetricNumber('NaN')).toBeNaN();
    expect(parseMetricNumber('-inf')).toBe(-Infinity);
    expect(parseMetricNumber(' 0.5 ')).toBe(0.5);
    expect(parseMetricNumber(' nan')).toBeNaN();
    expect(parseMetricNumber('')).toBeUndefined();
    expect(parseMetricNumber('   ')).toBeUndefined();
    expect(parseMetricNumber('schedule')).toBeUndefined();
    expect(parseMetricNumber('foo(1)')).toBeUndefined();
  });

  it('reads plain decimals without a substring exactly as Number() does', () => {
    // A fixed LCG, so the cases are the same every run.
    let seed = 7;
    const next = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    for (let t = 0; t < 20000; t++) {
      const intDigits = next(10);
      const fracDigits = next(13);
      let s = next(3) === 0 ? '-' : '';
      for (let d = 0; d < intDigits; d++) s += String(next(10));
      if (fracDigits > 0 || intDigits === 0) s += '.';
      for (let d = 0; d < fracDigits; d++) s += String(next(10));
      const text = `k:${s} - `;
      const got = fastDecimal(text, 2, 2 + s.length);
      const want = Number(s);
      if (got === undefined)
        expect(s === '-' || s === '.' || s === '-.' || s.endsWith('.') || s.replace(/[-.]/g, '').length > 15, s).toBe(true);
      else expect(Object.is(got, want), `${s}: ${got} vs ${want}`).toBe(true);
    }
    expect(Object.is(fastDecimal('-0.000', 0, 6), -0)).toBe(true);
    for (const s of ['1e-05', 'nan', '1.2.3', '', '-', '12345678901234567']) expect(fastDecimal(s, 0, s.length), s).toBeUndefined();
  });

  it('parses Python reprs leniently and rejects broken structure', () => {
    expect(parsePyLiteral("{'a': (1, 2), 'b': [None, True], 'c': 'x' 'y', 'd': <obj at 0x1>, 'e': np.float32(2.5)}")).toEqual({
      a: [1, 2],
      b: [null, true],
      c: 'xy',
      d: '<obj at 0x1>',
      e: 2.5,
    });
    expect(() => parsePyLiteral("{'a': 1")).toThrow(/expected ',' or '}'/);
  });

  it('finds the end of a literal fed in pieces where literalEnd finds it in the whole', () => {
    const whole = "{'a': '}', 'b': [1, {'c': \"it's\"}], 'd': '\\''} trailing";
    const sc = new LiteralScanner(0);
    let text = '';
    let end = -1;
    for (const piece of whole.match(/.{1,5}/g)!) {
      text += piece;
      end = sc.scan(text);
      if (end >= 0) break;
    }
    expect(end).toBe(literalEnd(whole, 0));
    expect(whole.slice(0, end).endsWith("'\\''}")).toBe(true);
  });

  it('rebuilds a dict from pprint columns', () => {
    const r = parsePprintDict("{'a': {'b': 1,\n       'c': [1,\n             2]},\n 'd': 'x'}");
    expect(r).toEqual({ value: { a: { b: 1, c: [1, 2] }, d: 'x' }, lost: 0 });
  });
});
