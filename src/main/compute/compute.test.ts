import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { mismatchStats, PolicyModel, resolveModelConfig, TfjsRolloutEngine, type ModelConfig } from '../../core/agent';
import { Rng } from '../../core/util/rng';
import { BackendUnavailableError, initBackend, setupCompute } from './index';
import { createOrtEngine } from './ortEngine';
import { nvidiaGpuPresent, tensorflowLoadProblem } from './tensorflow';

let cfg: ModelConfig;

beforeAll(async () => {
  const info = await initBackend('wasm');
  expect(info.training).toBe('wasm');
  cfg = resolveModelConfig({ size: 'custom', dModel: 48, nLayers: 2, nHeads: 4, dFF: 96, maxSeqLen: 96 }, 40);
});

function randomRows(rng: Rng, n: number, V: number, minLen: number, maxLen: number): number[][] {
  return Array.from({ length: n }, () => Array.from({ length: rng.range(minLen, maxLen) }, () => rng.int(V)));
}

describe('backends', () => {
  it('compute.backend tensorflow-gpu on a machine without an NVIDIA GPU is refused with the reason; on one with a GPU it trains there', async () => {
    if (!nvidiaGpuPresent()) {
      await expect(initBackend('tensorflow-gpu')).rejects.toThrow(BackendUnavailableError);
      await expect(initBackend('tensorflow-gpu')).rejects.toThrow(
        /"tensorflow-gpu" is not available on this machine: no NVIDIA GPU on this machine.*compute.backend "auto"/,
      );
      expect(tf.getBackend()).toBe('wasm');
    } else {
      const info = await initBackend('tensorflow-gpu');
      expect(info.training).toBe('tensorflow-gpu');
      expect(info.tensorflow?.gpu).toBeTruthy();
      await initBackend('wasm');
    }
  });
  it('a native package that cannot load says why in one line, with the fix', () => {
    expect(tensorflowLoadProblem('@tensorflow/tfjs-node', "Cannot find package '@tensorflow/tfjs-node' imported from x")).toBe(
      '@tensorflow/tfjs-node is not installed (npm ci installs it)',
    );
    const unbuilt =
      'The Node.js native addon module (tfjs_binding.node) can not be found at path: /x/lib/napi-v8/tfjs_binding.node. \nPlease run command ...';
    expect(tensorflowLoadProblem('@tensorflow/tfjs-node', unbuilt)).toBe(
      "@tensorflow/tfjs-node's native binding is not built (run `npm run setup:tensorflow`)",
    );
    expect(tensorflowLoadProblem('@tensorflow/tfjs-node-gpu', unbuilt)).toMatch(/setup:tensorflow -- --gpu/);
    expect(
      tensorflowLoadProblem(
        '@tensorflow/tfjs-node',
        'libtensorflow_cc.so.2: cannot open shared object file: No such file or directory\nmore',
      ),
    ).toMatch(/cannot find the TensorFlow library .*setup:tensorflow/);
    expect(tensorflowLoadProblem('@tensorflow/tfjs-node', 'boom\nstack')).toBe('@tensorflow/tfjs-node failed to load (boom)');
  });
  it('setupCompute records the choice', async () => {
    const c = await setupCompute({ backend: 'wasm', rolloutEngine: 'onnxruntime' });
    expect(c.info.training).toBe('wasm');
    expect(c.info.rollout).toBe('onnxruntime-cpu');
    expect(c.info.detail).toMatch(/onnxruntime-node/);
  });
});

