/**
 * The data-parallel gradient pool (core interface `GradientPool` in src/core/training/shards.ts): K
 * worker_threads (gradWorker.ts), each on its own tfjs backend of the run's kind, holding θ in shared memory.
 *
 * A call hands shard k to worker k and resolves when every worker has answered, with the results in worker order.
 * Gradients come back through per-worker SharedArrayBuffers (copied out before the next call), θ goes out through
 * one shared buffer and a version counter, so no step re-serialises the weights.
 *
 * Faults: a worker that throws rejects the call with `gradient worker k: <its error>` (the worker lives on, its
 * weights untouched: computing a gradient never writes θ); one that dies (exit, crash, terminate) rejects every
 * pending call with `gradient worker k exited …` and the pool is broken from then on (later calls reject at once).
 * Either way the trainer fails the run before applying the step's update; the run resumes from its last checkpoint
 * with a new pool.
 */
import { Worker } from 'node:worker_threads';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { availableParallelism } from 'node:os';
import { weightSpecs, type ModelWeights } from '../../core/agent/model';
import {
  flatLength,
  type ActorShard,
  type BcShard,
  type GradientPool,
  type LogProbShard,
  type LogProbsOut,
  type ShardGrad,
} from '../../core/training/shards';
import type { BackendPreference } from './backends';
import type { GradReply, GradTask, GradWorkerInit } from './gradWorker';

/** compute.workers = 0 resolves to the machine's cores (at least 1); 1 where this build cannot start workers. */
export function machineWorkers(): number {
  return gradWorkersAvailable() ? Math.max(1, availableParallelism()) : 1;
}

/**
 * The worker script: from sources through tsx (CLI, tests, bench: gradWorker.ts + the sessions' tsx bootstrap) or the
 * built out/main/gradWorker.js (next to this chunk or one folder up). Null where neither is on disk — the
 * single-file CLI bundle a Ray node runs has no worker script, so runs there train on one thread.
 */
function workerScript(): { url: URL; boot?: URL } | null {
  const here = import.meta.url;
  if (!here.startsWith('file:')) return null;
  const onDisk = (u: URL): boolean => existsSync(fileURLToPath(u));
  if (here.endsWith('.ts')) {
    const boot = new URL('../sessions/workerBoot.mjs', here);
    const src = new URL('./gradWorker.ts', here);
    return onDisk(boot) && onDisk(src) ? { url: src, boot } : null;
  }
  const built = [new URL('./gradWorker.js', here), new URL('../gradWorker.js', here)].find(onDisk);
  return built ? { url: built } : null;
}

/** Whether this build can start gradient workers at all (see workerScript). */
export function gradWorkersAvailable(): boolean {
  return workerScript() !== null;
}

function spawn(init: GradWorkerInit): Worker {
  const script = workerScript();
  if (!script) throw new Error('this build has no gradient worker script (out/main/gradWorker.js)');
  const name = `grad-${init.index}`;
  if (script.boot) return new Worker(script.boot, { workerData: { ...init, entry: script.url.href }, name });
  return new Worker(script.url, { workerData: init, name });
}

interface Pending {
  resolve(r: GradReply & { type: 'done' }): void;
  reject(e: Error): void;
}

class WorkerSlot {
  private pending: Pending | null = null;
  private nextId = 1;
  dead: Error | null = null;
  readonly ready: Promise<void>;

  constructor(
    readonly index: number,
    readonly worker: Worker,
    readonly grad: Float32Array,
    onDeath: (e: Error) => void,
  ) {
    let readyCb: { ok(): void; fail(e: Error): void } | null = null;
    this.ready = new Promise<void>((ok, fail) => (readyCb = { ok, fail }));
    const die = (e: Error): void => {
      if (this.dead) return;
      this.dead = e;
      readyCb?.fail(e);
      this.pending?.reject(e);
      this.pending = null;
      onDeath(e);
    };
    worker.on('message', (m: GradReply) => {
      if (m.type === 'ready') {
        readyCb?.ok();
        return;
      }
      if (m.type === 'error' && m.id === null) {
        die(new Error(`gradient worker ${index}: ${m.message}`));
        return;
      }
      const p = this.pending;
      this.pending = null;
      if (!p) return;
      if (m.type === 'error') p.reject(new Error(`gradient worker ${index}: ${m.message}`));
      else p.resolve(m);
    });
    worker.on('error', (e) => die(new Error(`gradient worker ${index} crashed: ${e instanceof Error ? e.message : String(e)}`)));
    worker.on('exit', (code) => die(new Error(`gradient worker ${index} exited (code ${code}) before finishing its shard`)));
  }

  run(task: Omit<GradTask, 'id'>): Promise<GradReply & { type: 'done' }> {
    if (this.dead) return Promise.reject(this.dead);
    if (this.pending) return Promise.reject(new Error(`gradient worker ${this.index} is busy (one call at a time)`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.worker.postMessage({ ...task, id });
    });
  }
}

export class GradPool implements GradientPool {
  private broken: Error | null = null;
  private disposing = false;

