/**
 * Which engine samples an HF model's rollouts, and the fallback.
 *
 *   CPU training backend (tfjs-wasm, tfjs-cpu, tfjs-node on the CPU): onnxruntime-node (ortLlmEngine.ts) — the export
 *       with a KV cache runs each decoding step as one fused graph on 2 threads; compute.rolloutEngine "tfjs" opts out.
 *   GPU training backend (tfjs-node-gpu): the tfjs KV-cache engine (LlmRolloutEngine) on the GPU, sharing the
 *       trainer's variables (onnxruntime-node's CPU provider would move the work off the GPU).
 * When onnxruntime cannot load or cannot hold the export (e.g. a model past the 2 GiB protobuf limit), the tfjs engine
 * takes over and `fallback` says why (the caller records it with the run's compute detail). A precision other than
 * fp32 is an onnxruntime setting, so there it is an error instead: falling back would silently change the numerics.
 * ortLlmEngine.ts is imported dynamically so a machine whose onnxruntime binding cannot load still gets tfjs.
 */
import type { RolloutEngine } from '../../core/agent/engine';
import type { RolloutPrecision } from '../../core/config/types';
import type { LlmPolicy } from '../../core/llm/policy';

export interface LlmRolloutChoice {
  engine: RolloutEngine;
  /** Set when onnxruntime was asked for and the tfjs engine took over: the reason. */
  fallback?: string;
}

export async function createLlmRolloutEngine(
  policy: LlmPolicy,
  opts: {
    /** compute.rolloutEngine (default onnxruntime). */
    engine?: 'onnxruntime' | 'tfjs';
    /** compute.rolloutPrecision of the onnxruntime engine (default fp32). */
    precision?: RolloutPrecision;
    /** True when the trainer runs on a GPU (tfjs-node-gpu): rollouts stay there. */
    gpu?: boolean;
    threads?: number;
  } = {},
): Promise<LlmRolloutChoice> {
  const want = opts.engine ?? 'onnxruntime';
  if (want !== 'onnxruntime' && want !== 'tfjs')
    throw new Error(`compute.rolloutEngine: unknown engine ${JSON.stringify(want)}; known: onnxruntime, tfjs`);
  const precision = opts.precision ?? 'fp32';
  if (want === 'tfjs' || opts.gpu) {
    if (precision !== 'fp32')
      throw new Error(
        `compute.rolloutPrecision "${precision}" is a setting of the onnxruntime engine, which ${opts.gpu ? 'a GPU run does not use' : 'compute.rolloutEngine "tfjs" turns off'}; set compute.rolloutPrecision=fp32`,
      );
    return { engine: policy.engine() };
  }
  try {
    const { createOrtLlmEngine } = await import('./ortLlmEngine');
    return { engine: await createOrtLlmEngine(policy, { precision, threads: opts.threads }) };
  } catch (e) {
    const why = (e as Error).message.split('\n')[0];
    if (precision !== 'fp32') throw new Error(`compute.rolloutPrecision "${precision}" needs the onnxruntime engine, which failed: ${why}`);
    return { engine: policy.engine(), fallback: `rollouts on tfjs: ${why}` };
  }
}
