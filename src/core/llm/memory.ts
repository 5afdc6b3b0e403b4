/**
 * What training an HF causal LM in the lab needs in memory, estimated before a run starts (so a run that cannot fit
 * is refused up front, not killed midway). Everything the lab computes is float32 (4 bytes per value):
 *
 *   weights      4 · P                       (P = base parameters; bf16/fp16 checkpoints are widened on load)
 *   training     full fine-tuning: gradients 4 · P + AdamW moments 8 · P;
 *                LoRA: the adapters' weights, gradients and moments, 16 · P_lora (the base gets no gradient)
 *   activations  what the backward pass keeps for one mini-batch chunk of `rows` × `seqLen` tokens: per layer and
 *                token about 12·d + 4·(H + 2·KV)·D + 5·I values (norm inputs, q/k/v before and after the rotary
 *                embedding, MLP gate/up/product), the attention probabilities H · seqLen per token and layer, and
 *                the response positions' logits, log-probs and probabilities (3 · V per response token)
 * It is an estimate of tensors alive at the peak, not of the allocator's behaviour: keep a margin (the CLI and the
 * app compare it with 80 % of what the machine has).
 */
import { llmParamCount, type LlmConfig } from './config';
import { loraParamCount, type LoraSettings } from './lora';

export interface LlmMemoryEstimate {
  weightsBytes: number;
  /** Gradients + optimizer state (full) or the adapters' weights, gradients and moments (LoRA). */
  trainingStateBytes: number;
  activationBytes: number;
  totalBytes: number;
  params: number;
  trainableParams: number;
}

export function estimateLlmMemory(
  cfg: LlmConfig,
  work: { rows: number; seqLen: number; responseTokens: number },
  lora: LoraSettings | null,
): LlmMemoryEstimate {
  const P = llmParamCount(cfg);
  const trainable = lora ? loraParamCount(cfg, lora) : P;
  const { hiddenSize: d, numHeads: H, numKvHeads: KV, headDim: D, intermediateSize: I, numLayers: L, vocabSize: V } = cfg;
  const tokens = work.rows * work.seqLen;
  const perTokenLayer = 12 * d + 4 * (H + 2 * KV) * D + 5 * I + H * work.seqLen;
  const activations = 4 * (tokens * L * perTokenLayer + 3 * V * work.rows * work.responseTokens);
  const weights = 4 * P;
  const state = lora ? 16 * trainable : 12 * P;
  return {
    weightsBytes: weights,
    trainingStateBytes: state,
    activationBytes: activations,
    totalBytes: weights + state + activations,
    params: P,
    trainableParams: trainable,
  };
}
