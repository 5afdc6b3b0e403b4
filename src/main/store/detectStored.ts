/** The collapse detector over a stored run: `arlarena check`, runs.check / runs.detect, `runs synth --check`. */
import type { Alert, RunRecord } from '../../shared/api';
import { join } from 'node:path';
import { CollapseDetector } from '../../core/stability/detector';
import { recipeForRun } from '../../core/stability/hints';
import { forEachMetric } from './metricTail';
import { METRICS_FILE } from './runFiles';
import type { RunStore } from './runStore';

export interface StoredDetection {
  /** How many stored metric records the detector read. */
  readonly steps: number;
  /** Every key the run logged (even one whose every value is NaN), sorted. */
  readonly keys: string[];
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
  // Streamed into the (incremental) detector: a 10M-row imported run is checked in bounded memory (read whole, it
  // took 3.3 GB).
  const detector = new CollapseDetector(run.id, undefined, recipeForRun(run));
  const keys = new Set<string>();
  let steps = 0;
  let through: number | null = null;
  await forEachMetric(join(store.runDir(run.id), METRICS_FILE), (r) => {
    detector.feed(r);
    steps++;
    through = r.step;
    for (const k in r.values) keys.add(k);
  });
  const alerts = detector.alerts();
  const record = opts.save ? await store.recordDetection(run.id, alerts, through) : run;
  return { steps, keys: [...keys].sort(), alerts, record };
}
