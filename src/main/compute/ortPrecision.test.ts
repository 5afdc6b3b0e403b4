/**
 * compute.rolloutPrecision on the onnxruntime engine (ortPrecision.ts): the float16 rounding and the int8 weight
 * quantiser on hand cases and against onnxruntime's own Cast; then, on a tiny model with weights well away from
 * init, the engine's token log-probs move away from the float32 trainer's by a bounded amount (fp16 < int8), greedy
 * decoding mostly agrees, and the trainer side (the weights, tfjs log-probs, a π_ref engine) does not change.
 * Measured when the bounds were set (seed 21, 6 rows × 24 tokens): |Δ log-prob| vs the trainer mean/max fp32
 * 3.8e-7 / 1.3e-6, fp16 6.8e-4 / 3.0e-3, int8 1.8e-2 / 6.5e-2; greedy tokens equal to fp32's: fp16 100 %, int8 98 %.
 */
import onnxProto from 'onnx-proto';
import * as ort from 'onnxruntime-node';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  initWeights,
  mismatchStats,
  PolicyModel,
  resolveModelConfig,
  TfjsRolloutEngine,
  type ModelConfig,
  type ModelWeights,
} from '../../core/agent';
import { Rng } from '../../core/util/rng';
import { initBackend, setupCompute, silenceTfjsBanner } from './index';
import { createOrtEngine } from './ortEngine';
import { float16Bits, float16Value, quantizeColumnsInt8, roundToFloat16, withRolloutPrecision } from './ortPrecision';
import { exportDecoderOnnx } from './ortDecoder';

beforeAll(async () => {
  silenceTfjsBanner();
  await initBackend('wasm');
});

function spreadWeights(cfg: ModelConfig, seed: number, scale: number): ModelWeights {
  const rng = new Rng(seed);
  const w = initWeights(cfg, rng);
  for (const a of Object.values(w.tensors)) for (let i = 0; i < a.length; i++) a[i] += rng.normal() * scale;
  return w;
}

