/**
 * The collapse detector: feeds metric records through every enabled rule and merges per-step findings into
 * alerts (one alert per rule + metric episode; a finding within `mergeGap` steps of the last one extends it,
 * raising its severity if needed). Incremental (`feed`, live during training) and batch (`detectAlerts`, over a
 * stored run) give the same alerts for the same stream.
 */
import type { Alert } from '../../shared/api';
import type { MetricRecord } from '../../shared/metrics';
import { resolveDetectorConfig, type DetectorConfig, type DetectorConfigOverrides } from './config';
import { RULES } from './rules/index';
import type { Finding, RuleDef, RuleInstance, Severity } from './types';
import { nanMeansNotApplicable } from './nonFinite';
import { hintsFor, type RunRecipe, type SourceRecipe } from './hints';
import { quoteOnce } from './quote';

const RANK: Record<Severity, number> = { info: 0, warning: 1, critical: 2 };
const HISTORY = 400;
/** Points kept each side of an alert's cited point when it falls in the skipped middle of its evidence. */
const PEAK_AROUND = 2;

/**
 * The last HISTORY points of one metric, for alert evidence. A ring, not an array with shift(): an imported verl
 * step carries ~140 keys, and shifting 400-element arrays for each of them was most of the detector's time.
 */
class Ring {
  private steps = new Float64Array(HISTORY);
  private values = new Float64Array(HISTORY);
  private start = 0;
  private len = 0;
  push(step: number, value: number): void {
    const i = (this.start + this.len) % HISTORY;
    this.steps[i] = step;
    this.values[i] = value;
    if (this.len < HISTORY) this.len++;
    else this.start = (this.start + 1) % HISTORY;
  }
  /**
   * An alert's evidence window straight from the ring: the points at or before `last`, from `before` points
   * ahead of the first one at or after `first`; over `max` points, the onset and the latest `tail`. Built
   * without a point object per entry: alerts on a noisy imported run are updated nearly every step, and copying
   * the whole ring into objects for each update was most of the detector's time.
   *
   * `peak`, the point the alert's message cites (a spike, or the best level a drop is measured from), is always
   * in the window: when the window from it to `last` is over `max` points, its point and `PEAK_AROUND`
   * neighbours each side are kept beside the onset and the tail; gone from the ring, its cited value is put first
   * at its step.
   */
  evidence(
    first: number,
    last: number,
    before: number,
    max: number,
    peak?: { step: number; value: number },
  ): { steps: number[]; values: Array<number | null> } {
    const at = (k: number) => this.stepAt(k);
    let n = this.len;
    while (n > 0 && at(n - 1) > last) n--;
    let onset = n;
    while (onset > 0 && at(onset - 1) >= first) onset--;
    const from = Math.max(0, onset - before);
    let peakIdx = -1;
    if (peak !== undefined && n > 0 && peak.step >= at(0)) {
      // Binary search (the ring's steps increase): a long alert is updated at every step, over 400 points.
      let a = 0;
      let b = n - 1;
      while (a < b) {
        const m = (a + b) >> 1;
        if (at(m) < peak.step) a = m + 1;
        else b = m;
      }
      if (at(a) === peak.step) peakIdx = a;
    }
    const steps: number[] = [];
    const values: Array<number | null> = [];
    if (peak !== undefined && peakIdx < 0) {
      steps.push(peak.step);
      values.push(peak.value);
    }
    const push = (k: number) => this.copy(k, steps, values);
    const lo = peakIdx >= 0 ? Math.min(from, Math.max(0, peakIdx - before)) : from;
    if (n - lo <= max) {
      for (let k = lo; k < n; k++) push(k);
      return { steps, values };
    }
    // Over `max` points: the cited point's neighbourhood (when outside the rest), the onset, the latest tail.
    const tail = Math.min(10, Math.floor(max / 4));
    const full = max - tail;
    // The neighbourhood is extra only where the onset and tail do not already hold the cited point.
    const inside = peakIdx >= n - tail || (peakIdx >= from && peakIdx < from + full);
    const around: [number, number] | null =
      peakIdx >= 0 && !inside ? [Math.max(0, peakIdx - PEAK_AROUND), Math.min(n, peakIdx + PEAK_AROUND + 1)] : null;
    const head = Math.max(1, full - (around ? around[1] - around[0] : 0));
    const runs: [number, number][] = [
      [from, Math.min(n, from + head)],
      [Math.max(0, n - tail), n],
    ];
    if (around) runs.push(around);
    runs.sort((x, y) => x[0] - y[0]);
    let next = 0;
    for (const [a, b] of runs) for (let k = Math.max(a, next); k < b; k++, next = k) push(k);
    return { steps, values };
  }

