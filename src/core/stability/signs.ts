/**
 * Signs that a falling entropy is a collapse and not learning.
 *
 * Entropy falling by an order of magnitude is what a healthy long RL run does while its score rises: in the real
 * verl runs of ../shared/data/real-runs it fell 0.526 → 0.066 (Qwen2.5-0.5B PPO, 435 steps) and 0.241 → 0.026
 * (Qwen2-7B) with the score climbing throughout, and a 7B model sits at 0.02–0.04 once converged. A collapse is
 * entropy crashing together with something that says learning stopped or broke: the gradient dying (TRL-DAPO
 * run: grad-norm 0.30 → 0), groups with identical returns, the score or the output format falling, responses
 * running into the length cap. Each sign is judged against the run's own earlier values, never against a fixed
 * number taken from this lab's tiny models.
 */
import type { MetricRecord } from '../../shared/metrics';
import type { DetectorConfig } from './config';
import { Baseline, Cadence, Window, fmt, pct } from './stats';
import { at } from './quote';
import { finite } from './types';

/** One metric smoothed over a window given in training steps, with its early baseline and its best so far. */
class Track {
  private cad = new Cadence();
  private win: Window;
  private base: Baseline;
  best = -Infinity;
  sm = NaN;
  constructor(
    readonly key: string,
    private smoothSteps: number,
    private baseSteps: number,
    summary?: (xs: readonly number[]) => number,
  ) {
    this.win = new Window(smoothSteps);
    this.base = new Baseline(baseSteps, summary);
  }
  /** True when the record carried a finite value. */
  feed(rec: MetricRecord): boolean {
    const v = finite(rec, this.key);
    if (v === undefined) return false;
    this.cad.push(rec.step);
    this.win.resize(this.cad.points(this.smoothSteps));
    this.base.resize(this.cad.points(this.baseSteps));
    // A window that just shrank to the learnt interval may be full of earlier points: they count toward the best.
    if (this.win.full) this.best = Math.max(this.best, this.win.mean());
    this.win.push(v);
    this.base.push(v);
    this.sm = this.win.mean();
    if (this.win.full) this.best = Math.max(this.best, this.sm);
    return true;
  }
  get baseline(): number | null {
    return this.base.get();
  }
  get seen(): boolean {
    return Number.isFinite(this.sm);
  }
}

const GRAD = 'actor/grad_norm';
const ZERO_VAR = 'filter/zero_variance_share';
const FORMAT_KEYS = ['episode/valid_format_ratio', 'episode/valid_action_ratio'];
/** Rates in [0, 1]: a fall counts once the best reached successCollapse.minPeak. */
const RATE_KEYS = ['episode/success_rate', 'episode/score_mean'];
const REWARD_KEY = 'episode/reward_mean';
const CLIP = 'response_length/clip_ratio';

export class CollapseSigns {
  private grad: Track;
  private format: Track[];
  private rates: Track[];
  private reward: Track;
  private clip: Track;
  private zeroVar: { step: number; value: number } | undefined;
  private tracks: Track[];
  constructor(private readonly cfg: DetectorConfig) {
    const e = cfg.entropyShift;
    this.grad = new Track(GRAD, e.smooth, e.baselineSteps);
    this.format = FORMAT_KEYS.map((k) => new Track(k, cfg.validityDrop.smooth, e.baselineSteps));
    this.rates = RATE_KEYS.map((k) => new Track(k, e.smooth, e.baselineSteps));
    this.reward = new Track(REWARD_KEY, e.smooth, e.baselineSteps);
    this.clip = new Track(CLIP, cfg.lengthRunaway.smooth, cfg.lengthRunaway.baselineSteps, (xs) => Math.min(...xs));
    this.tracks = [this.grad, ...this.format, ...this.rates, this.reward, this.clip];
  }

  feed(rec: MetricRecord): void {
    for (const t of this.tracks) t.feed(rec);
    const z = finite(rec, ZERO_VAR);
    if (z !== undefined) this.zeroVar = { step: rec.step, value: z };
  }

  /**
   * The signs holding at the last fed step, each a short phrase naming its metric, with its numbers labelled as
   * quote.ts says (a smoothed level is a "mean", an early level a "median"); empty: none.
   */
  current(): string[] {
    const e = this.cfg.entropyShift;
    const out: string[] = [];
    const gb = this.grad.baseline;
    if (gb !== null && gb > 0 && this.grad.seen && this.grad.sm <= e.deadGradFrac * gb) {
      out.push(`${GRAD} mean ${fmt(this.grad.sm)} against its early median ${fmt(gb)}`);
    }
    if (this.zeroVar !== undefined && this.zeroVar.value >= this.cfg.deadSignal.share)
      out.push(`${ZERO_VAR} ${at(ZERO_VAR, this.zeroVar)} (groups with identical returns)`);
    for (const t of this.format) {
      if (t.seen && Number.isFinite(t.best) && t.best - t.sm >= this.cfg.validityDrop.warnDrop)
        out.push(`${t.key} mean ${pct(t.sm)} against its best mean ${pct(t.best)}`);
    }
    for (const t of this.rates) {
      if (t.seen && t.best >= this.cfg.successCollapse.minPeak && t.sm <= (1 - e.scoreFallFrac) * t.best)
        out.push(`${t.key} mean ${pct(t.sm)} against its best mean ${pct(t.best)}`);
    }
    const r = this.reward;
    if (r.seen && Number.isFinite(r.best) && r.best > 0 && r.sm <= (1 - e.scoreFallFrac) * r.best)
      out.push(`${REWARD_KEY} mean ${fmt(r.sm)} against its best mean ${fmt(r.best)}`);
    const cb = this.clip.baseline;
    const l = this.cfg.lengthRunaway;
    if (cb !== null && this.clip.seen && this.clip.sm >= l.clipCritical && this.clip.sm >= cb + l.clipRise)
      out.push(`${CLIP} mean ${pct(this.clip.sm)} (responses at the length cap) against its start ${pct(cb)}`);
    return out;
  }
}
