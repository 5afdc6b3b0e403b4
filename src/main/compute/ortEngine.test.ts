/**
 * OrtRolloutEngine.setWeights after the first builds the full-sequence graph (logits / logProbs) only when it is next
 * used: the log-probs it then gives must be exactly those of an engine created with the same weights, at every
 * precision, and a caller reusing the weights' arrays after setWeights must not reach the graph built later. Callers
 * at the same time share one build, and a build for weights replaced meanwhile never answers a later call.
 */
import * as ort from 'onnxruntime-node';
import { describe, expect, it, vi } from 'vitest';
import { initWeights, resolveModelConfig, type LogProbRow, type ModelConfig, type ModelWeights } from '../../core/agent';
import { Rng } from '../../core/util/rng';
import { createOrtEngine } from './ortEngine';

function spreadWeights(cfg: ModelConfig, seed: number, scale: number): ModelWeights {
  const rng = new Rng(seed);
  const w = initWeights(cfg, rng);
  for (const a of Object.values(w.tensors)) for (let i = 0; i < a.length; i++) a[i] += rng.normal() * scale;
  return w;
}

describe('onnxruntime engine: the full-sequence graph after setWeights', () => {
  const cfg = resolveModelConfig({ size: 'custom', dModel: 32, nLayers: 2, nHeads: 4, dFF: 64, maxSeqLen: 64 }, 30);
  const rng = new Rng(3);
  const rows: LogProbRow[] = Array.from({ length: 5 }, () => ({
    promptIds: [1, ...Array.from({ length: rng.range(3, 12) }, () => 2 + rng.int(cfg.vocabSize - 2))],
    responseIds: Array.from({ length: rng.range(1, 10) }, () => 2 + rng.int(cfg.vocabSize - 2)),
  }));

  for (const precision of ['fp32', 'int8'] as const) {
    it(`${precision}: logProbs and logits after a later setWeights equal a fresh engine's on those weights`, async () => {
      const a = spreadWeights(cfg, 11, 0.2);
      const b = spreadWeights(cfg, 12, 0.2);
      const fresh = await createOrtEngine(b, { precision });
      const want = await fresh.logProbs(rows, 0.8);
      const wantLogits = await fresh.logits(rows.map((r) => Array.from(r.promptIds)));
      await fresh.dispose();

      const engine = await createOrtEngine(a, { precision });
      const before = await engine.logProbs(rows, 0.8);
      await engine.setWeights(b);
      // The caller's arrays change after the call (a trainer reusing its buffers): the engine kept its own copy.
      for (const t of Object.values(b.tensors)) t.fill(0);
      expect(await engine.logProbs(rows, 0.8)).toEqual(want);
      expect((await engine.logits(rows.map((r) => Array.from(r.promptIds)))).data).toEqual(wantLogits.data);
      expect(before).not.toEqual(want);
      await engine.dispose();
    });
  }

  it('calls at the same time build the graph once; one built for weights replaced meanwhile is released, not used', async () => {
    const a = spreadWeights(cfg, 15, 0.2);
    const b = spreadWeights(cfg, 16, 0.2);
    const fresh = await createOrtEngine(a);
    const wantA = await fresh.logProbs(rows, 0.8);
    await fresh.dispose();
    const engine = await createOrtEngine(a);
    await engine.setWeights(b);
    // onnxruntime's own session creation, held back while `gate` is set when it is called (a slow build).
    const create = ort.InferenceSession.create.bind(ort.InferenceSession) as (...a: unknown[]) => Promise<ort.InferenceSession>;
    let gate: Promise<void> | null = null;
    const built = vi.spyOn(ort.InferenceSession, 'create').mockImplementation((async (...args: unknown[]) => {
      const held = gate;
      const session = await create(...args);
      if (held) await held;
      return session;
    }) as typeof ort.InferenceSession.create);
    try {
      // Two callers of the full-sequence graph at once: one build.
      const [x, y] = await Promise.all([engine.logProbs(rows, 0.8), engine.logProbs(rows, 0.8)]);
      expect(x).toEqual(y);
      expect(built).toHaveBeenCalledTimes(1);
      // A build for b still under way when the caller sets a: the log-probs after are a's.
      await engine.setWeights(b);
      let open!: () => void;
      gate = new Promise((r) => (open = r));
      const during = engine.logProbs(rows, 0.8);
      gate = null;
      await engine.setWeights(a);
      open();
      await during;
      expect(await engine.logProbs(rows, 0.8)).toEqual(wantA);
    } finally {
      built.mockRestore();
      await engine.dispose();
    }
  });

  it('a disposed engine refuses logProbs with the fix', async () => {
    const engine = await createOrtEngine(spreadWeights(cfg, 13, 0.1));
    await engine.setWeights(spreadWeights(cfg, 14, 0.1));
    await engine.dispose();
    await expect(engine.logProbs(rows)).rejects.toThrow(/call setWeights\(weights\) before generate\/logProbs/);
  });
});