  private stepAt(k: number): number {
    return this.steps[(this.start + k) % HISTORY];
  }

  private copy(k: number, steps: number[], values: Array<number | null>): void {
    const i = (this.start + k) % HISTORY;
    const v = this.values[i];
    steps.push(this.steps[i]);
    values.push(Number.isFinite(v) ? v : null);
  }
}

/**
 * `ev` with every point the message quotes: one the window left out (a start many steps before the event) is put
 * in at its step, so the evidence chart shows each number the text names.
 */
function withQuoted(ev: Alert['evidence'], quotes: NonNullable<Finding['quotes']>): Alert['evidence'] {
  let steps = ev.steps;
  let values = ev.values;
  for (const q of quotes) {
    if (!Number.isFinite(q.value) || steps.includes(q.step)) continue;
    let i = 0;
    while (i < steps.length && steps[i] < q.step) i++;
    steps = [...steps.slice(0, i), q.step, ...steps.slice(i)];
    values = [...values.slice(0, i), q.value, ...values.slice(i)];
  }
  return { steps, values };
}

/**
 * An alert's message, built the first time it is read: a rule's finding may give its text as a function of
 * values fixed when it fired (types.ts), and an alert updated at every step of a long episode is read far less
 * often (an import reads it once per chunk of steps). Built once, the text is kept and the function let go.
 */
class AlertText {
  private text: string | null = null;
  constructor(private source: Finding['message']) {}
  get(): string {
    if (this.text === null) {
      this.text = quoteOnce(typeof this.source === 'string' ? this.source : this.source());
      this.source = '';
    }
    return this.text;
  }
}

/**
 * One state of an alert: the alert with its message left empty until `text` fills it, the first time the alert
 * is handed out (`filled`). A plain object with the message in its place, so JSON and clones see a string.
 */
interface Version {
  readonly alert: Alert;
  readonly text: AlertText;
  filled: boolean;
}

function filled(v: Version): Alert {
  if (!v.filled) {
    v.alert.message = v.text.get();
    v.filled = true;
  }
  return v.alert;
}

/** A finding's cited point and threshold as alert fields (absent ones left out, not undefined). */
function cites(f: Pick<Finding, 'peak' | 'threshold'>): Pick<Alert, 'peak' | 'threshold'> {
  const out: { peak?: Alert['peak']; threshold?: number } = {};
  if (f.peak && Number.isFinite(f.peak.value)) out.peak = { step: f.peak.step, value: f.peak.value };
  if (f.threshold !== undefined && Number.isFinite(f.threshold)) out.threshold = f.threshold;
  return out;
}

/** An alert raised or updated by one step. Its message is built when `alert` is first read. */
export class AlertUpdate {
  constructor(
    readonly kind: 'raised' | 'updated',
    private readonly version: Version,
  ) {}
  /** The alert's id, without building its message (a caller keeping only each alert's latest update). */
  get id(): string {
    return this.version.alert.id;
  }
  get alert(): Alert {
    return filled(this.version);
  }
}

