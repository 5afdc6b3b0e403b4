/**
 * An HF causal LM behind the trainer's two contracts (src/core/agent/policy.ts), so that a pretrained checkpoint
 * trains through the same loop as the lab's own model:
 *
 *   LlmTrainerPolicy  TrainerPolicy: response log-probs, the variables AdamW steps (LoRA's A/B, or every base
 *                     weight without LoRA) under stable names (PEFT's adapter names, or the checkpoint's tensor
 *                     names) for checkpoints, training mode (LoRA dropout) for the update only
 *   LlmPromptCodec    PromptCodec: a turn's prompt through the model's chat template (LlmPolicy.promptIds); a prompt
 *                     longer than the room left loses the oldest characters of its user text
 *   baseReference     π_ref of a LoRA run without a second copy: the same model with the adapters bypassed
 *
 * tfjs variable names are global and carry a per-process counter (`llm#3/…`), so optimizer state and checkpoints
 * use `stableNames`: the name without that prefix, the same in every process.
 */
import * as tf from '@tensorflow/tfjs';
import type { LogProbRow, TokenLogProbs } from '../agent/model';
import type { PolicyShape, PolicyWeights, PromptCodec, TrainerPolicy } from '../agent/policy';
import type { Rng } from '../util/rng';
import type { HfCausalLM } from './causalLm';
import type { LlmPolicy } from './policy';

/** The dims the activation estimate reads, from an HF config, and the run's context length. */
export function llmPolicyShape(model: HfCausalLM, maxSeqLen: number): PolicyShape {
  const c = model.config;
  return { nLayers: c.numLayers, nHeads: c.numHeads, dModel: c.hiddenSize, dFF: c.intermediateSize, vocabSize: c.vocabSize, maxSeqLen };
}

export class LlmTrainerPolicy implements TrainerPolicy {
  readonly config: PolicyShape;
  /** Trainable variables with their stable names, in the order AdamW sees them. */
  private readonly entries: ReadonlyArray<{ readonly key: string; readonly v: tf.Variable }>;

  constructor(
    readonly policy: LlmPolicy,
    maxSeqLen: number,
  ) {
    this.config = llmPolicyShape(policy.model, maxSeqLen);
    const lora = policy.lora;
    const model = policy.model;
    this.entries = lora
      ? Object.keys(lora.vars)
          .sort()
          .map((key) => ({ key, v: lora.vars[key] }))
      : model.specs().map((s) => ({ key: s.name, v: model.vars[s.name] }));
  }

  tokenLogProbs(rows: readonly LogProbRow[], opts: { temperature?: number } = {}): TokenLogProbs {
    return this.policy.tokenLogProbs(rows, opts);
  }

  trainableVariables(): tf.Variable[] {
    return this.entries.map((e) => e.v);
  }

  /** tfjs variable name → stable name (the name without the model's per-process prefix). */
  stableNames(): Map<string, string> {
    return new Map(this.entries.map((e) => [e.v.name, e.key]));
  }

  /** Shapes by stable name. */
  shapes(): Record<string, number[]> {
    return Object.fromEntries(this.entries.map((e) => [e.key, [...e.v.shape]]));
  }

  getWeights(): PolicyWeights {
    return { tensors: Object.fromEntries(this.entries.map((e) => [e.key, new Float32Array(e.v.dataSync())])) };
  }

  setWeights(w: PolicyWeights): void {
    for (const e of this.entries) {
      const data = w.tensors[e.key];
      if (!data) throw new Error(`LLM policy weights lack "${e.key}" (a checkpoint of another model or LoRA setting?)`);
      if (data.length !== e.v.size) throw new Error(`LLM policy weights: "${e.key}" has ${data.length} values, expected ${e.v.size}`);
      tf.tidy(() => e.v.assign(tf.tensor(data, e.v.shape, 'float32')));
    }
  }

  setTraining(rng: Rng | null): void {
    this.policy.setTraining(rng);
  }

  dispose(): void {
    this.policy.lora?.dispose();
    this.policy.model.dispose();
  }
}

/** π_ref of a LoRA run: the policy's own model with the adapters bypassed (B·A skipped, the frozen base). */
export function baseReference(policy: LlmPolicy, shape: PolicyShape): Pick<TrainerPolicy, 'config' | 'tokenLogProbs'> {
  return {
    config: shape,
    tokenLogProbs(rows, opts = {}) {
      const model = policy.model;
      const hook = model.projectionHook;
      model.projectionHook = null;
      try {
        return model.tokenLogProbs(rows, opts);
      } finally {
        model.projectionHook = hook;
      }
    },
  };
}

/** The chat-templated prompts of an LlmPolicy as a rollout's PromptCodec. */
export class LlmPromptCodec implements PromptCodec {
  readonly stopIds: readonly number[];

  constructor(private readonly policy: LlmPolicy) {
    this.stopIds = policy.stopIds();
  }

  promptIds(text: string, maxPrompt: number): { ids: number[]; truncated: boolean } {
    const full = this.policy.promptIds(text);
    if (full.length <= maxPrompt) return { ids: full, truncated: false };
    // The smallest cut of the user text's oldest characters that fits (binary search; token counts grow with the
    // text kept, up to BPE merges at the cut, so the result is re-checked).
    let lo = 1;
    let hi = text.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.policy.promptIds(text.slice(mid)).length <= maxPrompt) hi = mid;
      else lo = mid + 1;
    }
    const ids = this.policy.promptIds(text.slice(lo));
    if (ids.length > maxPrompt)
      throw new Error(
        `the chat template alone takes ${ids.length} tokens, more than the ${maxPrompt} prompt tokens model.maxSeqLen leaves after rollout.maxResponseTokens; raise model.maxSeqLen or lower rollout.maxResponseTokens`,
      );
    return { ids, truncated: true };
  }

  decode(ids: readonly number[]): string {
    return this.policy.decode(ids);
  }
}
