/**
 * Format detection from content (names that lie included) and the metric mapping table.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isMetricKey } from '../../shared/metrics';
import { describeRealRuns } from '../../../tests/support/realRuns';
import { maskedCrc32c } from './crc32c';
import { describeFormats, detectFormat, guessFramework, LOG_FORMATS, MAPPING_TABLE, TRACKER_STORE_FORMATS, mapSourceStep } from './index';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const fmt = (s: string | Uint8Array, name?: string) => detectFormat(typeof s === 'string' ? enc(s) : s, { name })?.format ?? null;

function tfRecordHead(payloadLen: number, goodCrc: boolean): Uint8Array {
  const b = new Uint8Array(12 + payloadLen + 4);
  const v = new DataView(b.buffer);
  v.setUint32(0, payloadLen, true);
  v.setUint32(8, goodCrc ? maskedCrc32c(b.subarray(0, 8)) : 0x12345678, true);
  b[12] = 0x09;
  return b;
}

describe('detectFormat', () => {
  it('recognises every format from content whatever the name says', () => {
    expect(fmt('\x1b[36m(TaskRunner pid=1)\x1b[0m step:1 - actor/pg_loss:0.1 - a:2\n', 'metrics.csv')).toBe('verl-console');
    expect(fmt('{"step":0,"data":{"a":1}}\n{"step":1,"data":{"a":2}}\n', 'run.log')).toBe('verl-jsonl');
    expect(fmt('{"step": 3, "loss": NaN}\n', 'events.out.tfevents.1')).toBe('jsonl');
    expect(fmt('{"global_step": "300/1296", "loss": 1}\n')).toBe('jsonl');
    expect(fmt('{\n  "epoch": 1.0,\n  "global_step": 113,\n  "log_history": [\n    {\n      "loss": 0.1,\n', 'data.jsonl')).toBe(
      'trainer-state',
    );
    expect(fmt("  5%|▌  | 10/200 [00:10<03:10]\r{'loss': 0.0042, 'grad_norm': 0.1, 'learning_rate': 1e-05, 'epoch': 0.09}\n")).toBe(
      'trl-console',
    );
    expect(fmt('Beginning of Epoch 1/1\nepoch: 0|step: 0|ppo_ep: 1|act_loss: 0.2|cri_loss: 0.1|unsuper_loss: 0.0\n')).toBe(
      'deepspeed-chat',
    );
    expect(fmt('"Step","run-a - actor/entropy","run-a - actor/entropy__MIN"\n"1","0.4","0.4"\n', 'x.json')).toBe('wandb-csv');
    expect(fmt('iteration,loss,reward\n1,0.5,0.1\n')).toBe('csv');
    expect(fmt('{"config": {"lr": 1e-5}}\n{"step": 1, "loss": 0.5}\n')).toBe('jsonl');
    expect(fmt(`Beginning of Epoch 1/1, Total Generation Batches 477\n${'[INFO] warming up\n'.repeat(5)}`)).toBe('deepspeed-chat');
    expect(fmt(tfRecordHead(24, true), 'notes.txt')).toBe('tensorboard');
  });

  it('says a verl log whose head is still start-up output is verl', () => {
    const head = [
      "\x1b[36m(TaskRunner pid=7)\x1b[0m {'actor_rollout_ref': {'actor': {'clip_ratio': 0.2,",
      ...Array.from({ length: 5 }, () => '\x1b[36m(TaskRunner pid=7)\x1b[0m loading…'),
    ].join('\n');
    expect(detectFormat(enc(head))).toEqual({ format: 'verl-console', why: 'the head echoes a verl config dict (no step line yet)' });
  });

  it('refuses what is in no known format: prose, a bad-CRC TFRecord, binary, a zip (main imports bundles)', () => {
    expect(fmt("Let's start with the first step: add 2 and 3.\nstep:5 is not a metrics line\n")).toBeNull();
    expect(fmt(tfRecordHead(24, false))).toBeNull();
    expect(fmt(new Uint8Array([0, 1, 2, 3, 0, 0, 0, 0, 9, 9]))).toBeNull();
    expect(fmt(new Uint8Array([0x50, 0x4b, 0x03, 0x04, 20, 0]))).toBeNull();
    expect(fmt('{"name": "not metrics"}\n')).toBeNull();
    expect(fmt('a,b\n1,2\n')).toBeNull();
  });

  it('mentions a given file name in the explanation only, as an option or a plain string', () => {
    expect(detectFormat(enc('iteration,loss\n1,2\n'), 'x.jsonl')).toEqual({
      format: 'csv',
      why: 'CSV header with the step column "iteration" (x.jsonl)',
    });
    expect(detectFormat(enc('iteration,loss\n1,2\n'), { name: 'x.jsonl' })?.why).toMatch(/\(x\.jsonl\)$/);
  });

  it('describes every format, one line each, for the "no known format" message', () => {
    const lines = describeFormats().split('\n');
    expect(lines.map((l) => l.split(':')[0]).sort()).toEqual([...LOG_FORMATS, ...TRACKER_STORE_FORMATS].sort());
  });
});

describeRealRuns('detectFormat on every real-runs file (content only)', (dir) => {
  it('names the right format for each', () => {
    const files: string[] = [];
    const walk = (d: string): void => {
      for (const f of readdirSync(d)) {
        const p = join(d, f);
        if (statSync(p).isDirectory()) walk(p);
        else if (f !== 'README.md') files.push(p);
      }
    };
    walk(dir);
    const expected = (rel: string): string =>
      rel.startsWith('verl-console/')
        ? 'verl-console'
        : rel.startsWith('verl-jsonl/')
          ? 'verl-jsonl'
          : rel.startsWith('wandb-csv/')
            ? 'wandb-csv'
            : rel.startsWith('other-console/')
              ? 'deepspeed-chat'
              : rel.endsWith('trainer_state.json')
                ? 'trainer-state'
                : 'tensorboard';
    expect(files.length).toBeGreaterThanOrEqual(20);
    for (const p of files) {
      const buf = readFileSync(p);
      const rel = relative(dir, p);
      expect(fmt(new Uint8Array(buf.buffer, buf.byteOffset, Math.min(65536, buf.length))), rel).toBe(expected(rel));
    }
  });
});

describe('mapSourceStep', () => {
  it('maps old verl keys with their semantics and keeps unknown keys under their own names', () => {
    const m = mapSourceStep(
      {
        'actor/entropy_loss': 0.5,
        'critic/score/mean': 0.7,
        'critic/rewards/mean': 0.69,
        'actor/lr(1e-4)': 0.1,
        'critic/vf_loss': 3,
        'critic/kl': 0.01,
      },
      'verl',
    );
    expect(m.values).toEqual({
      'actor/entropy': 0.5,
      'episode/score_mean': 0.7,
      'episode/reward_mean': 0.69,
      'actor/lr': 1e-5,
      'actor/kl_loss': 0.01,
      'critic/vf_loss': 3,
    });
    expect(m.keyMap).toEqual({
      'actor/entropy': 'actor/entropy_loss',
      'episode/score_mean': 'critic/score/mean',
      'episode/reward_mean': 'critic/rewards/mean',
      'actor/lr': 'actor/lr(1e-4)',
      'actor/kl_loss': 'critic/kl',
    });
  });

  it('prefers the documented source when two compete, and keeps the loser visible', () => {
    const m = mapSourceStep({ 'actor/entropy_loss': 0.4, 'actor/entropy': 0.5, 'actor/kl_loss': 0.02, 'critic/kl': 0.01 }, 'verl');
    expect(m.keyMap['actor/entropy']).toBe('actor/entropy');
    expect(m.keyMap['actor/kl_loss']).toBe('actor/kl_loss');
    expect(m.values).toMatchObject({ 'actor/entropy': 0.5, 'actor/entropy_loss': 0.4, 'critic/kl': 0.01 });
  });

  it('maps validation keys by pattern, choosing by sorted key, not by log order', () => {
    const a = mapSourceStep({ 'val-core/b/reward/mean@1': 2, 'val-core/a/reward/mean@1': 1, 'val-core/x/acc/mean@1': 0.5 }, 'verl');
    expect(a.keyMap).toEqual({ 'val/score_mean': 'val-core/a/reward/mean@1', 'val/success_rate': 'val-core/x/acc/mean@1' });
    expect(a.values['val-core/b/reward/mean@1']).toBe(2);
  });

  it('reads TRL keys with or without the TensorBoard train/ prefix, and leaves bare names alone for verl', () => {
    const tb = mapSourceStep(
      {
        'train/loss': 0.1,
        'train/kl': 0.01,
        'train/completions/clipped_ratio': 0.9,
        'train/rewards/think_format_reward/mean': 0.5,
        'train/sampling/sampling_logp_difference/max': 0.3,
      },
      'trl',
    );
    expect(tb.keyMap).toEqual({
      'actor/pg_loss': 'train/loss',
      'actor/kl_loss': 'train/kl',
      'response_length/clip_ratio': 'train/completions/clipped_ratio',
      'episode/valid_format_ratio': 'train/rewards/think_format_reward/mean',
      'mismatch/logprob_abs_max': 'train/sampling/sampling_logp_difference/max',
    });
    expect(mapSourceStep({ loss: 1, reward: 2 }, 'verl').keyMap).toEqual({});
  });

  it('every rule targets a catalog key and lists that key itself first (a lab-shaped log maps onto itself)', () => {
    for (const r of MAPPING_TABLE) {
      expect(isMetricKey(r.catalog), r.catalog).toBe(true);
      expect(r.sources[0].key, r.catalog).toBe(r.catalog);
    }
    expect(new Set(MAPPING_TABLE.map((r) => r.catalog)).size).toBe(MAPPING_TABLE.length);
  });
});

describe('guessFramework', () => {
  it('tells the frameworks apart by their keys', () => {
    expect(guessFramework(['actor/entropy_loss', 'critic/score/mean'])).toBe('verl');
    expect(guessFramework(['actor/pg_loss', 'episode/success_rate'])).toBe('verl-agent');
    expect(guessFramework(['actor/pg_loss', 'actor/num_masked_seqs'])).toBe('arlarena');
    expect(guessFramework(['train/loss', 'train/lr(1e-3)'])).toBe('verl');
    expect(guessFramework(['act_loss', 'cri_loss', 'average reward score'])).toBe('deepspeed-chat');
    expect(guessFramework(['policy_loss', 'actor_lr', 'reward'])).toBe('openrlhf');
    expect(guessFramework(['env/all/reward/total', 'optim/kl_sample_train_v1'])).toBe('tinker');
    expect(guessFramework(['train/reward', 'train/completion_length'])).toBe('trl');
    expect(guessFramework(['foo', 'bar'])).toBe('unknown');
  });
});