export class CollapseDetector {
  readonly config: DetectorConfig;
  private rules: Array<{ def: RuleDef; inst: RuleInstance }>;
  private history = new Map<string, Ring>();
  private open = new Map<string, Version>();
  /** Per open alert: observations of its metric since its last finding (sparse metrics like val/* count their own points). */
  private quiet = new Map<string, number>();
  private all: Version[] = [];
  /** Index in `all` of each alert by id (an update replaces it in place). */
  private at = new Map<string, number>();
  private lastStep = -Infinity;
  /** The last record's keys by position and their rings (undefined until the key has a point). */
  private ringKeys: string[] = [];
  private ringAt: Array<Ring | undefined> = [];
  /** Per open alert: the logged points its current message quotes (kept in its evidence as it is updated). */
  private quotes = new Map<string, Finding['quotes']>();

  /** `recipe` (hints.ts: recipeOf(run config)) fits each alert's hint to what the run already does. */
  constructor(
    readonly runId: string,
    config?: DetectorConfig | DetectorConfigOverrides,
    recipe?: RunRecipe | SourceRecipe,
  ) {
    this.config =
      config && 'mergeGap' in config && 'nonFinite' in config && 'mismatch' in config
        ? (config as DetectorConfig)
        : resolveDetectorConfig(config as DetectorConfigOverrides | undefined);
    const hints = hintsFor(recipe);
    this.rules = RULES.filter((r) => r.enabled(this.config)).map((def) => ({ def, inst: def.create(this.config, hints) }));
  }

  /** Feed one step (steps must increase; a repeated or older step is ignored). Returns alerts raised or updated. */
  feed(rec: MetricRecord): AlertUpdate[] {
    if (rec.step <= this.lastStep) return [];
    this.lastStep = rec.step;
    // Consecutive records nearly always carry the same keys in the same order (an imported verl step ~140 of
    // them): each position remembers its key's ring, so the map is only asked when a position's key changes.
    const keys = this.ringKeys;
    const rings = this.ringAt;
    let i = 0;
    for (const k in rec.values) {
      if (keys[i] !== k) {
        keys[i] = k;
        rings[i] = this.history.get(k);
      }
      const v = rec.values[k];
      // A validation key is NaN between validations: kept out, an evidence window of 40 points shows 40
      // validations (and the best one its message cites), not four among 36 gaps.
      if (!(Number.isNaN(v) && nanMeansNotApplicable(k))) {
        let h = rings[i];
        if (h === undefined) {
          h = new Ring();
          this.history.set(k, h);
          rings[i] = h;
        }
        h.push(rec.step, v);
      }
      i++;
    }
    if (keys.length !== i) {
      keys.length = i;
      rings.length = i;
    }
    const updates: AlertUpdate[] = [];
    // Most steps raise nothing: the set of this step's rule|metric keys is made only when one fires.
    let fired: Set<string> | null = null;
    for (const { def, inst } of this.rules) {
      for (const f of inst.feed(rec)) {
        (fired ??= new Set<string>()).add(`${def.id}|${f.metric}`);
        updates.push(this.merge(def, f, rec.step));
      }
    }
    for (const [key, { alert }] of this.open) {
      if (fired?.has(key)) continue;
      const v = rec.values[alert.metric];
      if (v === undefined || (Number.isNaN(v) && nanMeansNotApplicable(alert.metric))) continue;
      const q = (this.quiet.get(key) ?? 0) + 1;
      // Quiet past the gap, the alert can no longer be extended (merge starts a new one): stop tracking it, so a
      // long run with many closed alerts does not pay for each of them on every step.
      if (q > this.config.mergeGap) {
        this.open.delete(key);
        this.quiet.delete(key);
        this.quotes.delete(key);
      } else this.quiet.set(key, q);
    }
    return updates;
  }

