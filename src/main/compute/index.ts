/**
 * Compute set-up for a run: the tfjs training backend (backends.ts) and the rollout engine factory
 * (onnxruntime-node with KV cache, or tfjs). The result's `info` is recorded in the run metadata and shown to the
 * user; `createRolloutEngine` is what the trainer receives through TrainerDeps.compute.
 */
import { PolicyModel, TfjsRolloutEngine, type ModelWeights, type RolloutEngine, type RolloutEngineFactory } from '../../core/agent';
import { initBackend, type BackendInfo, type BackendPreference } from './backends';
import { gpuMemoryGb, type TensorflowInfo } from './tensorflow';
import type { GradientPoolFactory } from '../../core/training/shards';
import type { RolloutPrecision } from '../../core/config/types';
import { GradPool, machineWorkers } from './gradPool';

export { initBackend, BackendUnavailableError, BACKEND_PREFERENCES, silenceTfjsBanner, wasmDir, currentBackend } from './backends';
export type { BackendInfo, BackendPreference } from './backends';
export { applyTensorflowEnv, nvidiaGpuPresent } from './tensorflow';
export type { TensorflowInfo, TensorflowThreadRequest } from './tensorflow';
// ortEngine loads onnxruntime-node's native binding at import time; it is only imported dynamically here so a machine
// where the binding cannot load still gets the tfjs engine and a clear message instead of a failed import.
export type { OrtRolloutEngine, OrtEngineOptions } from './ortEngine';

/** The onnxruntime-node engine loaded with `weights` (dynamic import; see above). */
export async function createOrtEngine(
  weights: ModelWeights,
  opts?: import('./ortEngine').OrtEngineOptions,
): Promise<import('./ortEngine').OrtRolloutEngine> {
  const m = await import('./ortEngine');
  return m.createOrtEngine(weights, opts);
}
export { applyWasmFixes } from './wasmFixes';
export { GradPool, machineWorkers } from './gradPool';

export type RolloutEnginePreference = 'onnxruntime' | 'tfjs';

export interface ComputeSetup {
  /** For run metadata / ComputeBackendInfo: training backend, rollout engine, one-line detail. */
  info: { training: string; rollout: string; detail: string; available: string[]; workers: number; tensorflow?: TensorflowInfo };
  backend: BackendInfo;
  createRolloutEngine: RolloutEngineFactory;
  /** K for compute.workers = 0: this machine's cores on tfjs-wasm, 1 on native TensorFlow (the trainer uses compute.workers when > 0). */
  workers: number;
  /** K gradient workers on this run's tfjs backend (gradPool.ts). */
  createGradientPool: GradientPoolFactory;
  /** On the GPU: the GPU memory this process holds, GB (perf/max_memory_allocated_gb); absent elsewhere. */
  memoryGb?: () => number;
}

async function probeOrt(): Promise<string | null> {
  try {
    const ort = await import('onnxruntime-node');
    return typeof ort.InferenceSession?.create === 'function' ? null : 'onnxruntime-node has no InferenceSession';
  } catch (e) {
    return `onnxruntime-node failed to load (${(e as Error).message.split('\n')[0]})`;
  }
}

export async function setupCompute(
  opts: {
    backend?: BackendPreference;
    rolloutEngine?: RolloutEnginePreference;
    /** compute.intraOpThreads / compute.interOpThreads (native TensorFlow only; 0 or absent = one per core). */
    intraOpThreads?: number;
    interOpThreads?: number;
    /** compute.rolloutPrecision of the onnxruntime engine (ortPrecision.ts; default fp32). π_ref engines stay fp32. */
    rolloutPrecision?: RolloutPrecision;
  } = {},
): Promise<ComputeSetup> {
  const backend = await initBackend(opts.backend ?? 'auto', { intraOpThreads: opts.intraOpThreads, interOpThreads: opts.interOpThreads });
  const want = opts.rolloutEngine ?? 'onnxruntime';
  if (want !== 'onnxruntime' && want !== 'tfjs') {
    throw new Error(`compute.rolloutEngine: unknown engine ${JSON.stringify(want)}; known: onnxruntime, tfjs`);
  }
  let rollout = want;
  const available = [...backend.available];
  const ortProblem = await probeOrt();
  if (ortProblem === null) available.push('onnxruntime-cpu');
  else if (want === 'onnxruntime') {
    throw new Error(`compute.rolloutEngine "onnxruntime" is not available: ${ortProblem}. Use compute.rolloutEngine "tfjs".`);
  }
  const precision = opts.rolloutPrecision ?? 'fp32';
  if (precision !== 'fp32' && rollout !== 'onnxruntime') {
    throw new Error(
      `compute.rolloutPrecision "${precision}" is a setting of the onnxruntime engine; set compute.rolloutEngine=onnxruntime or compute.rolloutPrecision=fp32`,
    );
  }
  let detail = backend.detail;
  if (rollout === 'onnxruntime')
    detail = `rollouts on onnxruntime-node (CPU, 2 threads, KV cache${precision === 'fp32' ? '' : `, ${precision}`}); training on ${detail}`;
  else {
    rollout = 'tfjs';
    detail = `rollouts and training on ${detail}`;
  }
  const createRolloutEngine = async (weights: ModelWeights, role: 'rollout' | 'reference' = 'rollout'): Promise<RolloutEngine> => {
    if (rollout === 'onnxruntime') {
      return createOrtEngine(weights, { precision: role === 'reference' ? 'fp32' : precision });
    }
    return new TfjsRolloutEngine(PolicyModel.fromWeights(weights, 'rollout'), backend.tfjsBackend, true);
  };
  // compute.workers = 0: one gradient worker per core on tfjs-wasm (single-threaded); one on native TensorFlow, whose
  // kernels already use every core and whose K workers share one process-wide thread pool (measured: K = 2 slower).
  const workers = backend.tensorflow ? 1 : machineWorkers();
  return {
    info: {
      training: backend.training,
      rollout:
        rollout === 'onnxruntime'
          ? precision === 'fp32'
            ? 'onnxruntime-cpu'
            : `onnxruntime-cpu-${precision}`
          : `tfjs-${backend.tfjsBackend}`,
      detail,
      available,
      workers,
      ...(backend.tensorflow ? { tensorflow: backend.tensorflow } : {}),
    },
    backend,
    createRolloutEngine,
    workers,
    createGradientPool: (init) => GradPool.start({ ...init, backend: backend.training }),
    ...(backend.training === 'tensorflow-gpu' ? { memoryGb: () => gpuMemoryGb() } : {}),
  };
}
