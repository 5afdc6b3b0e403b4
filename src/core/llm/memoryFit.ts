/**
 * Will an LLM training run fit here? The estimate of memory.ts against what the backend that would train it can
 * hold, decided once for a run's own check before it starts (main/compute/models/hfRunModel.ts), the API
 * (models.inspect) and so New run's Start button.
 *
 * What the machine can hold:
 *   - every backend: the machine's physical memory, of which a run may plan on MEMORY_HEADROOM (80 %): the estimate
 *     counts the tensors alive at the peak, not the allocator's slack, the OS or the app itself;
 *   - tfjs-wasm additionally keeps every tensor in one wasm32 heap, which stops at 4 GiB whatever the machine has
 *     (docs/guides/llm.md: the Qwen2.5-0.5B-shaped row fails with "memory access out of bounds"), so there the budget
 *     is 80 % of the smaller of the two;
 *   - tfjs-node-gpu: GPU memory is not probed yet, so the budget is the machine's memory and the verdict says so.
 * Pure: numbers in, a decision and its one-line reason out.
 */
import type { LlmMemoryEstimate } from './memory';

/** The share of the limit a run may plan to use. */
export const MEMORY_HEADROOM = 0.8;
/** tfjs-wasm's heap: wasm32 addresses 4 GiB. */
export const WASM_HEAP_BYTES = 2 ** 32;

export interface MachineMemory {
  /** Physical memory (os.totalmem()). */
  readonly totalBytes: number;
  /** The tfjs backend training would run on (ComputeBackendInfo.training: wasm, tensorflow, tensorflow-gpu, cpu). */
  readonly backend: string;
}

export interface MemoryFit {
  readonly fits: boolean;
  /** What the run may plan on: MEMORY_HEADROOM of the limit below. */
  readonly budgetBytes: number;
  /** The limit: the machine's memory, or tfjs-wasm's heap when that is smaller. */
  readonly limitBytes: number;
  readonly limitedBy: 'machine' | 'wasm-heap';
  /** One line: the estimate and its parts against the budget; when it does not fit, what to change. */
  readonly message: string;
}

export const gib = (bytes: number): string => `${(bytes / 2 ** 30).toFixed(2)} GiB`;
/** GiB from 1 GiB up, MiB below (a small checkpoint's parts would all read "0.00 GiB"). */
export const memSize = (bytes: number): string => (bytes >= 2 ** 30 ? gib(bytes) : `${(bytes / 2 ** 20).toFixed(1)} MiB`);
const size = memSize;

/** "494.0 M" from a million up, the exact count below (a test checkpoint's 28,640 would read "0.0 M"). */
export const paramCount = (n: number): string => (n >= 1e6 ? `${(n / 1e6).toFixed(1)} M` : String(n));

/** The estimate's parts in words: "weights 1.84 GiB + adapters 132.0 MiB + activations 5.40 GiB = 7.50 GiB". */
export function describeEstimate(est: LlmMemoryEstimate, lora: boolean): string {
  return `weights ${size(est.weightsBytes)} + ${lora ? 'LoRA adapters and their AdamW state' : 'gradients and AdamW state'} ${size(est.trainingStateBytes)} + activations ${size(est.activationBytes)} = ${size(est.totalBytes)}`;
}

export function memoryFit(est: LlmMemoryEstimate, machine: MachineMemory, opts: { lora: boolean }): MemoryFit {
  if (!(machine.totalBytes > 0) || !Number.isFinite(machine.totalBytes))
    throw new RangeError(`memoryFit: machine.totalBytes must be a positive number, got ${machine.totalBytes}`);
  const wasm = machine.backend === 'wasm';
  const limitedBy: MemoryFit['limitedBy'] = wasm && WASM_HEAP_BYTES < machine.totalBytes ? 'wasm-heap' : 'machine';
  const limitBytes = limitedBy === 'wasm-heap' ? WASM_HEAP_BYTES : machine.totalBytes;
  const budgetBytes = MEMORY_HEADROOM * limitBytes;
  const fits = est.totalBytes <= budgetBytes;
  const pct = Math.round(MEMORY_HEADROOM * 100);
  const of =
    limitedBy === 'wasm-heap'
      ? `${pct} % of tfjs-wasm's 4 GiB heap (this machine has ${gib(machine.totalBytes)})`
      : `${pct} % of this machine's ${gib(machine.totalBytes)}${machine.backend === 'tensorflow-gpu' ? '; GPU memory is not probed' : ''}`;
  const needs = `needs ${describeEstimate(est, opts.lora)}`;
  if (fits) return { fits, budgetBytes, limitBytes, limitedBy, message: `fits: ${needs}, within ${gib(budgetBytes)} (${of})` };
  return {
    fits,
    budgetBytes,
    limitBytes,
    limitedBy,
    message: `does not fit: ${needs}, over ${gib(budgetBytes)} (${of}); ${fixes(est, opts.lora, budgetBytes, limitedBy)}`,
  };
}

/** What would bring the estimate under the budget, largest part first. */
function fixes(est: LlmMemoryEstimate, lora: boolean, budget: number, limitedBy: MemoryFit['limitedBy']): string {
  const out: string[] = [];
  if (est.weightsBytes > budget)
    out.push(
      limitedBy === 'wasm-heap'
        ? 'the float32 weights alone exceed the wasm heap: train on native TensorFlow (npm run setup:tensorflow) or pick a smaller model'
        : 'the float32 weights alone exceed it: pick a smaller model or a machine with more memory',
    );
  else {
    if (!lora && est.trainingStateBytes > est.activationBytes) out.push('train LoRA adapters instead of every weight');
    if (est.activationBytes > 0.25 * budget) out.push('use fewer rows per chunk or a shorter context');
    if (lora && out.length === 0) out.push('lower the LoRA rank or target fewer modules');
    if (out.length === 0) out.push('train LoRA adapters, or use fewer rows per chunk or a shorter context');
    if (limitedBy === 'wasm-heap') out.push('or train on native TensorFlow (npm run setup:tensorflow), which has no 4 GiB heap');
  }
  return out.join('; ');
}