describe('wasm BatchMatMul fix', () => {
  /** float64 reference of a [B, M, K] · b [B or 1, K, N] with optional transposes of the last two axes. */
  function reference(
    a: Float32Array,
    b: Float32Array,
    B: number,
    bB: number,
    M: number,
    K: number,
    N: number,
    ta: boolean,
    tb: boolean,
  ): Float64Array {
    const out = new Float64Array(B * M * N);
    for (let i = 0; i < B; i++) {
      const j = bB === 1 ? 0 : i;
      for (let m = 0; m < M; m++) {
        for (let n = 0; n < N; n++) {
          let s = 0;
          for (let k = 0; k < K; k++) s += a[i * M * K + (ta ? k * M + m : m * K + k)] * b[j * K * N + (tb ? n * K + k : k * N + n)];
          out[(i * M + m) * N + n] = s;
        }
      }
    }
    return out;
  }

  it('batched products (sliced onto the fast path), transposed forms and broadcast right operands equal a float64 reference', () => {
    const rng = new Rng(5);
    const cases: Array<[number, number, number, number, number, boolean, boolean]> = [
      [6, 6, 17, 5, 9, false, false],
      [6, 6, 17, 5, 9, true, false],
      [6, 6, 17, 5, 9, false, true],
      [6, 6, 17, 5, 9, true, true],
      [6, 1, 17, 5, 9, false, false],
      [1, 1, 40, 12, 7, false, false],
    ];
    for (const [B, bB, M, K, N, ta, tb] of cases) {
      const a = Float32Array.from({ length: B * M * K }, () => rng.float() * 2 - 1);
      const b = Float32Array.from({ length: bB * K * N }, () => rng.float() * 2 - 1);
      const got = tf.tidy(() =>
        tf.matMul(tf.tensor3d(a, ta ? [B, K, M] : [B, M, K]), tf.tensor3d(b, tb ? [bB, N, K] : [bB, K, N]), ta, tb).dataSync(),
      );
      const want = reference(a, b, B, bB, M, K, N, ta, tb);
      expect(got.length).toBe(want.length);
      let worst = 0;
      for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]));
      expect(worst, `case ${JSON.stringify([B, bB, M, K, N, ta, tb])}`).toBeLessThan(1e-5);
    }
  });
});

describe('wasm kernel replacements', () => {
  it('GatherV2 of rows copies the indexed rows, refuses an index out of range, and leaves other gathers to wasm', () => {
    const rng = new Rng(9);
    const rows = 13;
    const inner = 7;
    const table = Float32Array.from({ length: rows * inner }, () => rng.float() * 2 - 1);
    const ids = [
      [3, 0, 12],
      [12, 5, 3],
    ];
    const got = tf.tidy(() =>
      tf.gather(tf.tensor2d(table, [rows, inner]), tf.tensor2d(ids, [2, 3], 'int32')).arraySync(),
    ) as unknown as number[][][];
    expect(got.map((r) => r.map((v) => v.length))).toEqual([
      [7, 7, 7],
      [7, 7, 7],
    ]);
    ids.forEach((r, i) => r.forEach((id, j) => expect(Float32Array.from(got[i][j])).toEqual(table.subarray(id * inner, (id + 1) * inner))));
    expect(() => tf.tidy(() => tf.gather(tf.tensor2d(table, [rows, inner]), tf.tensor1d([2, rows], 'int32')))).toThrow(
      /index value 13 is not in \[0, 12\]/,
    );
    // Along axis 1: wasm's own kernel.
    const cols = tf.tidy(() =>
      tf
        .gather(
          tf.tensor2d([
            [1, 2, 3],
            [4, 5, 6],
          ]),
          tf.tensor1d([2, 0], 'int32'),
          1,
        )
        .arraySync(),
    );
    expect(cols).toEqual([
      [3, 1],
      [6, 4],
    ]);
  });
  it('Slice and SplitV copy the same values as a plain-array reference, for every rank and dtype they take', () => {
    const data = Array.from({ length: 4 * 6 * 5 }, (_, i) => i - 37);
    const x3 = tf.tensor3d(data, [4, 6, 5]);
    const x2 = tf.tensor2d(data, [24, 5]);
    const i2 = tf.tensor2d(data, [24, 5], 'int32');
    const rows2 = (b: [number, number], s: [number, number]) =>
      Array.from({ length: s[0] }, (_, r) => data.slice((b[0] + r) * 5 + b[1], (b[0] + r) * 5 + b[1] + s[1]));
    expect(tf.slice(x2, [3, 1], [7, 3]).arraySync()).toEqual(rows2([3, 1], [7, 3]));
    expect(tf.slice(i2, [0, 2], [24, 2]).arraySync()).toEqual(rows2([0, 2], [24, 2]));
    expect(tf.slice(x2, [5, 0], [2, 5]).arraySync()).toEqual(rows2([5, 0], [2, 5]));
    // A contiguous 3-D slice (whole inner dims) and a non-contiguous one (wasm's own kernel).
    expect(tf.slice(x3, [1, 0, 0], [2, 6, 5]).arraySync()).toEqual(x3.arraySync().slice(1, 3));
    expect(tf.slice(x3, [0, 2, 1], [4, 3, 2]).arraySync()).toEqual(x3.arraySync().map((m) => m.slice(2, 5).map((r) => r.slice(1, 3))));
    const [q, k, v] = tf.split(x2, [2, 2, 1], 1);
    expect([q.arraySync(), k.arraySync(), v.arraySync()]).toEqual([rows2([0, 0], [24, 2]), rows2([0, 2], [24, 2]), rows2([0, 4], [24, 1])]);
    for (const t of [x3, x2, i2, q, k, v]) t.dispose();
  });
  it('UnsortedSegmentSum (the embedding gradient) sums rows per segment and skips ids out of range', () => {
    const x = tf.tensor2d([
      [1, 2],
      [3, 4],
      [5, 6],
      [7, 8],
    ]);
    const sums = tf.tidy(() => tf.unsortedSegmentSum(x, tf.tensor1d([2, 0, 2, 9], 'int32'), 3).arraySync());
    expect(sums).toEqual([
      [3, 4],
      [0, 0],
      [6, 8],
    ]);
    x.dispose();
  });
  it('Identity and a same-dtype Cast share the buffer: each survives the other being disposed, and memory is freed once', () => {
    const before = tf.memory().numBytes;
    const a = tf.tensor1d([1, 2, 3]);
    const b = tf.clone(a);
    const c = tf.cast(a, 'float32');
    a.dispose();
    expect(Array.from(b.dataSync())).toEqual([1, 2, 3]);
    b.dispose();
    expect(Array.from(c.dataSync())).toEqual([1, 2, 3]);
    c.dispose();
    expect(tf.memory().numBytes).toBe(before);
    const d = tf.tidy(() => tf.cast(tf.tensor1d([1.5, -2.5]), 'int32'));
    expect(d.dtype).toBe('int32');
    expect(Array.from(d.dataSync())).toEqual([1, -2]);
    d.dispose();
  });
});

