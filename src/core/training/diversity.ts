/**
 * Response-diversity diagnostics for the detector's response_collapse rule, computed from one
 * step's rows: the prompt and response token ids of each turn row. Pure and cheap (one pass over the tokens with
 * hash maps): the trainer logs them every step under the catalog keys `response/*` (src/shared/metrics.ts).
 *
 * - identical share: the share of responses equal, token for token, to the step's most common response. A policy
 *   that collapsed onto one answer (RAGEN #52: Sokoban responses turned into "!!!!!!!") drives it to 1.
 * - distinct-2: distinct token bigrams over all bigrams of the step's responses (the distinct-n of Li et al. 2016).
 *   One repeated token gives a single bigram, so it falls toward 0 even when responses differ in length.
 * - prompt MI: the mutual information I(X; T) between a row's prompt X and a token T drawn from its response, in
 *   nats: H(T) − Σₓ p(x) H(T | x), plug-in estimates, tokens weighted equally. This is a cheap proxy for the
 *   cross-input distinguishability RAGEN-2 (Wang et al. 2026) separates from entropy: responses that look diverse
 *   but follow one template whatever the input share one token distribution across prompts, and I(X; T) → 0 while
 *   entropy stays put. It is biased upward on few tokens per prompt, so the rule compares it with its own start.
 */

export interface RowTokens {
  readonly prompt: readonly number[];
  readonly response: readonly number[];
}

export interface ResponseDiversity {
  readonly 'response/identical_share': number;
  readonly 'response/distinct_2': number;
  readonly 'response/prompt_mi': number;
}

function entropy(counts: Iterable<number>, total: number): number {
  let h = 0;
  for (const c of counts) if (c > 0) h -= (c / total) * Math.log(c / total);
  return h;
}

/** The step's response-diversity metrics; NaN where they are undefined (no rows, no bigrams, one prompt). */
export function responseDiversity(rows: readonly RowTokens[]): ResponseDiversity {
  const same = new Map<string, number>();
  const bigrams = new Set<string>();
  let nBigrams = 0;
  const tokenCounts = new Map<number, number>();
  const byPrompt = new Map<string, Map<number, number>>();
  const promptTokens = new Map<string, number>();
  let nTokens = 0;
  for (const r of rows) {
    const resp = r.response.join(',');
    same.set(resp, (same.get(resp) ?? 0) + 1);
    for (let i = 1; i < r.response.length; i++) bigrams.add(`${r.response[i - 1]},${r.response[i]}`);
    nBigrams += Math.max(0, r.response.length - 1);
    const p = r.prompt.join(',');
    let counts = byPrompt.get(p);
    if (!counts) byPrompt.set(p, (counts = new Map()));
    for (const t of r.response) {
      tokenCounts.set(t, (tokenCounts.get(t) ?? 0) + 1);
      counts.set(t, (counts.get(t) ?? 0) + 1);
    }
    promptTokens.set(p, (promptTokens.get(p) ?? 0) + r.response.length);
    nTokens += r.response.length;
  }
  let mode = 0;
  for (const c of same.values()) mode = Math.max(mode, c);
  let mi = NaN;
  if (nTokens > 0 && byPrompt.size >= 2) {
    let conditional = 0;
    for (const [p, counts] of byPrompt) {
      const n = promptTokens.get(p)!;
      if (n > 0) conditional += (n / nTokens) * entropy(counts.values(), n);
    }
    // Rounding can leave −1e-16 where the two entropies are equal.
    mi = Math.max(0, entropy(tokenCounts.values(), nTokens) - conditional);
  }
  return {
    'response/identical_share': rows.length > 0 ? mode / rows.length : NaN,
    'response/distinct_2': nBigrams > 0 ? bigrams.size / nBigrams : NaN,
    'response/prompt_mi': mi,
  };
}
