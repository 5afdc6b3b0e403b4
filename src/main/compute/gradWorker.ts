/**
 * One data-parallel gradient worker (worker_threads; started by gradPool.ts). It initialises the run's tfjs backend
 * kind in this thread (tfjs-wasm is single-threaded in Node, so each worker is one more core at work), holds a copy
 * of the policy and computes its shard's work with the core's shard functions (src/core/training/shards.ts).
 *
 * Shared memory, so a step never re-serialises the weights: the pool writes θ into `weights` and bumps `version`
 * after each AdamW update; a worker reloads θ from it when the version it holds is older. Gradients go back through
 * this worker's own `grad` buffer; only metrics and log-probs travel in messages.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { PolicyModel, weightSpecs, type ModelConfig, type ModelWeights } from '../../core/agent/model';
import {
  actorShardGradient,
  bcShardGradient,
  trainerLogProbs,
  type ActorShard,
  type BcShard,
  type LogProbShard,
} from '../../core/training/shards';
import { initBackend, type BackendPreference } from './backends';

export interface GradWorkerInit {
  readonly index: number;
  readonly backend: BackendPreference;
  readonly config: ModelConfig;
  /** Float32 θ in weightSpecs order. */
  readonly weights: SharedArrayBuffer;
  /** Int32[1]: θ's version (bumped by the pool after every write). */
  readonly version: SharedArrayBuffer;
  /** Float32, this worker's gradient out-buffer (same layout as `weights`). */
  readonly grad: SharedArrayBuffer;
}

export type GradTask =
  | { readonly id: number; readonly kind: 'actor'; readonly input: ActorShard }
  | { readonly id: number; readonly kind: 'bc'; readonly input: BcShard }
  | { readonly id: number; readonly kind: 'logProbs'; readonly input: LogProbShard };

export type GradReply =
  | { readonly type: 'ready' }
  | {
      readonly type: 'done';
      readonly id: number;
      readonly present?: boolean[];
      readonly metrics?: Record<string, number>;
      readonly logProbs?: number[][];
      readonly out?: { logProbs: number[][]; entropyMean: number[] };
    }
  | { readonly type: 'error'; readonly id: number | null; readonly message: string };

function weightsFrom(cfg: ModelConfig, buf: SharedArrayBuffer): ModelWeights {
  const all = new Float32Array(buf);
  const tensors: Record<string, Float32Array> = {};
  let off = 0;
  for (const s of weightSpecs(cfg)) {
    const n = s.shape.reduce((a, b) => a * b, 1);
    tensors[s.name] = all.subarray(off, off + n);
    off += n;
  }
  return { config: cfg, tensors };
}

async function main(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('gradWorker: must run as a worker thread (started by gradPool.ts)');
  const init = workerData as GradWorkerInit;
  const reply = (m: GradReply): void => port.postMessage(m);
  try {
    await initBackend(init.backend);
  } catch (e) {
    reply({ type: 'error', id: null, message: `tfjs backend "${init.backend}" did not start: ${(e as Error).message}` });
    return;
  }
  const version = new Int32Array(init.version);
  const grad = new Float32Array(init.grad);
  let held = Atomics.load(version, 0);
  const model = PolicyModel.fromWeights(weightsFrom(init.config, init.weights), 'policy');
  port.on('message', (task: GradTask) => {
    void (async () => {
      try {
        const v = Atomics.load(version, 0);
        if (v !== held) {
          model.setWeights(weightsFrom(init.config, init.weights));
          held = v;
        }
        if (task.kind === 'logProbs') {
          const out = await trainerLogProbs(model, task.input.rows, task.input.temperature, task.input.budgetMB);
          reply({ type: 'done', id: task.id, out });
          return;
        }
        const r = task.kind === 'actor' ? actorShardGradient(model, task.input) : bcShardGradient(model, task.input);
        grad.set(r.grad);
        reply({ type: 'done', id: task.id, present: [...r.present], metrics: r.metrics, ...(r.logProbs ? { logProbs: r.logProbs } : {}) });
      } catch (e) {
        reply({ type: 'error', id: task.id, message: (e as Error).message ?? String(e) });
      }
    })();
  });
  reply({ type: 'ready' });
}

void main();