describe('onnxruntime engine vs tfjs', () => {
  it('ORT logits equal tfjs logits within 1e-4 on random inputs', async () => {
    const rng = new Rng(11);
    const model = PolicyModel.create(cfg, rng, 'ort_logits');
    // Larger-than-init weights make the check meaningful (init logits are all close to 0).
    const w = model.getWeights();
    for (const a of Object.values(w.tensors)) for (let i = 0; i < a.length; i++) a[i] += rng.normal() * 0.2;
    model.setWeights(w);
    const ort = await createOrtEngine(w);
    const rows = randomRows(rng, 5, cfg.vocabSize, 3, 40);
    const { data, T } = await ort.logits(rows);
    const ids = tf.tensor2d(
      rows.map((r) => [...r, ...Array(T - r.length).fill(0)]),
      [rows.length, T],
      'int32',
    );
    const ref = model.forward(ids).dataSync();
    let maxDiff = 0;
    let maxAbs = 0;
    rows.forEach((r, i) => {
      for (let c = 0; c < r.length; c++) {
        for (let v = 0; v < cfg.vocabSize; v++) {
          const k = (i * T + c) * cfg.vocabSize + v;
          maxDiff = Math.max(maxDiff, Math.abs(ref[k] - data[k]));
          maxAbs = Math.max(maxAbs, Math.abs(ref[k]));
        }
      }
    });
    expect(maxAbs).toBeGreaterThan(1);
    expect(maxDiff).toBeLessThan(1e-4);
    await ort.dispose();
    model.dispose();
  });

  it('KV-cache generation equals full recomputation, and the same seed gives the same samples', async () => {
    const rng = new Rng(12);
    const model = PolicyModel.create(cfg, rng, 'ort_gen');
    const w = model.getWeights();
    for (const a of Object.values(w.tensors)) for (let i = 0; i < a.length; i++) a[i] += rng.normal() * 0.1;
    model.setWeights(w);
    const ort = await createOrtEngine(w);
    const full = new TfjsRolloutEngine(model, 'wasm', false, { kvCache: false });
    const tfjsKv = new TfjsRolloutEngine(model, 'wasm');
    const prompts = randomRows(rng, 6, cfg.vocabSize, 2, 20).map((p) => [1, ...p]);
    const opts = { maxNewTokens: 24, temperature: 1, topP: 0.95, topK: 20, stopIds: [7] };
    const a = await ort.generate(prompts, opts, new Rng(3));
    const b = await full.generate(prompts, opts, new Rng(3));
    expect(a.tokens).toEqual(b.tokens);
    expect(mismatchStats(a.logProbs, b.logProbs).max).toBeLessThan(1e-4);
    const c = await tfjsKv.generate(prompts, opts, new Rng(3));
    expect(c.tokens).toEqual(b.tokens);
    expect(mismatchStats(c.logProbs, b.logProbs).max).toBeLessThan(1e-4);
    const again = await ort.generate(prompts, opts, new Rng(3));
    expect(again).toEqual(a);
    const other = await ort.generate(prompts, opts, new Rng(4));
    expect(other.tokens).not.toEqual(a.tokens);
    // Forward-only log-probs of the sampled rows: ORT full-sequence and the trainer's tokenLogProbs.
    const rows = prompts.map((p, i) => ({ promptIds: p, responseIds: a.tokens[i] }));
    expect(mismatchStats(await ort.logProbs(rows), a.logProbs).max).toBeLessThan(1e-4);
    expect(mismatchStats(await full.logProbs(rows), a.logProbs).max).toBeLessThan(1e-4);
    await ort.dispose();
    model.dispose();
  });
});