  private constructor(
    private readonly slots: WorkerSlot[],
    private readonly weights: Float32Array,
    private readonly version: Int32Array,
  ) {}

  get size(): number {
    return this.slots.length;
  }

  /** K workers holding `weights` on tfjs backend `backend` (the main run's kind); resolves once all are ready. */
  static async start(opts: { weights: ModelWeights; workers: number; backend: BackendPreference }): Promise<GradPool> {
    const K = opts.workers;
    if (!Number.isInteger(K) || K < 1) throw new Error(`compute.workers: the pool needs an integer ≥ 1 workers, got ${K}`);
    const P = flatLength(opts.weights.config);
    const weightsBuf = new SharedArrayBuffer(P * 4);
    const versionBuf = new SharedArrayBuffer(4);
    const weights = new Float32Array(weightsBuf);
    writeWeights(weights, opts.weights);
    const slots: WorkerSlot[] = [];
    let pool: GradPool | null = null;
    const onDeath = (e: Error): void => {
      if (pool && !pool.disposing) pool.broken ??= e;
    };
    if (!gradWorkersAvailable())
      throw new Error(
        `compute.workers ${K}: this build has no gradient worker script (out/main/gradWorker.js; the single-file bundle Ray nodes run has none); set compute.workers=1`,
      );
    for (let i = 0; i < K; i++) {
      const gradBuf = new SharedArrayBuffer(P * 4);
      const init: GradWorkerInit = {
        index: i,
        backend: opts.backend,
        config: opts.weights.config,
        weights: weightsBuf,
        version: versionBuf,
        grad: gradBuf,
      };
      slots.push(new WorkerSlot(i, spawn(init), new Float32Array(gradBuf), onDeath));
    }
    pool = new GradPool(slots, weights, new Int32Array(versionBuf));
    try {
      await Promise.all(slots.map((s) => s.ready));
    } catch (e) {
      await pool.dispose();
      throw new Error(
        `compute.workers ${K}: the gradient workers did not start (${(e as Error).message}); set compute.workers=1 to train on one thread`,
      );
    }
    return pool;
  }

  async setWeights(w: ModelWeights): Promise<void> {
    this.check();
    writeWeights(this.weights, w);
    Atomics.add(this.version, 0, 1);
  }

  actor(shards: readonly ActorShard[]): Promise<ShardGrad[]> {
    return this.gradients(shards.map((input) => ({ kind: 'actor' as const, input })));
  }

  bc(shards: readonly BcShard[]): Promise<ShardGrad[]> {
    return this.gradients(shards.map((input) => ({ kind: 'bc' as const, input })));
  }

  async logProbs(shards: readonly LogProbShard[]): Promise<LogProbsOut[]> {
    const replies = await this.all(shards.map((input) => ({ kind: 'logProbs' as const, input })));
    return replies.map((r, i) => {
      if (!r.out) throw new Error(`gradient worker ${i}: answered a log-prob shard without log-probs`);
      return r.out;
    });
  }

  /** Terminate worker `index` as if it had died (what a crash does; the fault tests use it). */
  async kill(index: number): Promise<void> {
    const s = this.slots[index];
    if (!s) throw new Error(`GradPool.kill: no worker ${index} (pool of ${this.slots.length})`);
    await s.worker.terminate();
  }

  async dispose(): Promise<void> {
    this.disposing = true;
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }

  private check(): void {
    if (this.broken) throw new Error(`the gradient pool is unusable: ${this.broken.message}`);
  }

  private async gradients(tasks: Array<Omit<GradTask, 'id'>>): Promise<ShardGrad[]> {
    const replies = await this.all(tasks);
    // Copied out of the shared buffers: the next call overwrites them.
    return replies.map((r, i) => ({
      grad: new Float32Array(this.slots[i].grad),
      present: r.present ?? [],
      metrics: r.metrics ?? {},
      ...(r.logProbs ? { logProbs: r.logProbs } : {}),
    }));
  }

  private async all(tasks: Array<Omit<GradTask, 'id'>>): Promise<Array<GradReply & { type: 'done' }>> {
    this.check();
    if (tasks.length > this.slots.length) throw new Error(`GradPool: ${tasks.length} shards for ${this.slots.length} workers`);
    // Every worker's answer is awaited (settled) before the call returns, so a failed call leaves no worker still
    // writing into its gradient buffer; the first failure in worker order is the one reported.
    const settled = await Promise.allSettled(tasks.map((t, i) => this.slots[i].run(t)));
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason instanceof Error ? failed.reason : new Error(String(failed.reason));
    return settled.map((s) => (s as PromiseFulfilledResult<GradReply & { type: 'done' }>).value);
  }
}

function writeWeights(dst: Float32Array, w: ModelWeights): void {
  let off = 0;
  for (const s of weightSpecs(w.config)) {
    const t = w.tensors[s.name];
    if (!t) throw new Error(`GradPool: weights lack tensor "${s.name}"`);
    dst.set(t, off);
    off += t.length;
  }
  if (off !== dst.length) throw new Error(`GradPool: weights hold ${off} values, the pool was made for ${dst.length}`);
}
