import { grpo } from './grpo';
import { groupBy, summary } from './stats';
import type { AdvantageFn } from './types';

/**
 * `empg` (Entropy-Modulated Policy Gradients, spec §1.3c), on top of the grpo advantage:
 *   Ĥ = (H − min H)/(max H − min H + 1e-8) over the batch (H = row mean token entropy under π_old);
 *   g = e^{−kĤ} / (mean_batch(e^{−kĤ}) + 1e-8);  f = e^{−k_f Ĥ};
 *   A_r ← g_r·A_r + ζ·f_{next turn of τ} (only if τ has a next turn); then A ← A − mean over rows of A.
 * As the reference: the mean is over rows (its first-token advantages), and "next turn" is the row of the
 * same trajectory one turn later (the reference parses the turn index from the prompt; rows here are in turn
 * order per trajectory).
 */
export const empg: AdvantageFn = (rows, p) => {
  const base = grpo(rows, p).value;
  if (rows.length === 0) return { value: [], metrics: { 'critic/advantages_mean': Number.NaN, 'critic/advantages_std': Number.NaN } };
  const H = rows.map((r, i) => {
    if (r.entropy === undefined || !Number.isFinite(r.entropy))
      throw new Error(`empg: row ${i} has no finite entropy; the trainer must set TurnRow.entropy (mean token entropy under π_old)`);
    return r.entropy;
  });
  const lo = Math.min(...H);
  const hi = Math.max(...H);
  const hn = H.map((h) => (h - lo) / (hi - lo + 1e-8));
  const e = hn.map((h) => Math.exp(-p.empg.k * h));
  const eMean = e.reduce((a, b) => a + b, 0) / e.length;
  const g = e.map((x) => x / (eMean + 1e-8));
  const f = hn.map((h) => Math.exp(-p.empg.kf * h));
  const next = new Array<number>(rows.length).fill(-1);
  for (const members of groupBy(rows.map((r) => r.trajUid)).values()) {
    for (let j = 0; j + 1 < members.length; j++) next[members[j]] = members[j + 1];
  }
  const mod = base.map((a, i) => g[i] * a + (next[i] >= 0 ? p.empg.zeta * f[next[i]] : 0));
  const m = mod.reduce((a, b) => a + b, 0) / mod.length;
  const value = mod.map((a) => a - m);
  const s = summary(value);
  return { value, metrics: { 'critic/advantages_mean': s.mean, 'critic/advantages_std': s.std } };
};