describe('onnxruntime log-probs with a shared prompt prefix', () => {
  it("equal the plain computation and the trainer's tokenLogProbs", async () => {
    const rng = new Rng(13);
    const model = PolicyModel.create(cfg, rng, 'ort_prefix');
    const w = model.getWeights();
    for (const a of Object.values(w.tensors)) for (let i = 0; i < a.length; i++) a[i] += rng.normal() * 0.1;
    model.setWeights(w);
    const ort = await createOrtEngine(w, { chunkRows: 4 });
    const intro = [1, ...randomRows(rng, 1, cfg.vocabSize, 20, 20)[0]];
    const same = [...intro, 5, 6, 7];
    const rows = [
      { promptIds: same, responseIds: [4, 9, 10, 5, 6, 11, 7] },
      { promptIds: same, responseIds: [4, 12, 5, 6, 13, 7] },
      ...randomRows(rng, 7, cfg.vocabSize, 1, 30).map((tail, i) => ({
        promptIds: [...intro, ...tail],
        responseIds: randomRows(rng, 1, cfg.vocabSize, 1 + i, 1 + i)[0],
      })),
      { promptIds: [1, 2], responseIds: [3] },
    ];
    const shared = await ort.logProbs(rows, 0.8);
    const plain = await ort.logProbs(rows, 0.8, { sharePrefix: false });
    const trainer = await new TfjsRolloutEngine(model, 'wasm').logProbs(rows, 0.8);
    expect(mismatchStats(shared, plain).max).toBeLessThan(1e-5);
    expect(mismatchStats(shared, trainer).max).toBeLessThan(1e-4);
    await ort.dispose();
    model.dispose();
  });
});

describe('training on wasm', () => {
  it('learns a tiny copy task in a few hundred steps', async () => {
    // Prompt: <bos> a1..a5 <sep>; response: a1..a5 <eos>. Symbols are ids 10..19, <sep> is 9. One layer suffices
    // (attend to the token 6 positions back) and keeps the test to ~10 s on a busy 2-core machine.
    const copyCfg = resolveModelConfig({ size: 'custom', dModel: 32, nLayers: 1, nHeads: 4, dFF: 64, maxSeqLen: 16 }, 20);
    const model = PolicyModel.create(copyCfg, new Rng(21), 'copy');
    const opt = tf.train.adam(1e-2);
    const rng = new Rng(22);
    const batch = (n: number) =>
      Array.from({ length: n }, () => {
        const s = Array.from({ length: 5 }, () => 10 + rng.int(10));
        return { promptIds: [1, ...s, 9], responseIds: [...s, 2] };
      });
    const lossOf = (rows: ReturnType<typeof batch>) => {
      const o = model.tokenLogProbs(rows);
      return tf.div(tf.neg(tf.sum(tf.mul(o.logProbs, o.mask))), tf.sum(o.mask)) as tf.Scalar;
    };
    const first = tf.tidy(() => lossOf(batch(64)).dataSync()[0]);
    for (let step = 0; step < 200; step++) {
      const rows = batch(16);
      tf.tidy(() => {
        opt.minimize(() => lossOf(rows), false, model.trainableVariables());
      });
    }
    const last = tf.tidy(() => lossOf(batch(64)).dataSync()[0]);
    expect(first).toBeGreaterThan(2);
    expect(last).toBeLessThan(0.1);
    opt.dispose();
    model.dispose();
  });
});
