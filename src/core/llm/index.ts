/**
 * Pretrained Hugging Face causal LMs (Qwen2, Qwen3, Llama) in the engine: pure tfjs, one file per piece.
 *
 *   config.ts       config.json → LlmConfig (validated), llmWeightSpecs (tensor names and shapes)
 *   safetensors.ts  header parsing, bf16/fp16/fp32 → float32, shard index, a float32 writer (bytes in/out)
 *   tokenizer.ts    HfTokenizer: tokenizer.json via @huggingface/tokenizers, chat template via @huggingface/jinja
 *   rmsNorm.ts · rope.ts · linear.ts · attention.ts · mlp.ts · decoderLayer.ts · lmHead.ts   the layers
 *   causalLm.ts     HfCausalLM: forward (padded batch), tokenLogProbs (response mask), step (KV cache)
 *   generate.ts     sampling with a KV cache: temperature, top-p, top-k, stop ids / stop strings, max new tokens
 *   lora.ts         LoRA adapters (PEFT layout): attach, train A/B only, seeded dropout, PEFT and merged exports
 *   policy.ts       LlmPolicy (chat-templated prompts, the trainer's tokenLogProbs contract) + LlmRolloutEngine
 *   trainerPolicy.ts  LlmTrainerPolicy + LlmPromptCodec: the trainer's TrainerPolicy / PromptCodec contracts
 *   memory.ts       training memory estimate (weights, AdamW or LoRA state, activations)
 *   warmStart.ts    behaviour-cloning rows from the env experts through the chat template, and the BC loss
 *   onnx/           the model as an ONNX graph with a KV cache, for onnxruntime rollouts (src/main/compute/ortLlmEngine.ts);
 *                   imported from './onnx' directly, so that importing this barrel does not load onnx-proto
 *
 * File reading (streamed tensor by tensor) is main-side: src/main/compute/models/hfFolder.ts.
 */
export * from './config';
export * from './safetensors';
export * from './tokenizer';
export * from './rope';
export * from './causalLm';
export * from './generate';
export * from './lora';
export * from './policy';
export * from './trainerPolicy';
export * from './memory';
export * from './warmStart';
export type { KvEntry } from './attention';
