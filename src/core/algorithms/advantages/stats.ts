/**
 * The group statistics every outcome estimator shares, in plain float64 JS (spec §1.3, §6.1): the mean,
 * the unbiased (N−1) std, and the reference's singleton convention (μ = 0, σ = 1).
 */

/** Mean and unbiased std of xs; for a single value: μ = 0, σ = 1 (the reference's singleton rule). */
export function groupStats(xs: readonly number[]): { mean: number; std: number } {
  const n = xs.length;
  if (n === 0) throw new Error('groupStats: empty group');
  if (n === 1) return { mean: 0, std: 1 };
  let s = 0;
  for (const x of xs) s += x;
  const mean = s / n;
  let ss = 0;
  for (const x of xs) ss += (x - mean) * (x - mean);
  return { mean, std: Math.sqrt(ss / (n - 1)) };
}

/** Indices of rows by key, in first-seen order. */
export function groupBy(keys: readonly string[]): Map<string, number[]> {
  const m = new Map<string, number[]>();
  keys.forEach((k, i) => {
    const g = m.get(k);
    if (g) g.push(i);
    else m.set(k, [i]);
  });
  return m;
}

/**
 * Outcome normalisation within groups `index` (verl's compute_grpo_outcome_advantage, with the
 * verl-agent cross-steps switch). `crossSteps`: every row is a sample of its group. Otherwise each
 * trajectory (`trajIndex`) contributes ONE sample, the MEAN of its rows' scores S_r — ARLArena's
 * compute_grpo_outcome_advantage with compute_mean_std_cross_steps=False (recipe/world_agent/ppo/
 * core_algos.py, the `vanilla_grpo` path; spec §1.3a). The invalid penalty is in S_r, so a trajectory with
 * a penalised turn has a lower sample. Every row is then normalised with those statistics.
 */
export function normalizeInGroups(
  scores: readonly number[],
  index: readonly string[],
  opts: { epsilon: number; normByStd: boolean; crossSteps: boolean; trajIndex?: readonly string[] },
): { advantages: number[]; groupMean: Map<string, number>; groupStd: Map<string, number> } {
  if (scores.length !== index.length) throw new Error(`normalizeInGroups: ${scores.length} scores but ${index.length} group ids`);
  const groupMean = new Map<string, number>();
  const groupStd = new Map<string, number>();
  for (const [uid, rows] of groupBy(index)) {
    let samples: number[];
    if (opts.crossSteps || !opts.trajIndex) {
      samples = rows.map((i) => scores[i]);
    } else {
      const byTraj = groupBy(rows.map((i) => opts.trajIndex![i]));
      samples = [...byTraj.values()].map((members) => members.reduce((a, m) => a + scores[rows[m]], 0) / members.length);
    }
    const { mean, std } = groupStats(samples);
    groupMean.set(uid, mean);
    groupStd.set(uid, std);
  }
  const advantages = scores.map((s, i) => {
    const mean = groupMean.get(index[i])!;
    return opts.normByStd ? (s - mean) / (groupStd.get(index[i])! + opts.epsilon) : s - mean;
  });
  return { advantages, groupMean, groupStd };
}

/** Batch mean and (population) std of a vector, for the critic/advantages_* metrics. */
export function summary(xs: readonly number[]): { mean: number; std: number } {
  if (xs.length === 0) return { mean: Number.NaN, std: Number.NaN };
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const v = xs.reduce((a, b) => a + (b - mean) * (b - mean), 0) / xs.length;
  return { mean, std: Math.sqrt(v) };
}
