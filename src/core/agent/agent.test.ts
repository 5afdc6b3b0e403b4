import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../util/rng';
import { ENV_CATALOG, expertEpisode, heldOutSeeds } from '../envs/index';
import { fitTestbedTokenizer } from './corpus';
import {
  buildBias,
  deserializeModel,
  mismatchStats,
  normalizeText,
  PolicyModel,
  resolveModelConfig,
  sampleToken,
  serializeModel,
  sha256Hex,
  TfjsRolloutEngine,
  Tokenizer,
  paramCount,
} from './index';

const CORPUS = [
  'your task is to : push the box onto the target\n # \t _ \t O \t\n # \t P \t X \t',
  '<think>the box is left of me , so i push left</think><action>left</action>',
  'you have already taken 3 step(s) . below are the most recent 2 observations',
  '√ is a box on a target',
];

beforeAll(async () => {
  await tf.setBackend('cpu');
  // The cpu backend prints a tfjs-node advert on first use in Node; the app silences it in src/main/compute.
  (tf.findBackend('cpu') as unknown as { firstUse: boolean }).firstUse = false;
});

describe('tokenizer', () => {
  const tok = Tokenizer.fit(CORPUS);
  it('puts the special tokens first and the tags as single tokens', () => {
    expect(tok.vocab.slice(0, 8)).toEqual(['<pad>', '<bos>', '<eos>', '<unk>', '<think>', '</think>', '<action>', '</action>']);
    expect(tok.encode('<think>x</think><action>left</action>')).toEqual([4, tok.id('x'), 5, 6, tok.id('left'), 7]);
  });
  it('round-trips normalised text, including unseen words and symbols', () => {
    for (const t of [...CORPUS, 'an unseen Word, 42 times!\n\n  spaced   out\t', '√ box on target']) {
      expect(tok.decode(tok.encode(t))).toBe(normalizeText(t));
    }
  });
  it('is deterministic and survives JSON', () => {
    const again = Tokenizer.fit(CORPUS);
    expect(again.vocab).toEqual(tok.vocab);
    const back = Tokenizer.fromJSON(JSON.parse(JSON.stringify(tok.toJSON())));
    expect(back.vocab).toEqual(tok.vocab);
    expect(() => Tokenizer.fromJSON({ format: 'x', version: 1, vocab: [] })).toThrow(/format/);
  });
  it('maps characters it never saw to <unk>', () => {
    expect(tok.encode('日')).toEqual([tok.unkId]);
  });
  it('version 2 makes each declared identifier one token wherever it stands; version 1 still spells it out', () => {
    const text = 'page 1 [SEP] b01048 [SEP] b00350\n<think>b01048 is cheap .</think><action>click[b01048]</action>';
    const v2 = Tokenizer.fit([text], { extraPieces: ['b01048', 'b00350', 'b09999'] });
    const id = v2.id('b01048');
    expect(id).toBeDefined();
    expect(v2.id('b09999')).toBeDefined();
    expect(v2.encode(text).filter((t) => t === id)).toHaveLength(3);
    expect(v2.decode(v2.encode(text))).toBe(text);
    // an id the vocabulary lacks falls back to characters and still round-trips
    expect(v2.decode(v2.encode('click[x77]'))).toBe('click[x77]');
    const v1 = Tokenizer.fromJSON({ ...v2.toJSON(), version: 1 });
    expect(v1.version).toBe(1);
    expect(v1.encode(text)).not.toContain(id);
    expect(v1.decode(v1.encode(text))).toBe(text);
    expect(Tokenizer.fromJSON(JSON.parse(JSON.stringify(v2.toJSON()))).encode(text)).toEqual(v2.encode(text));
    expect(() => Tokenizer.fit([text], { extraPieces: ['two words'] })).toThrow(/not one version-2 piece/);
    expect(() => Tokenizer.fromJSON({ ...v2.toJSON(), version: 3 })).toThrow(/versions 1, 2/);
  });
});

describe('sha256', () => {
  it('matches the FIPS 180-4 test vectors', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    );
  });
});

