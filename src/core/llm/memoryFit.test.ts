import { describe, expect, it } from 'vitest';
import { parseLlmConfig } from './config';
import { parseLoraSpec } from './lora';
import { estimateLlmMemory, type LlmMemoryEstimate } from './memory';
import { MEMORY_HEADROOM, WASM_HEAP_BYTES, memoryFit } from './memoryFit';

const GiB = 2 ** 30;
/** An estimate with given parts (GiB). */
function est(weights: number, state: number, act: number): LlmMemoryEstimate {
  return {
    weightsBytes: weights * GiB,
    trainingStateBytes: state * GiB,
    activationBytes: act * GiB,
    totalBytes: (weights + state + act) * GiB,
    params: 1,
    trainableParams: 1,
  };
}

/** Qwen2.5-0.5B's config.json fields (the shapes docs/guides/llm.md's memory table uses). */
const qwen05b = parseLlmConfig({
  architectures: ['Qwen2ForCausalLM'],
  hidden_size: 896,
  intermediate_size: 4864,
  num_hidden_layers: 24,
  num_attention_heads: 14,
  num_key_value_heads: 2,
  max_position_embeddings: 32768,
  vocab_size: 151936,
  rms_norm_eps: 1e-6,
  rope_theta: 1000000,
  tie_word_embeddings: true,
});

describe('memoryFit: the estimate against what the training backend can hold', () => {
  it('allows up to 80 % of the machine on native TensorFlow, and refuses a byte more', () => {
    const machine = { totalBytes: 20 * GiB, backend: 'tensorflow' };
    const budget = MEMORY_HEADROOM * 20 * GiB;
    expect(budget).toBe(16 * GiB);
    const at = memoryFit(est(4, 4, 8), machine, { lora: false });
    expect(at).toMatchObject({ fits: true, budgetBytes: budget, limitBytes: 20 * GiB, limitedBy: 'machine' });
    expect(at.message).toBe(
      "fits: needs weights 4.00 GiB + gradients and AdamW state 4.00 GiB + activations 8.00 GiB = 16.00 GiB, within 16.00 GiB (80 % of this machine's 20.00 GiB)",
    );
    const over = memoryFit({ ...est(4, 4, 8), totalBytes: budget + 1 }, machine, { lora: false });
    expect(over.fits).toBe(false);
    expect(over.message).toMatch(/^does not fit: needs .* over 16\.00 GiB \(80 % of this machine's 20\.00 GiB\); /);
  });

  it('says parts under 1 GiB in MiB, so a small checkpoint does not read "0.00 GiB"', () => {
    const small = { ...est(0, 0, 0), weightsBytes: 460_800, trainingStateBytes: 573_440, activationBytes: 500 * 2 ** 20, totalBytes: 0 };
    const total = small.weightsBytes + small.trainingStateBytes + small.activationBytes;
    expect(memoryFit({ ...small, totalBytes: total }, { totalBytes: 16 * GiB, backend: 'tensorflow' }, { lora: true }).message).toBe(
      "fits: needs weights 0.4 MiB + LoRA adapters and their AdamW state 0.5 MiB + activations 500.0 MiB = 501.0 MiB, within 12.80 GiB (80 % of this machine's 16.00 GiB)",
    );
  });

  it('on tfjs-wasm the 4 GiB heap is the limit however much the machine has, and the fix names native TensorFlow', () => {
    const big = { totalBytes: 64 * GiB, backend: 'wasm' };
    const f = memoryFit(est(2, 0.5, 1), big, { lora: true });
    expect(f).toMatchObject({ fits: false, limitBytes: WASM_HEAP_BYTES, limitedBy: 'wasm-heap', budgetBytes: 0.8 * 4 * GiB });
    expect(f.message).toMatch(/over 3\.20 GiB \(80 % of tfjs-wasm's 4 GiB heap \(this machine has 64\.00 GiB\)\)/);
    expect(f.message).toMatch(/native TensorFlow \(npm run setup:tensorflow\)/);
    // The same run fits on native TensorFlow on that machine.
    expect(memoryFit(est(2, 0.5, 1), { ...big, backend: 'tensorflow' }, { lora: true }).fits).toBe(true);
    // A machine smaller than the heap: the machine is the limit, even on wasm.
    expect(memoryFit(est(1, 0, 0), { totalBytes: 2 * GiB, backend: 'wasm' }, { lora: true }).limitedBy).toBe('machine');
  });

  it('says what to change: LoRA for full fine-tuning state, fewer rows for activations, a smaller model for weights', () => {
    const m = { totalBytes: 16 * GiB, backend: 'tensorflow' };
    expect(memoryFit(est(2, 7, 5), m, { lora: false }).message).toMatch(
      /; train LoRA adapters instead of every weight; use fewer rows per chunk or a shorter context$/,
    );
    expect(memoryFit(est(2, 0.1, 40), m, { lora: true }).message).toMatch(/; use fewer rows per chunk or a shorter context$/);
    expect(memoryFit(est(14, 0, 0), m, { lora: true }).message).toMatch(/the float32 weights alone exceed it: pick a smaller model/);
    expect(memoryFit(est(12, 1, 0.1), m, { lora: true }).message).toMatch(/lower the LoRA rank or target fewer modules$/);
  });

  it('says the GPU memory is not probed on tfjs-node-gpu', () => {
    expect(memoryFit(est(1, 1, 1), { totalBytes: 32 * GiB, backend: 'tensorflow-gpu' }, { lora: false }).message).toMatch(
      /80 % of this machine's 32\.00 GiB; GPU memory is not probed\)/,
    );
  });

  it('Qwen2.5-0.5B on a 16 GiB laptop: LoRA with one 1024-token row fits on native TensorFlow, full fine-tuning of 8 rows does not', () => {
    const work1 = { rows: 1, seqLen: 1024, responseTokens: 256 };
    const lora = memoryFit(
      estimateLlmMemory(qwen05b, work1, parseLoraSpec('r=16,alpha=32')),
      { totalBytes: 16 * GiB, backend: 'tensorflow' },
      {
        lora: true,
      },
    );
    expect(lora.fits).toBe(true);
    const full = memoryFit(
      estimateLlmMemory(qwen05b, { ...work1, rows: 8 }, null),
      { totalBytes: 16 * GiB, backend: 'tensorflow' },
      { lora: false },
    );
    expect(full.fits).toBe(false);
    expect(full.message).toMatch(/use fewer rows per chunk or a shorter context/);
    // On tfjs-wasm even the LoRA run is refused: weights + one row's activations pass the heap's 3.2 GiB.
    const wasm = memoryFit(
      estimateLlmMemory(qwen05b, work1, parseLoraSpec('r=16,alpha=32')),
      { totalBytes: 16 * GiB, backend: 'wasm' },
      {
        lora: true,
      },
    );
    expect(wasm.fits).toBe(false);
  });

  it('refuses a machine size that is not a positive number', () => {
    expect(() => memoryFit(est(1, 1, 1), { totalBytes: 0, backend: 'wasm' }, { lora: true })).toThrow(
      /machine.totalBytes must be a positive number, got 0/,
    );
  });
});