describe('float16 and int8 conversions', () => {
  it('float16 bits: exact values, rounding to even, overflow, subnormals, NaN', () => {
    expect(float16Bits(1)).toBe(0x3c00);
    expect(float16Bits(-2)).toBe(0xc000);
    expect(float16Bits(65504)).toBe(0x7bff);
    expect(float16Bits(65520)).toBe(0x7c00); // halfway to 2^16 rounds to even: +inf
    expect(float16Bits(-1e9)).toBe(0xfc00);
    expect(float16Bits(2 ** -24)).toBe(0x0001);
    expect(float16Bits(2 ** -26)).toBe(0x0000);
    expect(float16Bits(1 + 2 ** -11)).toBe(0x3c00); // tie → even mantissa
    expect(float16Bits(1 + 3 * 2 ** -11)).toBe(0x3c02);
    expect(Number.isNaN(float16Value(float16Bits(NaN)))).toBe(true);
    expect(roundToFloat16(3.14159265)).toBe(3.140625);
  });

  it("float16 rounding equals onnxruntime's Cast(float → float16) on 4000 values across the range", async () => {
    const { onnx } = onnxProto;
    const vi = (name: string, t: number) => ({ name, type: { tensorType: { elemType: t, shape: { dim: [{ dimParam: 'n' }] } } } });
    const model = {
      irVersion: 8,
      opsetImport: [{ domain: '', version: 17 }],
      graph: {
        name: 'cast',
        node: [{ opType: 'Cast', input: ['x'], output: ['y'], attribute: [{ name: 'to', type: 2, i: 10 }] }],
        input: [vi('x', 1)],
        output: [vi('y', 10)],
      },
    };
    const session = await ort.InferenceSession.create(onnx.ModelProto.encode(onnx.ModelProto.create(model)).finish());
    const rng = new Rng(3);
    const x = new Float32Array(4000);
    for (let i = 0; i < x.length; i++) x[i] = (rng.float() < 0.5 ? -1 : 1) * 2 ** (rng.range(-27, 17) + rng.float());
    // Exact ties between two float16 values (normal and subnormal), where the rounding rule decides.
    for (let i = 0; i < 200; i++) x[i] = (1 + (2 * rng.int(1024) + 1) * 2 ** -11) * 2 ** rng.range(-14, 15);
    for (let i = 200; i < 300; i++) x[i] = (2 * rng.int(1024) + 1) * 2 ** -25;
    const y = (await session.run({ x: new ort.Tensor('float32', x, [x.length]) })).y.data as Uint16Array;
    let diff = 0;
    for (let i = 0; i < x.length; i++) if (y[i] !== float16Bits(x[i])) diff++;
    expect(diff).toBe(0);
    await session.release();
  });

  it('int8 weights: one symmetric scale per output column, round half to even, a zero column keeps scale 1', () => {
    // [K=2, N=3]: columns (1, −0.5), (0.25, 0.5), (0, 0)
    const { q, scale } = quantizeColumnsInt8(new Float32Array([1, 0.25, 0, -0.5, 0.5, 0]), 2, 3);
    expect(Array.from(scale)).toEqual([Math.fround(1 / 127), Math.fround(0.5 / 127), 1]);
    // −0.5·127 = −63.5 → −64 (even); 0.25/(0.5/127) = 63.5 → 64
    expect(Array.from(q)).toEqual([127, 64, 0, -64, 127, 0]);
  });

  it('the int8 graph has DynamicQuantizeMatMul where the weight matmuls were; fp16 keeps the float32 interface', () => {
    const cfg = resolveModelConfig({ size: 'custom', dModel: 16, nLayers: 2, nHeads: 2, dFF: 32, maxSeqLen: 64 }, 24);
    const bytes = exportDecoderOnnx(spreadWeights(cfg, 1, 0.1));
    const { onnx } = onnxProto;
    const base = onnx.ModelProto.decode(bytes);
    const int8 = onnx.ModelProto.decode(withRolloutPrecision(bytes, 'int8'));
    const gemms = base
      .graph!.node!.filter((n) => n.opType === 'Gemm' || n.opType === 'MatMul')
      .filter((n) => base.graph!.initializer!.some((t) => t.name === n.input![1]));
    expect(gemms.length).toBe(4 * 2 + 1); // qkv, wo, w1, w2 per layer + the output projection
    expect(int8.graph!.node!.filter((n) => n.opType === 'DynamicQuantizeMatMul').length).toBe(gemms.length);
    expect(int8.graph!.initializer!.some((t) => t.name === 'h0.mlp.w1')).toBe(false);
    const fp16 = onnx.ModelProto.decode(withRolloutPrecision(bytes, 'fp16'));
    expect(fp16.graph!.initializer!.filter((t) => t.dataType === 1).map((t) => t.name)).toEqual(['prec_mask_min']);
    expect(fp16.graph!.input!.map((i) => i.type!.tensorType!.elemType)).toEqual(
      base.graph!.input!.map((i) => i.type!.tensorType!.elemType),
    );
    expect(fp16.graph!.output!.map((i) => i.type!.tensorType!.elemType)).toEqual(
      base.graph!.output!.map((i) => i.type!.tensorType!.elemType),
    );
    expect(withRolloutPrecision(bytes, 'fp32')).toBe(bytes);
    expect(() => withRolloutPrecision(bytes, 'fp8' as 'fp16')).toThrow(/unknown precision "fp8"; known: fp32, fp16, int8/);
  });
});

