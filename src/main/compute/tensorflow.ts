/**
 * Native TensorFlow (tfjs-node / tfjs-node-gpu built by scripts/setup-tensorflow.sh against PyPI's libtensorflow):
 * the process settings it must see before it first loads, what it reports once loaded, and the GPU probe.
 *
 * TensorFlow reads its settings from the environment once, when the first eager context of the process is created
 * (TF_NUM_INTRAOP_THREADS / TF_NUM_INTEROP_THREADS size the process-wide thread pools that every context, hence every
 * gradient worker thread, then shares). So they are written to the environment before the first import, and only
 * from the main thread: a worker thread's process.env is a private copy that native code never sees. A run that
 * asks for other counts in a process where TensorFlow is already loaded records the counts in effect (its backend
 * record), which is what reproduce replays.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { isMainThread } from 'node:worker_threads';

export interface TensorflowThreadRequest {
  /** TensorFlow's intra-op pool (threads one kernel, e.g. a matMul, splits over); 0 = this machine's cores. */
  readonly intraOpThreads?: number;
  /** TensorFlow's inter-op pool (independent kernels run side by side); 0 = this machine's cores. */
  readonly interOpThreads?: number;
}

export interface TensorflowInfo {
  /** libtensorflow's own version (TF_Version()), e.g. 2.21.0. */
  readonly version: string;
  /** The npm package whose binding loaded it. */
  readonly package: string;
  readonly intraOpThreads: number;
  readonly interOpThreads: number;
  /** TF_DETERMINISTIC_OPS as TensorFlow saw it (on unless the user's environment turned it off). */
  readonly deterministicOps: boolean;
  /** The GPU training runs on (nvidia-smi's name), or null on the CPU. */
  readonly gpu: string | null;
}

type Effective = { intra: number; inter: number; deterministic: boolean };

/** The settings TensorFlow loaded with in this thread (fixed from then on); null before it loads. */
let frozen: Effective | null = null;
/** The variables this module wrote (it may rewrite them before TensorFlow loads; the user's own it never touches). */
const written = new Set<string>();

function envInt(name: string): number | null {
  const v = process.env[name];
  if (v === undefined || !/^\d+$/.test(v)) return null;
  return Number(v);
}

function effective(): Effective {
  const cores = Math.max(1, availableParallelism());
  return {
    intra: envInt('TF_NUM_INTRAOP_THREADS') ?? cores,
    inter: envInt('TF_NUM_INTEROP_THREADS') ?? cores,
    deterministic: !/^(0|false)$/i.test(process.env.TF_DETERMINISTIC_OPS ?? '0'),
  };
}

/**
 * Write TensorFlow's settings into the environment unless it has loaded in this thread already (see the file
 * comment); from a worker thread nothing is written (native code would not see it). The user's own TF_* variables
 * win over the request. Returns the settings in effect.
 */
export function applyTensorflowEnv(req: TensorflowThreadRequest = {}): Effective {
  if (frozen) return frozen;
  // Loaded by another thread of this process (a run's worker): the environment as it is now is what it loaded with,
  // since only this function writes it and it stops here from now on.
  if (tensorflowLoadedInProcess()) return freezeTensorflowEnv();
  const set = (name: string, value: string | null): void => {
    if (!isMainThread || (process.env[name] !== undefined && !written.has(name))) return;
    if (value === null) {
      delete process.env[name];
      written.delete(name);
    } else {
      process.env[name] = value;
      written.add(name);
    }
  };
  // TensorFlow's C++ INFO/WARNING lines (CPU feature guard, cuInit on a machine without a GPU…) on every start: the
  // backend's one-line detail says what runs instead. TF_CPP_MIN_LOG_LEVEL=0 in the environment brings them back.
  set('TF_CPP_MIN_LOG_LEVEL', '2');
  // Bit-identical runs (same config, seed, backend, K): TensorFlow's deterministic kernels. TF_DETERMINISTIC_OPS=0 in
  // the environment turns it off (runs then record it).
  set('TF_DETERMINISTIC_OPS', '1');
  // On a GPU, allocate as the run needs instead of taking the whole card up front: other work can share it and
  // perf/max_memory_allocated_gb (what the driver says this process holds) measures the run.
  set('TF_FORCE_GPU_ALLOW_GROWTH', 'true');
  // 0 or absent = TensorFlow's own default, one per core.
  set('TF_NUM_INTRAOP_THREADS', req.intraOpThreads && req.intraOpThreads > 0 ? String(req.intraOpThreads) : null);
  set('TF_NUM_INTEROP_THREADS', req.interOpThreads && req.interOpThreads > 0 ? String(req.interOpThreads) : null);
  return effective();
}

