/**
 * tfjs backend selection for training: the fastest that works, in the order
 *   @tensorflow/tfjs-node-gpu (GPU) → @tensorflow/tfjs-node → tfjs-backend-wasm (SIMD + the two kernel fixes) → cpu.
 *
 * tfjs-node(-gpu) are installed without their install script (it downloads libtensorflow, which offline machines
 * cannot); scripts/setup-tensorflow.sh builds their binding against PyPI's TensorFlow wheel. Without that build the
 * `import` throws: both are probed in try/catch and the reason is reported in one line with the fix. A forced
 * backend that is unavailable is an error naming the backend and the fix. TensorFlow's process settings (threads,
 * deterministic ops, log level) are written before its first import (tensorflow.ts).
 *
 * The "Hi, looks like you are running TensorFlow.js in Node.js…" banner comes from the pure-JS cpu backend on its
 * first tensor write; it advertises tfjs-node, which we already probed, so it is silenced and the one-line
 * `detail` says what runs instead.
 */
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import * as tf from '@tensorflow/tfjs';
import { applyWasmFixes } from './wasmFixes';
import {
  applyTensorflowEnv,
  freezeTensorflowEnv,
  nvidiaGpuPresent,
  tensorflowInfo,
  tensorflowLoadProblem,
  type TensorflowInfo,
  type TensorflowThreadRequest,
} from './tensorflow';

export type BackendPreference = 'auto' | 'tensorflow-gpu' | 'tensorflow' | 'wasm' | 'cpu';
export const BACKEND_PREFERENCES: readonly BackendPreference[] = ['auto', 'tensorflow-gpu', 'tensorflow', 'wasm', 'cpu'];

export interface BackendInfo {
  /** What training runs on: `tensorflow-gpu`, `tensorflow`, `wasm` or `cpu`. */
  training: Exclude<BackendPreference, 'auto'>;
  /** The tfjs backend name (`tensorflow`, `wasm`, `cpu`). */
  tfjsBackend: string;
  /** One line for the user. */
  detail: string;
  /** Backends that loaded on this machine. */
  available: string[];
  /** Why each unavailable backend is unavailable. */
  unavailable: Record<string, string>;
  /** Native TensorFlow's version, threads, determinism and GPU when training runs on it; absent otherwise. */
  tensorflow?: TensorflowInfo;
}

export class BackendUnavailableError extends Error {
  constructor(
    readonly backend: string,
    reason: string,
  ) {
    super(
      `compute.backend "${backend}" is not available on this machine: ${reason}. Use compute.backend "auto" (or one of the available backends) instead.`,
    );
    this.name = 'BackendUnavailableError';
  }
}

// Not named `require`: electron-vite adds `const require = …` to every ESM chunk that calls require(), and a
// second top-level `require` in the same chunk is a SyntaxError in the desktop build.
const requireFromHere = createRequire(import.meta.url);
let current: BackendInfo | null = null;
/** The native package whose binding provides the `tensorflow` backend in this thread. */
let nativePackage: string | null = null;

/** Silence the cpu backend's tfjs-node advert (see the file comment). */
export function silenceTfjsBanner(): void {
  const cpu = tf.findBackend('cpu') as unknown as { firstUse?: boolean } | null;
  if (cpu && 'firstUse' in cpu) cpu.firstUse = false;
}

/** The folder holding tfjs-backend-wasm's .wasm files (resolved from the installed package). */
export function wasmDir(): string {
  return join(dirname(requireFromHere.resolve('@tensorflow/tfjs-backend-wasm/package.json')), 'dist');
}

/**
 * Where the native package is imported from: this install's own node_modules, or — with ARLARENA_NATIVE_TF_ROOT set
 * to a folder where `npm run setup:tensorflow` ran (a lab checkout on a Ray node) — that folder's. The lab's Ray
 * package ships the CLI bundled without native add-ons; a node that has its own build trains on it this way. tfjs
 * keeps its engine and kernel registry on the global object, so a package loaded from there registers its backend
 * with the tfjs bundled here (the same tfjs version: 4.22.0 on both sides).
 */
function nativeSpecifier(pkg: string): string {
  const root = process.env.ARLARENA_NATIVE_TF_ROOT;
  if (!root) return pkg; // a variable specifier: bundlers leave it to run time
  try {
    return pathToFileURL(createRequire(join(root, 'package.json')).resolve(pkg)).href;
  } catch {
    throw new Error(
      `Cannot find package '${pkg}' under ARLARENA_NATIVE_TF_ROOT=${root} (run \`npm ci && npm run setup:tensorflow\` there)`,
    );
  }
}

async function tryNode(
  pkg: '@tensorflow/tfjs-node-gpu' | '@tensorflow/tfjs-node',
  threads: TensorflowThreadRequest,
): Promise<string | null> {
  try {
    applyTensorflowEnv(threads);
    await import(nativeSpecifier(pkg));
    if (!(await tf.setBackend('tensorflow'))) return `${pkg} loaded but its backend did not initialise`;
    nativePackage = pkg;
    freezeTensorflowEnv();
    return null;
  } catch (e) {
    // Only while no native package works here: a loaded one's kernels are the live backend's.
    if (nativePackage === null) forgetTensorflowKernels();
    return tensorflowLoadProblem(pkg, (e as Error).message ?? String(e));
  }
}

