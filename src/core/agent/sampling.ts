/**
 * Token sampling from one row of logits, shared by every rollout engine so that engines with equal logits draw
 * identical samples from the same Rng state (one `rng.float()` per sampled token, rows in order).
 *
 * Behaviour log-prob: log softmax(logits / temperature)[token] over the *full* vocabulary — the quantity the
 * trainer's `tokenLogProbs(rows, {temperature})` recomputes, so their difference is the engine mismatch. Top-k /
 * top-p only restrict which tokens can be drawn (as in vLLM's logprobs, which are also pre-truncation). With
 * temperature 0 decoding is greedy and the log-prob is taken at temperature 1.
 */
import type { Rng } from '../util/rng';

export interface SamplingOptions {
  /** Maximum tokens generated per row (the stop token counts). */
  maxNewTokens: number;
  /** Softmax temperature; 0 = greedy. */
  temperature: number;
  /** Nucleus mass in (0, 1]; 1 = off. */
  topP: number;
  /** Keep the k most likely tokens; 0 = off. */
  topK: number;
  /** Generation of a row ends right after any of these ids (included in the output). */
  stopIds: readonly number[];
}

export function validateSampling(o: SamplingOptions): void {
  if (!Number.isInteger(o.maxNewTokens) || o.maxNewTokens < 1)
    throw new Error(`sampling.maxNewTokens: must be an integer ≥ 1, got ${o.maxNewTokens}`);
  if (!(o.temperature >= 0) || !Number.isFinite(o.temperature)) throw new Error(`sampling.temperature: must be ≥ 0, got ${o.temperature}`);
  if (!(o.topP > 0 && o.topP <= 1)) throw new Error(`sampling.topP: must be in (0, 1], got ${o.topP}`);
  if (!Number.isInteger(o.topK) || o.topK < 0) throw new Error(`sampling.topK: must be an integer ≥ 0 (0 = off), got ${o.topK}`);
}

/** Sample one token from `logits[offset .. offset+V)`. */
export function sampleToken(
  logits: Float32Array,
  offset: number,
  V: number,
  o: Pick<SamplingOptions, 'temperature' | 'topP' | 'topK'>,
  rng: Rng,
  scratch?: { probs: Float64Array; order: Int32Array },
): { token: number; logProb: number } {
  const t = o.temperature > 0 ? o.temperature : 1;
  let max = -Infinity;
  let argmax = 0;
  for (let i = 0; i < V; i++) {
    const z = logits[offset + i];
    if (z > max) {
      max = z;
      argmax = i;
    }
  }
  const probs = scratch?.probs ?? new Float64Array(V);
  let sum = 0;
  for (let i = 0; i < V; i++) {
    const e = Math.exp((logits[offset + i] - max) / t);
    probs[i] = e;
    sum += e;
  }
  const logZ = Math.log(sum);
  const lp = (i: number): number => (logits[offset + i] - max) / t - logZ;
  // The draw happens even for greedy decoding so the Rng stream does not depend on the temperature.
  const u = rng.float();
  if (o.temperature === 0) return { token: argmax, logProb: lp(argmax) };
  if (o.topK === 0 && o.topP >= 1) {
    let acc = 0;
    const target = u * sum;
    for (let i = 0; i < V; i++) {
      acc += probs[i];
      if (acc > target) return { token: i, logProb: lp(i) };
    }
    return { token: lastNonZero(probs, V), logProb: lp(lastNonZero(probs, V)) };
  }
  // Sort ids by probability (descending, ties by id) and cut by top-k, then by top-p.
  const order = scratch?.order ?? new Int32Array(V);
  for (let i = 0; i < V; i++) order[i] = i;
  const sorted = Array.from(order.subarray(0, V)).sort((a, b) => probs[b] - probs[a] || a - b);
  let keep = o.topK > 0 ? Math.min(o.topK, V) : V;
  if (o.topP < 1) {
    let acc = 0;
    for (let r = 0; r < keep; r++) {
      acc += probs[sorted[r]] / sum;
      if (acc >= o.topP) {
        keep = r + 1;
        break;
      }
    }
  }
  let kept = 0;
  for (let r = 0; r < keep; r++) kept += probs[sorted[r]];
  const target = u * kept;
  let acc = 0;
  for (let r = 0; r < keep; r++) {
    acc += probs[sorted[r]];
    if (acc > target) return { token: sorted[r], logProb: lp(sorted[r]) };
  }
  return { token: sorted[keep - 1], logProb: lp(sorted[keep - 1]) };
}

function lastNonZero(p: Float64Array, V: number): number {
  for (let i = V - 1; i >= 0; i--) if (p[i] > 0) return i;
  return 0;
}

/** log softmax(logits/temperature)[token] for one row of logits (the forward-only log-prob used by engines). */
export function tokenLogProb(logits: Float32Array, offset: number, V: number, token: number, temperature = 1): number {
  let max = -Infinity;
  for (let i = 0; i < V; i++) if (logits[offset + i] > max) max = logits[offset + i];
  let sum = 0;
  for (let i = 0; i < V; i++) sum += Math.exp((logits[offset + i] - max) / temperature);
  return (logits[offset + token] - max) / temperature - Math.log(sum);
}
