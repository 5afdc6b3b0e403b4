/**
 * Plain float64 JS versions of the policy losses, value AND analytic gradient wrt log π_θ, written from
 * the formulas of spec §1.2 (not from the tfjs code), for the tests' "float32 tfjs ≈ float64" checks.
 */
export interface Case {
  logProb: number[][];
  oldLogProb: number[][];
  adv: number[][];
  mask: number[][];
}

export interface RefParams {
  lo: number;
  hi: number;
  c: number;
  tauPos: number;
  tauNeg: number;
  agg: 'token-mean' | 'seq-mean-token-mean';
}

const clamp = (x: number, a: number, b: number) => Math.min(Math.max(x, a), b);

/** Aggregation weights dValue/dL_{r,t}. */
function weights(mask: number[][], agg: RefParams['agg']): number[][] {
  if (agg === 'token-mean') {
    const n = mask.flat().reduce((a, b) => a + b, 0);
    return mask.map((row) => row.map((m) => m / (n + 1e-8)));
  }
  const lens = mask.map((row) => row.reduce((a, b) => a + b, 0));
  const valid = lens.filter((l) => l > 0).length;
  return mask.map((row, r) => row.map((m) => (lens[r] > 0 ? m / (lens[r] * valid) : 0)));
}

function combine(L: number[][], dL: number[][], mask: number[][], agg: RefParams['agg']) {
  const w = weights(mask, agg);
  let value = 0;
  L.forEach((row, r) =>
    row.forEach((l, t) => {
      if (w[r][t] !== 0) value += w[r][t] * l;
    }),
  );
  return { value, grad: dL.map((row, r) => row.map((g, t) => g * w[r][t])) };
}

export function vanilla64(x: Case, p: RefParams) {
  const L: number[][] = [];
  const dL: number[][] = [];
  x.logProb.forEach((row, r) => {
    L.push([]);
    dL.push([]);
    row.forEach((lp, t) => {
      const raw = lp - x.oldLogProb[r][t];
      const d = clamp(raw, -20, 20);
      const w = Math.exp(d);
      const A = x.adv[r][t];
      const l1 = -A * w;
      const l2 = -A * clamp(w, 1 - p.lo, 1 + p.hi);
      const inRange = raw >= -20 && raw <= 20 ? 1 : 0;
      let l = Math.max(l1, l2);
      let g = l2 > l1 ? 0 : -A * w * inRange;
      if (A < 0 && l > -A * p.c) {
        l = -A * p.c;
        g = 0;
      }
      L[r].push(l);
      dL[r].push(g);
    });
  });
  return combine(L, dL, x.mask, p.agg);
}

export function cispo64(x: Case, p: RefParams) {
  const L = x.logProb.map((row, r) =>
    row.map((lp, t) => -clamp(Math.exp(clamp(lp - x.oldLogProb[r][t], -20, 20)), 1 - p.lo, 1 + p.hi) * x.adv[r][t] * lp),
  );
  const dL = x.logProb.map((row, r) =>
    row.map((lp, t) => -clamp(Math.exp(clamp(lp - x.oldLogProb[r][t], -20, 20)), 1 - p.lo, 1 + p.hi) * x.adv[r][t]),
  );
  return combine(L, dL, x.mask, p.agg);
}

export function sapo64(x: Case, p: RefParams) {
  const sig = (z: number) => 1 / (1 + Math.exp(-z));
  const L: number[][] = [];
  const dL: number[][] = [];
  x.logProb.forEach((row, r) => {
    const len = Math.max(
      1,
      x.mask[r].reduce((a, b) => a + b, 0),
    );
    const aBar = x.adv[r].reduce((s, a, t) => s + a * x.mask[r][t], 0) / len;
    const tau = aBar > 0 ? p.tauPos : p.tauNeg;
    L.push(
      row.map((lp, t) => {
        const w = Math.exp(clamp(lp - x.oldLogProb[r][t], -20, 20));
        return -(4 / tau) * sig(tau * (w - 1)) * x.adv[r][t];
      }),
    );
    dL.push(
      row.map((lp, t) => {
        const raw = lp - x.oldLogProb[r][t];
        const w = Math.exp(clamp(raw, -20, 20));
        const s = sig(tau * (w - 1));
        return raw >= -20 && raw <= 20 ? -4 * s * (1 - s) * w * x.adv[r][t] : 0;
      }),
    );
  });
  return combine(L, dL, x.mask, p.agg);
}

export function gspo64(x: Case, p: RefParams) {
  const L: number[][] = [];
  const dL: number[][] = [];
  x.logProb.forEach((row, r) => {
    const len = Math.max(
      1,
      x.mask[r].reduce((a, b) => a + b, 0),
    );
    const ell = row.reduce((s, lp, t) => s + (lp - x.oldLogProb[r][t]) * x.mask[r][t], 0) / len;
    const capped = ell > 10;
    const s = Math.exp(Math.min(ell, 10));
    L.push(
      row.map((_, t) => {
        const A = x.adv[r][t];
        return Math.max(-A * s, -A * clamp(s, 1 - p.lo, 1 + p.hi));
      }),
    );
    dL.push(
      row.map((_, t) => {
        const A = x.adv[r][t];
        const clippedWins = -A * clamp(s, 1 - p.lo, 1 + p.hi) > -A * s;
        return clippedWins || capped ? 0 : -A * s;
      }),
    );
  });
  return combine(L, dL, x.mask, 'seq-mean-token-mean');
}