  private merge(def: RuleDef, f: Finding, step: number): AlertUpdate {
    const key = `${def.id}|${f.metric}`;
    const open = this.open.get(key);
    const quiet = this.quiet.get(key) ?? 0;
    this.quiet.set(key, 0);
    if (open && quiet <= this.config.mergeGap) {
      const cur = open.alert;
      const severity = RANK[f.severity] > RANK[cur.severity] ? f.severity : cur.severity;
      // Keep the message of the worst finding so far (the one that set the severity), refreshed while it holds.
      const takeNew = RANK[f.severity] >= RANK[cur.severity];
      // The cited point and threshold go with the message they belong to.
      // Built field by field: a collapse updates every open alert at every step, and object rest/spread here
      // was most of the detector's time on a 20,000-step collapse run.
      const peak = takeNew ? (f.peak && Number.isFinite(f.peak.value) ? { step: f.peak.step, value: f.peak.value } : undefined) : cur.peak;
      const threshold = takeNew ? (f.threshold !== undefined && Number.isFinite(f.threshold) ? f.threshold : undefined) : cur.threshold;
      if (takeNew) this.quotes.set(key, f.quotes);
      const text = takeNew ? new AlertText(f.message) : open.text;
      const next: Alert = {
        id: cur.id,
        runId: cur.runId,
        rule: cur.rule,
        severity,
        metric: cur.metric,
        firstStep: cur.firstStep,
        lastStep: step,
        // Filled from `text` when handed out (filled()); kept here so the stored alert's keys keep their order.
        message: '',
        hint: takeNew ? f.hint : cur.hint,
        evidence: this.evidence(f.metric, cur.firstStep, step, peak, this.quotes.get(key)),
        acknowledged: cur.acknowledged,
      };
      if (peak) next.peak = peak;
      if (threshold !== undefined) next.threshold = threshold;
      const version: Version = { alert: next, text, filled: false };
      this.replace(cur.id, version);
      this.open.set(key, version);
      return new AlertUpdate('updated', version);
    }
    // The window opens where the event did (a smoothed or streak rule fires points after it began).
    const first = f.onset !== undefined && f.onset < step ? f.onset : step;
    this.quotes.set(key, f.quotes);
    const alert: Alert = {
      id: `${def.id}:${f.metric}:${step}`,
      runId: this.runId,
      rule: def.id,
      severity: f.severity,
      metric: f.metric,
      firstStep: first,
      lastStep: step,
      message: '',
      hint: f.hint,
      ...cites(f),
      evidence: this.evidence(f.metric, first, step, f.peak, f.quotes),
      acknowledged: false,
    };
    const version: Version = { alert, text: new AlertText(f.message), filled: false };
    this.open.set(key, version);
    this.at.set(alert.id, this.all.length);
    this.all.push(version);
    return new AlertUpdate('raised', version);
  }

  private replace(id: string, next: Version): void {
    const i = this.at.get(id);
    if (i !== undefined) this.all[i] = next;
  }

  private evidence(
    metric: string,
    first: number,
    last: number,
    peak?: { step: number; value: number },
    quotes?: Finding['quotes'],
  ): Alert['evidence'] {
    const ring = this.history.get(metric);
    const ev = ring
      ? ring.evidence(first, last, this.config.evidenceBefore, this.config.evidenceMax, peak)
      : peak
        ? { steps: [peak.step], values: [peak.value] }
        : { steps: [], values: [] };
    return quotes && quotes.length > 0 ? withQuoted(ev, quotes) : ev;
  }

  /**
   * Every alert so far, by first step (raised order among equal ones), as the run store keeps them: an alert's
   * window opens where its event began, which may be before an alert raised earlier.
   */
  alerts(): Alert[] {
    return this.all.map(filled).sort((a, b) => a.firstStep - b.firstStep);
  }
}

/** Batch: run the detector over a whole stored stream. */
export function detectAlerts(
  runId: string,
  records: readonly MetricRecord[],
  config?: DetectorConfig | DetectorConfigOverrides,
  recipe?: RunRecipe | SourceRecipe,
): Alert[] {
  const d = new CollapseDetector(runId, config, recipe);
  for (const r of records) d.feed(r);
  return d.alerts();
}