/** Whether libtensorflow is mapped into this process (Linux: /proc/self/maps; elsewhere: unknown, so false). */
function tensorflowLoadedInProcess(): boolean {
  try {
    return readFileSync('/proc/self/maps', 'utf8').includes('libtensorflow_framework');
  } catch {
    return false;
  }
}

/** Called once native TensorFlow has loaded in this thread: its settings are fixed from then on. */
export function freezeTensorflowEnv(): Effective {
  frozen ??= effective();
  return frozen;
}

/** Whether this machine shows an NVIDIA GPU to its driver (no CUDA needed to look). */
export function nvidiaGpuPresent(): boolean {
  try {
    return readdirSync('/proc/driver/nvidia/gpus').length > 0;
  } catch {
    return existsSync('/dev/nvidia0');
  }
}

/** The first GPU's name from nvidia-smi, or a generic name when nvidia-smi cannot say. */
export function gpuName(): string {
  try {
    const out = execFileSync('nvidia-smi', ['--query-gpu=name,memory.total', '--format=csv,noheader'], { encoding: 'utf8', timeout: 5000 });
    const first = out.split('\n').find((l) => l.trim() !== '');
    if (first) return first.trim();
  } catch {
    // nvidia-smi absent or failing: the driver still showed a GPU.
  }
  return 'NVIDIA GPU (nvidia-smi unavailable)';
}

/**
 * GPU memory this process holds, GB, as the driver reports it (nvidia-smi's per-process used memory); NaN when
 * nvidia-smi cannot say. With TF_FORCE_GPU_ALLOW_GROWTH TensorFlow's allocator only grows, so this is its peak.
 */
export function gpuMemoryGb(pid: number = process.pid): number {
  try {
    const out = execFileSync('nvidia-smi', ['--query-compute-apps=pid,used_memory', '--format=csv,noheader,nounits'], {
      encoding: 'utf8',
      timeout: 5000,
    });
    let mib = 0;
    let seen = false;
    for (const line of out.split('\n')) {
      const [p, used] = line.split(',').map((x) => x.trim());
      if (Number(p) === pid && Number.isFinite(Number(used))) {
        mib += Number(used);
        seen = true;
      }
    }
    return seen ? mib / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** What the loaded binding reports; null when the current tfjs backend is not native TensorFlow. */
export function tensorflowInfo(backend: unknown, pkg: string): TensorflowInfo | null {
  const be = backend as { binding?: { TF_Version?: string }; isUsingGpuDevice?: boolean } | null;
  const version = be?.binding?.TF_Version;
  if (typeof version !== 'string') return null;
  const a = freezeTensorflowEnv();
  return {
    version,
    package: pkg,
    intraOpThreads: a.intra,
    interOpThreads: a.inter,
    deterministicOps: a.deterministic,
    gpu: be?.isUsingGpuDevice === true ? gpuName() : null,
  };
}

/** Why `import('@tensorflow/tfjs-node…')` failed, in one line with the fix. */
export function tensorflowLoadProblem(pkg: string, message: string): string {
  if (message.includes('ARLARENA_NATIVE_TF_ROOT')) return message.split('\n')[0];
  if (/Cannot find (module|package)/.test(message)) return `${pkg} is not installed (npm ci installs it)`;
  if (/tfjs_binding\.node\) can not be found/.test(message)) {
    return `${pkg}'s native binding is not built (run \`npm run setup:tensorflow${pkg.endsWith('-gpu') ? ' -- --gpu' : ''}\`)`;
  }
  if (/libtensorflow[^ ]*: cannot open shared object/.test(message)) {
    return `${pkg} cannot find the TensorFlow library its binding was built against (${message.split('\n')[0]}); run \`npm run setup:tensorflow\` again`;
  }
  return `${pkg} failed to load (${message.split('\n')[0]})`;
}