/**
 * tfjs-node-gpu installed without its built binding registers its 155 `tensorflow` kernels before its import throws,
 * so tfjs-node, tried next, printed "The kernel '…' for backend 'tensorflow' is already registered" once per kernel
 * on every machine that shows an NVIDIA GPU. A failed native package leaves no kernel behind.
 */
function forgetTensorflowKernels(): void {
  for (const k of tf.getKernelsForBackend('tensorflow')) tf.unregisterKernel(k.kernelName, 'tensorflow');
}

function usingGpu(): boolean {
  const be = tf.backend() as unknown as { isUsingGpuDevice?: boolean };
  return be.isUsingGpuDevice === true;
}

async function tryWasm(): Promise<string | null> {
  try {
    const wasm = await import('@tensorflow/tfjs-backend-wasm');
    wasm.setWasmPaths(`${wasmDir()}/`);
    applyWasmFixes();
    if (!(await tf.setBackend('wasm'))) return 'tfjs-backend-wasm did not initialise';
    await tf.ready();
    return null;
  } catch (e) {
    return `tfjs-backend-wasm failed to load (${(e as Error).message})`;
  }
}

/**
 * Initialise tfjs for training. Idempotent for the same preference; call once per process (worker) before
 * creating models.
 */
export async function initBackend(pref: BackendPreference = 'auto', threads: TensorflowThreadRequest = {}): Promise<BackendInfo> {
  if (!BACKEND_PREFERENCES.includes(pref)) {
    throw new Error(`compute.backend: unknown backend ${JSON.stringify(pref)}; known: ${BACKEND_PREFERENCES.join(', ')}`);
  }
  if (current && (pref === 'auto' || pref === current.training)) return current;
  silenceTfjsBanner();
  const unavailable: Record<string, string> = {};
  const available: string[] = [];
  let chosen: BackendInfo['training'] | null = null;

  const order: Array<Exclude<BackendPreference, 'auto'>> = pref === 'auto' ? ['tensorflow-gpu', 'tensorflow', 'wasm', 'cpu'] : [pref];
  for (const b of order) {
    let why: string | null;
    if (b === 'tensorflow-gpu') {
      // No GPU visible to a driver: say so without loading CUDA (which would only log "failed call to cuInit").
      why = nvidiaGpuPresent()
        ? await tryNode('@tensorflow/tfjs-node-gpu', threads)
        : 'no NVIDIA GPU on this machine (its driver lists none under /proc/driver/nvidia/gpus)';
      if (why === null && !usingGpu()) {
        why = '@tensorflow/tfjs-node-gpu loaded but found no usable GPU (CUDA/cuDNN)';
        // Its libtensorflow still beats wasm on the CPU: under `auto`, use it as the CPU backend.
        if (pref === 'auto') {
          unavailable[b] = why;
          chosen = 'tensorflow';
          available.push('tensorflow');
          break;
        }
      }
    } else if (b === 'tensorflow') {
      why = await tryNode('@tensorflow/tfjs-node', threads);
      // Only the GPU build present (setup:tensorflow --gpu): its libtensorflow runs on the CPU too.
      if (why !== null && nativePackage === null && (await tryNode('@tensorflow/tfjs-node-gpu', threads)) === null) why = null;
    } else if (b === 'wasm') {
      why = await tryWasm();
    } else {
      why = (await tf.setBackend('cpu')) ? null : 'the cpu backend did not initialise';
    }
    if (why === null) {
      chosen = b;
      available.push(b);
      break;
    }
    unavailable[b] = why;
  }
  if (chosen && chosen !== 'cpu') available.push('cpu');
  if (!chosen) {
    const b = order[0];
    throw new BackendUnavailableError(b, unavailable[b]);
  }
  silenceTfjsBanner();
  const tfInfo =
    chosen === 'tensorflow' || chosen === 'tensorflow-gpu'
      ? (tensorflowInfo(tf.backend(), nativePackage ?? '@tensorflow/tfjs-node') ?? undefined)
      : undefined;
  const threadsNote = tfInfo
    ? `${tfInfo.intraOpThreads} intra-op / ${tfInfo.interOpThreads} inter-op threads${tfInfo.deterministicOps ? ', deterministic ops' : ''}`
    : '';
  const label: Record<string, string> = {
    'tensorflow-gpu': `tfjs-node-gpu (libtensorflow ${tfInfo?.version ?? '?'}, GPU ${tfInfo?.gpu ?? '?'}, ${threadsNote})`,
    tensorflow: `tfjs-node (libtensorflow ${tfInfo?.version ?? '?'}, CPU, ${threadsNote})`,
    wasm: 'tfjs-wasm (SIMD, 1 thread, transpose-first BatchMatMul)',
    cpu: 'tfjs cpu (pure JS, slow)',
  };
  const skipped = Object.entries(unavailable).map(([, why]) => why);
  const detail = `${label[chosen]}${skipped.length ? `; ${skipped.join('; ')}` : ''}`;
  current = { training: chosen, tfjsBackend: tf.getBackend(), detail, available, unavailable, ...(tfInfo ? { tensorflow: tfInfo } : {}) };
  return current;
}

export function currentBackend(): BackendInfo | null {
  return current;
}
