/** The collapse detector over a stored run: `arlarena check`, runs.check / runs.detect, `runs synth --check`. */
import type { Alert, RunRecord } from '../../shared/api';
import type { MetricRecord } from '../../shared/metrics';
import { detectAlerts } from '../../core/stability/detector';
import { recipeForRun } from '../../core/stability/hints';
import type { RunStore } from './runStore';

export interface StoredDetection {
  /** The run's stored metric records, as the detector read them. */
  readonly metrics: MetricRecord[];
  /** What the detector found (fresh copies: not acknowledged). */
  readonly alerts: Alert[];
  /** The run's record: after the save when saved, else as given. */
  readonly record: RunRecord;
}

/**
 * Every rule over the run's stored metrics, with the hints fitted to its recipe. With `save` the alerts are merged
 * into the run (an acknowledgement already given is kept) and its detectedThrough moves to the last step read.
 */
export async function detectStored(store: RunStore, run: RunRecord, opts: { save?: boolean } = {}): Promise<StoredDetection> {
  const metrics = await store.readMetrics(run.id);
  const alerts = detectAlerts(run.id, metrics, undefined, recipeForRun(run));
  const through = metrics.length > 0 ? metrics[metrics.length - 1].step : null;
  const record = opts.save ? await store.recordDetection(run.id, alerts, through) : run;
  return { metrics, alerts, record };
}
