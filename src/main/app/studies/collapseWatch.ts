/**
 * Stop-on-collapse: watches a training run's metric records as they arrive and says when the run has collapsed by
 * the ladder's own definition (src/core/stats/survival.ts `collapseStep`): the first critical alert of the collapse
 * detector — the same detector, settings and recipe the study later runs over the stored stream (runStudy.ts
 * outcomeOf), fed the same records, so it raises the same alerts — or the first validation whose held-out success
 * fell below `fraction` × the run's step-0 validation, whichever came first.
 *
 * A record for a step already seen replaces it and the detector is fed again from the start (a resumed run logs
 * again the steps after its checkpoint; they are the same numbers, a run being a function of its config and seed).
 */
import type { RunConfig } from '../../../core/config/index';
import { CollapseDetector } from '../../../core/stability/detector';
import { recipeOf } from '../../../core/stability/hints';
import { collapseStep, firstCriticalStep } from '../../../core/stats/index';
import type { MetricRecord } from '../../../shared/metrics';

/** How the reason recorded on a run stopped at its collapse begins (runStudy tells such a run by it). */
export const COLLAPSE_STOP_PREFIX = 'collapsed at step ';

export interface CollapsePoint {
  readonly step: number;
  /** `collapsed at step S (…)`: what collapsed it, as recorded on the stopped run. */
  readonly reason: string;
}

/** The step a stop reason names, or null when the reason is not a collapse stop. */
export function collapseStopStep(reason: string | null | undefined): number | null {
  if (!reason?.startsWith(COLLAPSE_STOP_PREFIX)) return null;
  const m = /^collapsed at step (\d+) /.exec(reason);
  return m ? Number(m[1]) : null;
}

const VAL_KEY = 'val/success_rate';
const fmt = (x: number) => (Number.isInteger(x) ? String(x) : x.toPrecision(3));

export class CollapseWatch {
  private readonly records = new Map<number, MetricRecord>();
  private detector: CollapseDetector;
  private fedThrough = -Infinity;
  private point: CollapsePoint | null = null;

  constructor(
    private readonly runId: string,
    private readonly config: RunConfig,
    private readonly fraction: number,
  ) {
    if (!(fraction > 0 && fraction < 1)) throw new RangeError(`CollapseWatch: fraction must be in (0, 1), got ${fraction}`);
    this.detector = this.fresh();
  }

  private fresh(): CollapseDetector {
    return new CollapseDetector(this.runId, undefined, recipeOf(this.config));
  }

  /** The collapse found so far (it stays once found: later records cannot undo a step that has been logged). */
  get collapse(): CollapsePoint | null {
    return this.point;
  }

  /** Take records (any order, repeats replace); returns the collapse point once there is one. */
  feed(records: readonly MetricRecord[]): CollapsePoint | null {
    if (records.length === 0) return this.point;
    let replay = false;
    for (const r of records) {
      if (r.step <= this.fedThrough) replay = true;
      this.records.set(r.step, r);
    }
    const ordered = [...this.records.values()].sort((a, b) => a.step - b.step);
    if (replay) {
      this.detector = this.fresh();
      this.fedThrough = -Infinity;
    }
    for (const r of ordered) {
      if (r.step <= this.fedThrough) continue;
      this.detector.feed(r);
      this.fedThrough = r.step;
    }
    this.point = this.find(ordered);
    return this.point;
  }

  private find(ordered: readonly MetricRecord[]): CollapsePoint | null {
    const alerts = this.detector.alerts();
    const critical = firstCriticalStep(alerts);
    const validations = ordered
      .map((m) => [m.step, m.values[VAL_KEY]] as [number, number])
      .filter(([, v]) => typeof v === 'number' && Number.isFinite(v));
    const step = collapseStep(critical, validations, this.fraction);
    if (step === null) return null;
    if (critical === step) {
      const a = alerts.find((x) => x.severity === 'critical' && x.firstStep === step)!;
      return {
        step,
        reason: `${COLLAPSE_STOP_PREFIX}${step} (critical alert ${a.rule} on ${a.metric}, its window opening at step ${step}; detector through step ${this.fedThrough})`,
      };
    }
    const [s0, v0] = validations[0];
    const v = validations.find(([s]) => s === step)![1];
    return {
      step,
      reason: `${COLLAPSE_STOP_PREFIX}${step} (held-out success ${fmt(v)} < ${this.fraction} × ${fmt(v0)}, the step-${s0} validation)`,
    };
  }
}
