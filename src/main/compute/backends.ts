/**
 * tfjs backend selection for training: the fastest that works, in the order
 *   @tensorflow/tfjs-node-gpu (GPU) → @tensorflow/tfjs-node → tfjs-backend-wasm (SIMD + the two kernel fixes) → cpu.
 *
 * tfjs-node(-gpu) download libtensorflow in their install script, which cannot succeed on offline machines; npm then
 * drops them (optional dependency) or leaves a package whose `import` throws. Both are probed in try/catch and the
 * reason is reported in one line. A forced backend that is unavailable is an error naming the backend and the fix.
 *
 * The "Hi, looks like you are running TensorFlow.js in Node.js…" banner comes from the pure-JS cpu backend on its
 * first tensor write; it advertises tfjs-node, which we already probed, so it is silenced and the one-line
 * `detail` says what runs instead.
 */
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import * as tf from '@tensorflow/tfjs';
import { applyWasmFixes } from './wasmFixes';

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
}

export class BackendUnavailableError extends Error {
  constructor(readonly backend: string, reason: string) {
    super(`compute.backend "${backend}" is not available on this machine: ${reason}. Use compute.backend "auto" (or one of the available backends) instead.`);
    this.name = 'BackendUnavailableError';
  }
}

// Not named `require`: electron-vite adds `const require = …` to every ESM chunk that calls require(), and a
// second top-level `require` in the same chunk is a SyntaxError in the desktop build.
const requireFromHere = createRequire(import.meta.url);
let current: BackendInfo | null = null;

/** Silence the cpu backend's tfjs-node advert (see the file comment). */
export function silenceTfjsBanner(): void {
  const cpu = tf.findBackend('cpu') as unknown as { firstUse?: boolean } | null;
  if (cpu && 'firstUse' in cpu) cpu.firstUse = false;
}

/** The folder holding tfjs-backend-wasm's .wasm files (resolved from the installed package). */
export function wasmDir(): string {
  return join(dirname(requireFromHere.resolve('@tensorflow/tfjs-backend-wasm/package.json')), 'dist');
}

async function tryNode(pkg: '@tensorflow/tfjs-node-gpu' | '@tensorflow/tfjs-node'): Promise<string | null> {
  try {
    // A variable specifier: the packages are optional and usually absent.
    const spec: string = pkg;
    await import(spec);
    if (!(await tf.setBackend('tensorflow'))) return `${pkg} loaded but its backend did not initialise`;
    return null;
  } catch (e) {
    const msg = (e as Error).message ?? String(e);
    if (/Cannot find (module|package)/.test(msg)) return `${pkg} is not installed`;
    return `${pkg} failed to load (${msg.split('\n')[0]})`;
  }
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
export async function initBackend(pref: BackendPreference = 'auto'): Promise<BackendInfo> {
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
      why = await tryNode('@tensorflow/tfjs-node-gpu');
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
      why = await tryNode('@tensorflow/tfjs-node');
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
  const label: Record<string, string> = {
    'tensorflow-gpu': 'tfjs-node-gpu (libtensorflow, GPU)',
    tensorflow: 'tfjs-node (libtensorflow, CPU)',
    wasm: 'tfjs-wasm (SIMD, 1 thread, transpose-first BatchMatMul)',
    cpu: 'tfjs cpu (pure JS, slow)',
  };
  const skipped = Object.entries(unavailable).map(([, why]) => why);
  const detail = `${label[chosen]}${skipped.length ? `; ${skipped.join('; ')}` : ''}`;
  current = { training: chosen, tfjsBackend: tf.getBackend(), detail, available, unavailable };
  return current;
}

export function currentBackend(): BackendInfo | null {
  return current;
}
