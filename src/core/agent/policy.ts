/**
 * The two small contracts the trainer and the rollout hold a policy to, so that the lab's own model (PolicyModel +
 * its word tokenizer) and a pretrained Hugging Face model (src/core/llm: LlmTrainerPolicy + its chat-templated BPE
 * tokenizer) train through the same loop:
 *
 *   TrainerPolicy   what the update needs: differentiable response log-probs, the variables AdamW steps, the
 *                   dims the activation estimate chunks by, and a host copy of the trained weights (checkpoints,
 *                   the undo of an abandoned step). PolicyModel satisfies it as it is.
 *   PromptCodec     what a rollout needs from a tokenizer: a turn's prompt ids (truncated to fit), decoding, and the
 *                   ids that end a response. `labPromptCodec` is exactly what runRollout always did with the lab's
 *                   tokenizer (<bos> + the text's ids, the oldest dropped to fit), so the lab path is unchanged.
 */
import type * as tf from '@tensorflow/tfjs';
import type { Rng } from '../util/rng';
import type { LogProbRow, TokenLogProbs } from './model';
import type { Tokenizer } from './tokenizer';

/** Host weights by tensor name (the lab's ModelWeights is one; an LLM's adapters are another). */
export interface PolicyWeights {
  readonly tensors: Record<string, Float32Array>;
}

/** Model dims the activation-memory estimate (training/chunking.ts) reads, plus the context length. */
export interface PolicyShape {
  readonly nLayers: number;
  readonly nHeads: number;
  readonly dModel: number;
  readonly dFF: number;
  readonly vocabSize: number;
  /** Prompt + response tokens a row may hold. */
  readonly maxSeqLen: number;
}

export interface TrainerPolicy {
  readonly config: PolicyShape;
  /** Differentiable log-probs, entropies and mask [N, R] of each row's response (use inside tf.variableGrads). */
  tokenLogProbs(rows: readonly LogProbRow[], opts?: { temperature?: number }): TokenLogProbs;
  /** What AdamW updates (every weight of the lab model; LoRA's A/B, or every base weight, of an LLM). */
  trainableVariables(): tf.Variable[];
  /** Host copy of the trainable weights. */
  getWeights(): PolicyWeights;
  /** Put back a copy taken with getWeights. */
  setWeights(w: PolicyWeights): void;
  /**
   * Training mode for the update's forward passes (`rng` draws dropout masks, e.g. LoRA dropout) or evaluation
   * (`null`: sampling, old and reference log-probs). Absent: the policy has no train/eval difference.
   */
  setTraining?(rng: Rng | null): void;
  dispose(): void;
}

/** What runRollout needs from a tokenizer. */
export interface PromptCodec {
  /** Ids of one turn's prompt for the user text, at most `maxPrompt` tokens (`truncated` when text was dropped). */
  promptIds(text: string, maxPrompt: number): { ids: number[]; truncated: boolean };
  decode(ids: readonly number[]): string;
  /** Ids that end a response when the sampling options name none. */
  readonly stopIds: readonly number[];
}

export function isPromptCodec(t: Tokenizer | PromptCodec): t is PromptCodec {
  return typeof (t as Partial<PromptCodec>).promptIds === 'function';
}

/** The lab tokenizer as a PromptCodec: `<bos>` + the text's ids, keeping the most recent ones when too long. */
export function labPromptCodec(tok: Tokenizer): PromptCodec {
  return {
    promptIds(text, maxPrompt) {
      const body = tok.encode(text);
      const ids = [tok.bosId, ...body];
      if (ids.length <= maxPrompt) return { ids, truncated: false };
      return { ids: [tok.bosId, ...body.slice(body.length - (maxPrompt - 1))], truncated: true };
    },
    decode: (ids) => tok.decode(ids),
    stopIds: [tok.actionCloseId, tok.eosId],
  };
}
