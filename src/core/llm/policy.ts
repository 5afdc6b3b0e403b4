/**
 * A pretrained HF causal LM as the lab's policy: the two surfaces the trainer and the rollout use, in the lab's own
 * contracts, so the algorithm catalogs (which see only token log-probs and masks) run on it unchanged.
 *
 *   LlmPolicy.tokenLogProbs(rows, {temperature}) → {logProbs, entropy, mask} [N, R]   (as PolicyModel.tokenLogProbs)
 *   LlmPolicy.trainableVariables()                → LoRA's A/B when adapters are attached, else every base weight
 *   LlmRolloutEngine (agent's RolloutEngine)      → KV-cache sampling with the model's stop tokens and `</action>`
 *
 * Prompts: the env's turn prompt (src/core/envs/prompt.ts, which already ends with the paper's
 * `<think> … </think>` / `<action> … </action>` instruction) is the user turn of the model's own chat template, after
 * a system turn that states the format once more (spec §3.2), with the generation prompt appended — the layout
 * instruct checkpoints were trained on. A response is decoded with the tokenizer and parsed by the env as any other.
 *
 * The engine shares the policy's variables (same process, same tfjs backend): sampling always sees the current
 * weights, so `setWeights` has nothing to copy.
 */
import * as tf from '@tensorflow/tfjs';
import type { GenerateResult, RolloutEngine, SamplingOptions } from '../agent/engine';
import type { LogProbRow, ModelWeights } from '../agent/model';
import type { Rng } from '../util/rng';
import type { HfCausalLM, LlmRow, LlmTokenLogProbs } from './causalLm';
import { generateLlm } from './generate';
import type { LoraAdapters } from './lora';
import type { ChatMessage, HfTokenizer } from './tokenizer';

export const AGENT_SYSTEM_PROMPT =
  'You are an agent acting in a text environment. For every turn, first reason inside <think> </think>, then give exactly one admissible action inside <action> </action>.';

/** The string that ends an agent's turn (the env reads the action inside it). */
export const ACTION_CLOSE = '</action>';

export class LlmPolicy {
  constructor(
    readonly model: HfCausalLM,
    readonly tokenizer: HfTokenizer,
    readonly lora: LoraAdapters | null = null,
    readonly systemPrompt: string = AGENT_SYSTEM_PROMPT,
  ) {
    if (lora && model.projectionHook === null) lora.attach(model);
  }

  /** Chat-templated prompt ids for one turn's user text. */
  promptIds(userText: string): number[] {
    const messages: ChatMessage[] = [
      { role: 'system', content: this.systemPrompt },
      { role: 'user', content: userText },
    ];
    return this.tokenizer.applyChatTemplate(messages, { addGenerationPrompt: true });
  }

  /** Ids that end a response: config.json's eos_token_id(s) and the tokenizer's eos token. */
  stopIds(): number[] {
    const ids = new Set(this.model.config.eosTokenIds);
    const eos = this.tokenizer.specialTokens.eos;
    const id = eos === null ? undefined : this.tokenizer.tokenId(eos);
    if (id !== undefined) ids.add(id);
    return [...ids].sort((a, b) => a - b);
  }

  /** Differentiable response log-probs (the trainer's contract). Pass an Rng to `setTraining` for LoRA dropout. */
  tokenLogProbs(rows: readonly LlmRow[], opts: { temperature?: number } = {}): LlmTokenLogProbs {
    return this.model.tokenLogProbs(rows, opts);
  }

  /** Training mode (LoRA dropout drawn from `rng`) or evaluation (`null`: sampling, old and reference log-probs). */
  setTraining(rng: Rng | null): void {
    this.lora?.setTraining(rng);
  }

  trainableVariables(): tf.Variable[] {
    return this.lora ? this.lora.trainableVariables() : this.model.baseVariables();
  }

  trainableParamCount(): number {
    return this.lora ? this.lora.paramCount() : this.model.paramCount();
  }

  decode(ids: readonly number[]): string {
    return this.tokenizer.decode(ids, { skipSpecialTokens: true });
  }

  engine(padId?: number): LlmRolloutEngine {
    return new LlmRolloutEngine(this, padId);
  }
}

/** KV-cache sampling from the policy's own variables, behind the lab's RolloutEngine contract. */
export class LlmRolloutEngine implements RolloutEngine {
  readonly name: string;
  private readonly padId: number;

  constructor(
    private readonly policy: LlmPolicy,
    padId?: number,
  ) {
    this.name = `tfjs-${tf.getBackend()}-llm-kvcache`;
    const pad = policy.tokenizer.specialTokens.pad;
    this.padId = padId ?? (pad !== null ? policy.tokenizer.tokenId(pad) : undefined) ?? policy.stopIds()[0] ?? 0;
  }

  async setWeights(_weights: ModelWeights): Promise<void> {
    // Shared variables: nothing to copy (see the file comment).
  }

  /**
   * `opts.stopIds` (the lab tokenizer's ids in the small-model path) are replaced by the checkpoint's own stop ids;
   * `</action>` is matched on the decoded text, since BPE vocabularies split it into several tokens.
   */
  async generate(prompts: readonly (readonly number[])[], opts: SamplingOptions, rng: Rng): Promise<GenerateResult> {
    const p = this.policy;
    p.setTraining(null);
    return generateLlm(
      p.model,
      prompts,
      { ...opts, stopIds: p.stopIds(), stopStrings: [ACTION_CLOSE], decode: (ids) => p.tokenizer.decode(ids) },
      rng,
      this.padId,
    );
  }

  async logProbs(rows: readonly LogProbRow[], temperature = 1): Promise<number[][]> {
    this.policy.setTraining(null);
    const o = this.policy.tokenLogProbs(rows, { temperature });
    const lp = (await o.logProbs.array()) as number[][];
    tf.dispose([o.logProbs, o.entropy, o.mask]);
    return rows.map((r, i) => lp[i].slice(0, r.responseIds.length));
  }

  async dispose(): Promise<void> {
    // The policy owns the model.
  }
}