describe('the rollout engine at reduced precision vs the float32 trainer', () => {
  const cfg = resolveModelConfig({ size: 'custom', dModel: 48, nLayers: 2, nHeads: 4, dFF: 96, maxSeqLen: 96 }, 40);
  const rng = new Rng(5);
  const prompts = Array.from({ length: 6 }, () => [1, ...Array.from({ length: rng.range(4, 20) }, () => 2 + rng.int(38))]);
  const opts = { maxNewTokens: 24, temperature: 1, topP: 1, topK: 0, stopIds: [] };

  it('log-probs move by a bounded, measured amount (fp16 < int8); greedy decoding mostly agrees; the trainer does not change', async () => {
    const w = spreadWeights(cfg, 21, 0.15);
    const before = Object.fromEntries(Object.entries(w.tensors).map(([k, v]) => [k, v.slice()]));
    const trainer = new TfjsRolloutEngine(PolicyModel.fromWeights(w, 'trainer'));
    const fp32 = await createOrtEngine(w);
    const sampled = await fp32.generate(prompts, opts, new Rng(7));
    const rows = prompts.map((p, i) => ({ promptIds: p, responseIds: sampled.tokens[i] }));
    const lpTrainer = await trainer.logProbs(rows);
    expect(mismatchStats(await fp32.logProbs(rows), lpTrainer).max).toBeLessThan(1e-5);
    const greedy = { ...opts, temperature: 0 };
    const greedy32 = (await fp32.generate(prompts, greedy, new Rng(1))).tokens;
    const measured: Record<string, { mean: number; max: number; greedyAgree: number }> = {};
    for (const precision of ['fp16', 'int8'] as const) {
      const engine = await createOrtEngine(w, { precision });
      expect(engine.name).toBe(`onnxruntime-cpu-${precision}`);
      const mm = mismatchStats(await engine.logProbs(rows), lpTrainer);
      // The sampler's own log-probs (decoder graph) carry the same gap as its scoring pass (full-sequence graph).
      const own = await engine.generate(prompts, opts, new Rng(7));
      const ownRows = prompts.map((p, i) => ({ promptIds: p, responseIds: own.tokens[i] }));
      const ownGap = mismatchStats(own.logProbs, await trainer.logProbs(ownRows));
      expect(ownGap.mean).toBeGreaterThan(mm.mean / 3);
      expect(ownGap.mean).toBeLessThan(mm.mean * 3);
      const g = (await engine.generate(prompts, greedy, new Rng(1))).tokens;
      let same = 0;
      let total = 0;
      greedy32.forEach((r, i) =>
        r.forEach((t, j) => {
          total++;
          if (g[i][j] === t) same++;
        }),
      );
      measured[precision] = { mean: mm.mean, max: mm.max, greedyAgree: same / total };
      await engine.dispose();
    }
    // Lower bounds: it does differ, by far more than the float32 engine's ~1e-6; upper bounds: not by much.
    expect(measured.fp16.mean).toBeGreaterThan(1e-4);
    expect(measured.fp16.mean).toBeLessThan(3e-3);
    expect(measured.fp16.max).toBeLessThan(2e-2);
    expect(measured.int8.mean).toBeGreaterThan(3e-3);
    expect(measured.int8.mean).toBeLessThan(8e-2);
    expect(measured.int8.max).toBeLessThan(0.4);
    expect(measured.int8.mean).toBeGreaterThan(5 * measured.fp16.mean);
    expect(measured.fp16.greedyAgree).toBeGreaterThanOrEqual(0.9);
    expect(measured.int8.greedyAgree).toBeGreaterThanOrEqual(0.75);
    // The trainer side is untouched: same weights bit for bit, same tfjs log-probs.
    for (const [k, v] of Object.entries(w.tensors)) expect(v, k).toEqual(before[k]);
    expect(await trainer.logProbs(rows)).toEqual(lpTrainer);
    await fp32.dispose();
  });

  it('setupCompute: rollout engines get the precision, the π_ref engine stays float32; tfjs rollouts refuse it', async () => {
    const w = spreadWeights(cfg, 22, 0.15);
    const c = await setupCompute({ backend: 'wasm', rolloutEngine: 'onnxruntime', rolloutPrecision: 'int8' });
    expect(c.info.rollout).toBe('onnxruntime-cpu-int8');
    expect(c.info.detail).toMatch(/int8/);
    const rollout = await c.createRolloutEngine(w);
    const ref = await c.createRolloutEngine(w, 'reference');
    const fp32 = await createOrtEngine(w);
    const rows = prompts.map((p) => ({ promptIds: p, responseIds: [3, 4, 5, 6, 7] }));
    const base = await fp32.logProbs(rows);
    expect(await ref.logProbs(rows)).toEqual(base);
    expect(mismatchStats(await rollout.logProbs(rows), base).mean).toBeGreaterThan(3e-3);
    for (const e of [rollout, ref, fp32]) await e.dispose();
    await expect(setupCompute({ backend: 'wasm', rolloutEngine: 'tfjs', rolloutPrecision: 'fp16' })).rejects.toThrow(
      /set compute.rolloutEngine=onnxruntime or compute.rolloutPrecision=fp32/,
    );
    await expect(createOrtEngine(w, { precision: 'bf16' as 'fp16' })).rejects.toThrow(
      /precision must be one of fp32, fp16, int8, got "bf16"/,
    );
  });
});
