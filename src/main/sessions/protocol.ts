/**
 * Messages between the session manager (host) and a training worker. Plain structured-clone data, so the same
 * messages cross worker_threads (CLI, browser mode, tests) and Electron's utilityProcess (the desktop app).
 * Metric values keep NaN/±Infinity (structured clone preserves them).
 */
import type { Alert, ComputeBackendInfo, HfModelRecord, Trajectory } from '../../shared/api';
import type { MetricRecord } from '../../shared/metrics';
import type { DetectorConfigOverrides } from '../../core/stability/config';

export interface StartMessage {
  readonly type: 'start';
  readonly runId: string;
  /** The run's directory (the worker is its single writer: metrics, trajectories, checkpoints). */
  readonly runDir: string;
  readonly dataDir: string;
  readonly config: Record<string, unknown>;
  readonly seed: number;
  /** Continue from the run's latest checkpoint (streams after it are dropped first). */
  readonly resume: boolean;
  readonly detector?: DetectorConfigOverrides;
  /** Milliseconds between fsyncs of the run's streams. */
  readonly flushMs?: number;
}

export type HostToWorker = StartMessage | { readonly type: 'pause' } | { readonly type: 'resume' } | { readonly type: 'stop' };

export type WorkerToHost =
  | { readonly type: 'ready' }
  | { readonly type: 'started'; readonly fromStep: number }
  | { readonly type: 'metrics'; readonly records: MetricRecord[] }
  | { readonly type: 'trajectory'; readonly step: number; readonly trajUid: string; readonly trajectory?: Trajectory }
  | { readonly type: 'alert'; readonly alert: Alert; readonly kind: 'raised' | 'updated' }
  | { readonly type: 'status'; readonly phase: string; readonly step: number; readonly totalSteps: number; readonly message?: string }
  | { readonly type: 'checkpoint'; readonly step: number }
  | { readonly type: 'flushed'; readonly step: number }
  | { readonly type: 'paused' }
  | { readonly type: 'resumed' }
  /**
   * The compute a run was submitted with, recorded at once (a Ray job's backend, rollout engine and K, fixed at
   * submission): a run that fails before reporting its end still says what it ran on. `done`'s report replaces it.
   */
  | { readonly type: 'compute'; readonly backend: Omit<ComputeBackendInfo, 'available'> }
  /**
   * A Hugging Face model run's base model (RunRecord.model), sent once the job has read and hashed the folder, so a
   * run that fails before its end (a bad export, a crash, out of memory) still names the model. `done`'s replaces it.
   */
  | { readonly type: 'model'; readonly model: HfModelRecord }
  | {
      readonly type: 'done';
      readonly status: 'completed' | 'stopped';
      readonly step: number;
      readonly backend?: Omit<ComputeBackendInfo, 'available'>;
      readonly model?: HfModelRecord;
    }
  | { readonly type: 'failed'; readonly error: string };