describe('model', () => {
  const tok = Tokenizer.fit(CORPUS);
  const cfg = resolveModelConfig({ size: 'custom', dModel: 32, nLayers: 2, nHeads: 4, dFF: 64, maxSeqLen: 64 }, tok.size);

  it('validates sizes with actionable messages', () => {
    expect(() => resolveModelConfig({ size: 'huge' as never }, 100)).toThrow(/known sizes/);
    expect(() => resolveModelConfig({ size: 'custom', dModel: 30, nLayers: 1, nHeads: 4, dFF: 8, maxSeqLen: 8 }, 100)).toThrow(/divisible/);
    const nano = resolveModelConfig({ size: 'nano' }, 200);
    expect(paramCount(nano)).toBeGreaterThan(100_000);
    expect(paramCount(nano)).toBeLessThan(500_000);
    const small = resolveModelConfig({ size: 'small' }, 200);
    expect(paramCount(small)).toBeGreaterThan(2_000_000);
    expect(paramCount(small)).toBeLessThan(5_000_000);
    const base = resolveModelConfig({ size: 'base' }, 200);
    expect(paramCount(base)).toBeGreaterThan(10_000_000);
    expect(paramCount(base)).toBeLessThan(25_000_000);
  });

  it('initialises deterministically from the seed', () => {
    const a = PolicyModel.create(cfg, new Rng(7), 't_a');
    const b = PolicyModel.create(cfg, new Rng(7), 't_a');
    const c = PolicyModel.create(cfg, new Rng(8), 't_a');
    expect(b.name).not.toBe(a.name);
    expect(a.getWeights().tensors.wte).toEqual(b.getWeights().tensors.wte);
    expect(a.getWeights().tensors.wte).not.toEqual(c.getWeights().tensors.wte);
    [a, b, c].forEach((m) => m.dispose());
  });

  it('tokenLogProbs agrees with forward() and ignores right padding', () => {
    const m = PolicyModel.create(cfg, new Rng(1), 't_lp');
    const rows = [
      { promptIds: [1, 10, 11, 12], responseIds: [4, 13, 5, 7] },
      { promptIds: [1, 14], responseIds: [6, 15, 7] },
    ];
    const out = m.tokenLogProbs(rows, { temperature: 0.7 });
    const lp = out.logProbs.arraySync();
    const mask = out.mask.arraySync();
    const ent = out.entropy.arraySync();
    expect(mask).toEqual([
      [1, 1, 1, 1],
      [1, 1, 1, 0],
    ]);
    rows.forEach((r, i) => {
      const seq = [...r.promptIds, ...r.responseIds];
      const logits = m.forward(tf.tensor2d([seq], [1, seq.length], 'int32'));
      const logp = (tf.logSoftmax(tf.div(logits, 0.7)) as tf.Tensor3D).arraySync()[0];
      r.responseIds.forEach((t, j) => {
        const pos = r.promptIds.length - 1 + j;
        expect(lp[i][j]).toBeCloseTo(logp[pos][t], 5);
        const e = -logp[pos].reduce((s, l) => s + Math.exp(l) * l, 0);
        expect(ent[i][j]).toBeCloseTo(e, 4);
      });
    });
    expect(Math.abs(lp[1][3])).toBe(0);
    m.dispose();
  });

  it('GELU as x·σ(2u) (model.geluForm sigmoid) is the tanh form within float rounding; absent means tanh, bit for bit', () => {
    const w = PolicyModel.create(cfg, new Rng(3), 't_gelu').getWeights();
    const ids = tf.tensor2d([[1, 10, 11, 12, 4, 13, 5, 7, 6, 15]], [1, 10], 'int32');
    const logits = (form?: 'sigmoid' | 'tanh'): Float32Array => {
      const { geluForm: _g, ...base } = w.config;
      const m = PolicyModel.fromWeights({ ...w, config: form ? { ...base, geluForm: form } : base }, `t_gelu_${form ?? 'absent'}`);
      const out = m.forward(ids).dataSync() as Float32Array;
      m.dispose();
      return out;
    };
    const absent = logits();
    const tanh = logits('tanh');
    const sigmoid = logits('sigmoid');
    expect(tanh).toEqual(absent);
    let worst = 0;
    for (let i = 0; i < tanh.length; i++) worst = Math.max(worst, Math.abs(sigmoid[i] - tanh[i]));
    expect(worst).toBeLessThan(1e-5);
    // Two float roundings of one function: some logits differ in their last bits.
    expect(Array.from(sigmoid).some((v, i) => v !== tanh[i])).toBe(true);
    expect(resolveModelConfig({ size: 'nano', geluForm: 'sigmoid' }, 200).geluForm).toBe('sigmoid');
    expect(resolveModelConfig({ size: 'nano' }, 200).geluForm).toBeUndefined();
    ids.dispose();
  });

  it('gives gradients for every variable through tokenLogProbs', () => {
    const m = PolicyModel.create(cfg, new Rng(2), 't_grad');
    const { value, grads } = tf.variableGrads(() => {
      const o = m.tokenLogProbs([{ promptIds: [1, 9], responseIds: [4, 10, 7] }]);
      return tf.neg(tf.sum(tf.mul(o.logProbs, o.mask))) as tf.Scalar;
    }, m.trainableVariables());
    expect(Number.isFinite(value.dataSync()[0])).toBe(true);
    expect(Object.keys(grads).length).toBe(m.trainableVariables().length);
    expect(tf.sum(tf.abs(grads[`${m.name}/wte`])).dataSync()[0]).toBeGreaterThan(0);
    m.dispose();
  });

  it('save/load round-trips weights and tokenizer and catches corruption', () => {
    const m = PolicyModel.create(cfg, new Rng(3), 't_io');
    const files = serializeModel(m.getWeights(), tok, { step: 5 });
    const back = deserializeModel(files);
    expect(back.tokenizer.vocab).toEqual(tok.vocab);
    expect(back.meta).toEqual({ step: 5 });
    for (const [k, v] of Object.entries(m.getWeights().tensors)) expect(back.weights.tensors[k]).toEqual(v);
    const bad = { ...files, 'weights.bin': files['weights.bin'].slice() };
    bad['weights.bin'][17] ^= 1;
    expect(() => deserializeModel(bad)).toThrow(/weights.bin is corrupted/);
    m.dispose();
  });
});

