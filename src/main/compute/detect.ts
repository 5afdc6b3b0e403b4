/**
 * Compute-backend detection used by `app.info` until the policy developer's src/main/compute lands (it owns
 * the real backend selection). This only looks, never loads libtensorflow: a package that resolves but whose
 * native binding is missing (its install script could not download libtensorflow) counts as unavailable.
 */
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { availableParallelism } from 'node:os';
import type { ComputeBackendInfo } from '../../shared/api';
import { nvidiaGpuPresent } from './tensorflow';

const requireFromHere = createRequire(import.meta.url);

function packageDir(name: string): string | null {
  try {
    return dirname(requireFromHere.resolve(`${name}/package.json`));
  } catch {
    return null;
  }
}

/** tfjs-node(-gpu) is usable only if its native binding was built/downloaded (lib/napi-v*\/tfjs_binding.node). */
function tfjsNodeUsable(name: string): 'usable' | 'no-binding' | 'missing' {
  const dir = packageDir(name);
  if (!dir) return 'missing';
  try {
    const lib = join(dir, 'lib');
    const napi = readdirSync(lib).filter((d) => d.startsWith('napi-v'));
    return napi.some((d) => existsSync(join(lib, d, 'tfjs_binding.node'))) ? 'usable' : 'no-binding';
  } catch {
    return 'no-binding';
  }
}

export function detectComputeBackend(): ComputeBackendInfo {
  const available: string[] = [];
  const notes: string[] = [];
  for (const [pkg, backend] of [
    ['@tensorflow/tfjs-node-gpu', 'tensorflow-gpu'],
    ['@tensorflow/tfjs-node', 'tensorflow'],
  ] as const) {
    const state = tfjsNodeUsable(pkg);
    // A GPU build on a machine without a GPU trains on the CPU: not `tensorflow-gpu` (a run asking for it is refused
    // before it starts, with this reason).
    if (state === 'usable' && backend === 'tensorflow-gpu' && !nvidiaGpuPresent()) notes.push('no NVIDIA GPU on this machine');
    else if (state === 'usable') available.push(backend);
    else notes.push(`${pkg} ${state === 'missing' ? 'not installed' : 'installed without its native binding (npm run setup:tensorflow)'}`);
  }
  if (packageDir('@tensorflow/tfjs-backend-wasm')) available.push('wasm');
  if (packageDir('@tensorflow/tfjs')) available.push('cpu');
  const training = available[0] ?? 'none';
  const ort = packageDir('onnxruntime-node') !== null;
  const rollout = ort ? 'onnxruntime-cpu' : 'tfjs';
  const label: Record<string, string> = {
    'tensorflow-gpu': 'tfjs-node-gpu (libtensorflow, CUDA)',
    tensorflow: 'tfjs-node (libtensorflow, CPU)',
    wasm: 'tfjs-wasm (SIMD, 1 thread)',
    cpu: 'tfjs-cpu (pure JavaScript)',
    none: 'no tfjs backend installed',
  };
  const detail = `${label[training]}; rollouts on ${ort ? 'onnxruntime-node (CPU)' : 'tfjs'}${notes.length ? `; ${notes.join('; ')}` : ''}`;
  return { training, rollout, detail, available, workers: Math.max(1, availableParallelism()) };
}
