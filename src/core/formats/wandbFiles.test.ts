/**
 * The pieces of an older W&B client's run folder (wandb ≤ 0.9, no .wandb file), on inputs written here in the layout
 * wandb 0.9.7 writes: history rows as `json.dumps` writes them (bare NaN / Infinity), a config.yaml as PyYAML's
 * block style writes it. Folders wandb 0.9.7 itself wrote: src/main/imports/wandbOldSdk.integration.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  isWandbConfigYaml,
  isWandbHistoryHead,
  parseBlockYaml,
  parsePythonJson,
  wandbConfigFromYaml,
  wandbHistoryRow,
  wandbMetadata,
  wandbRunIdFromFolder,
  wandbSummaryValues,
} from './wandbFiles';

/** config.yaml of a verl-like run as wandb 0.9's wandb_config.py wrote it (yaml.dump, block style). */
const CONFIG_YAML = `wandb_version: 1

_wandb:
  desc: null
  value:
    cli_version: 0.9.7
    framework: torch
    is_jupyter_run: false
actor_rollout_ref:
  desc: null
  value:
    actor:
      clip_ratio: 0.2
      loss_agg_mode: token-mean
      optim:
        lr: 1.0e-06
    rollout:
      n: 5
      name: vllm
algorithm:
  desc: null
  value:
    adv_estimator: grpo
    use_kl_in_reward: false
data:
  desc: null
  value:
    train_files:
    - ~/data/gsm8k/train.parquet
    - ~/data/math/train.parquet
    empty: {}
    seed: null
    note: 'it''s quoted'
    inf: .inf
trainer:
  desc: null
  value:
    experiment_name: grpo-qwen
    logger:
    - console
    - wandb
`;

describe('older W&B run folder (files in the layout wandb 0.9.7 writes)', () => {
  it('reads config.yaml as the config W&B shows: values of each entry, W&B’s own entries left out', () => {
    expect(isWandbConfigYaml(CONFIG_YAML)).toBe(true);
    expect(isWandbConfigYaml('a: 1\nb: 2\n')).toBe(false);
    const cfg = wandbConfigFromYaml(CONFIG_YAML);
    expect(Object.keys(cfg)).toEqual(['actor_rollout_ref', 'algorithm', 'data', 'trainer']);
    expect(cfg.actor_rollout_ref).toEqual({
      actor: { clip_ratio: 0.2, loss_agg_mode: 'token-mean', optim: { lr: 1e-6 } },
      rollout: { n: 5, name: 'vllm' },
    });
    expect(cfg.algorithm).toEqual({ adv_estimator: 'grpo', use_kl_in_reward: false });
    expect(cfg.data).toEqual({
      train_files: ['~/data/gsm8k/train.parquet', '~/data/math/train.parquet'],
      empty: {},
      seed: null,
      note: "it's quoted",
      inf: Number.POSITIVE_INFINITY,
    });
    expect(cfg.trainer).toEqual({ experiment_name: 'grpo-qwen', logger: ['console', 'wandb'] });
  });

  it('reads lists of mappings and folded long strings, and refuses what is no mapping', () => {
    expect(parseBlockYaml('a:\n- name: x\n  n: 1\n- name: y\n  n: 2\nb: 3\n')).toEqual({
      a: [
        { name: 'x', n: 1 },
        { name: 'y', n: 2 },
      ],
      b: 3,
    });
    expect(parseBlockYaml('cmd: python train.py --a 1\n  --b 2\nn: 1\n')).toEqual({ cmd: 'python train.py --a 1 --b 2', n: 1 });
    expect(() => wandbConfigFromYaml('- a\n- b\n')).toThrow(/not a mapping/);
  });

  it('tells a history row by its content: _step with _runtime or _timestamp', () => {
    expect(isWandbHistoryHead('{"loss": 0.5, "_runtime": 3.2, "_timestamp": 1577836800.5, "_step": 0}\n{"loss": 0.4')).toBe(true);
    expect(isWandbHistoryHead('{"loss": NaN, "_step": 3, "_runtime": 1}')).toBe(true);
    // A flat JSONL stream with a step but none of W&B's own keys is not one.
    expect(isWandbHistoryHead('{"step": 0, "loss": 0.5}\n')).toBe(false);
    expect(isWandbHistoryHead('{"_step": 0, "loss": 0.5}\n')).toBe(false);
    expect(isWandbHistoryHead('not json')).toBe(false);
  });

  it('reads a history row: NaN and ±inf kept, nested dicts as a.b, _runtime kept, _timestamp the wall time, media left out', () => {
    const o = parsePythonJson(
      '{"actor/grad_norm": NaN, "actor/pg_loss": Infinity, "x": -Infinity, "timing": {"gen": 1.5, "update": {"actor": 0.25}}, "samples": {"_type": "table", "data": []}, "text": "hi", "_runtime": 4.5, "_timestamp": 1577836800.25, "_step": 7}',
    ) as Record<string, unknown>;
    const ignored: string[] = [];
    const row = wandbHistoryRow(o, (k) => ignored.push(k));
    expect(row).not.toBeNull();
    expect(row!.step).toBe(7);
    expect(row!.wallTime).toBe(1577836800.25);
    expect(row!.values).toEqual({
      'actor/grad_norm': Number.NaN,
      'actor/pg_loss': Number.POSITIVE_INFINITY,
      x: Number.NEGATIVE_INFINITY,
      'timing.gen': 1.5,
      'timing.update.actor': 0.25,
      _runtime: 4.5,
    });
    expect(ignored).toEqual(['samples', 'text']);
    expect(wandbHistoryRow({ loss: 1 }, () => undefined)).toBeNull();
    // A NaN inside a string stays text.
    expect(parsePythonJson('{"s": "NaN here", "v": NaN}')).toEqual({ s: 'NaN here', v: Number.NaN });
  });

  it('summary, metadata and the run id in the folder name', () => {
    expect(wandbSummaryValues({ loss: 0.1, nested: { a: 2 }, _step: 99, _runtime: 50, name: 'x' })).toEqual({ loss: 0.1, 'nested.a': 2 });
    expect(wandbMetadata({ name: 'grpo', project: 'p', startedAt: '2020-01-01T00:00:00.123456', state: 'failed', exitcode: 1 })).toEqual({
      name: 'grpo',
      project: 'p',
      startedAt: '2020-01-01T00:00:00.123456',
      state: 'failed',
      exitcode: 1,
    });
    expect(wandbMetadata(null)).toEqual({});
    expect(wandbRunIdFromFolder('run-20200101_120000-3abc9xyz')).toBe('3abc9xyz');
    expect(wandbRunIdFromFolder('dryrun-20200101_120000-3abc9xyz')).toBe('3abc9xyz');
    expect(wandbRunIdFromFolder('my-run')).toBeNull();
  });
});