describe('sampling and the tfjs engine', () => {
  const tok = Tokenizer.fit(CORPUS);
  const cfg = resolveModelConfig({ size: 'custom', dModel: 32, nLayers: 2, nHeads: 4, dFF: 64, maxSeqLen: 64 }, tok.size);

  it('top-k 1 is greedy and top-p keeps the nucleus', () => {
    const logits = new Float32Array([0, 3, 1, 2]);
    const rng = new Rng(1);
    for (let i = 0; i < 20; i++) expect(sampleToken(logits, 0, 4, { temperature: 1, topK: 1, topP: 1 }, rng).token).toBe(1);
    const seen = new Set<number>();
    for (let i = 0; i < 200; i++) seen.add(sampleToken(logits, 0, 4, { temperature: 1, topK: 0, topP: 0.7 }, rng).token);
    expect([...seen].sort()).toEqual([1, 3]);
  });

  it('same seed → same samples; log-probs match a recomputation; left padding does not change results', async () => {
    const m = PolicyModel.create(cfg, new Rng(4), 't_gen');
    const engine = new TfjsRolloutEngine(m, 'cpu');
    const prompts = [
      [1, 9, 10, 11],
      [1, 12],
    ];
    const opts = { maxNewTokens: 6, temperature: 1, topP: 1, topK: 0, stopIds: [7] };
    const a = await engine.generate(prompts, opts, new Rng(99));
    const b = await engine.generate(prompts, opts, new Rng(99));
    expect(a).toEqual(b);
    const rows = prompts.map((p, i) => ({ promptIds: p, responseIds: a.tokens[i] }));
    const re = await engine.logProbs(rows);
    expect(mismatchStats(a.logProbs, re).max).toBeLessThan(1e-4);
    // The KV-cache engine (default) and full recomputation agree.
    const recompute = new TfjsRolloutEngine(m, 'cpu', false, { kvCache: false });
    const c = await recompute.generate(prompts, opts, new Rng(99));
    expect(c.tokens).toEqual(a.tokens);
    expect(mismatchStats(c.logProbs, a.logProbs).max).toBeLessThan(1e-4);
    // Left padding must not change a row's result: greedy decoding of each prompt alone equals the batch.
    const greedy = { ...opts, temperature: 0 };
    const batch = await engine.generate(prompts, greedy, new Rng(1));
    for (let i = 0; i < prompts.length; i++) {
      const solo = await engine.generate([prompts[i]], greedy, new Rng(1));
      expect(solo.tokens[0]).toEqual(batch.tokens[i]);
      expect(mismatchStats(solo.logProbs, [batch.logProbs[i]]).max).toBeLessThan(1e-4);
    }
    m.dispose();
  });

  it('builds a causal, pad-aware attention bias', () => {
    const valid = new Uint8Array([0, 1, 1, 1, 1, 1]);
    const bias = buildBias(valid, 2, 3, 0, 3);
    expect(Array.from(bias.subarray(0, 9)).map((x) => (x === 0 ? 1 : 0))).toEqual([0, 0, 0, 0, 1, 0, 0, 1, 1]);
    expect(Array.from(bias.subarray(9, 18)).map((x) => (x === 0 ? 1 : 0))).toEqual([1, 0, 0, 1, 1, 0, 1, 1, 1]);
  });
});

describe('env context defaults', () => {
  // ENV_CATALOG's contextTokens promises that a default run on the env does not truncate prompts; check it
  // against the testbed tokenizer on held-out expert episodes at the env's default history window.
  it("every env's contextTokens holds its expert prompts and responses at the default history window", () => {
    const tok = fitTestbedTokenizer();
    for (const e of ENV_CATALOG) {
      const env = e.create();
      let longest = 0;
      for (const seed of heldOutSeeds(40)) {
        for (const t of expertEpisode(env, seed, e.historyWindow).turns) {
          longest = Math.max(longest, 1 + tok.encode(t.prompt).length + tok.encode(t.response).length + 1);
        }
      }
      expect(longest, `${e.name}: longest expert row ${longest} tokens vs contextTokens ${e.contextTokens}`).toBeLessThanOrEqual(
        e.contextTokens,
      );
    }
  });
});
