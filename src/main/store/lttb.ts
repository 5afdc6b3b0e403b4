/**
 * Largest-Triangle-Three-Buckets downsampling (Steinarsson 2013, "Downsampling Time Series for Visual
 * Representation", §4.2): keeps the first and last point and, per bucket, the point forming the largest
 * triangle with the previous kept point and the next bucket's average. A spike maximises that area in its
 * bucket, so isolated spikes survive. Returns the kept indices in increasing order.
 */
export function lttbIndices(x: ArrayLike<number>, y: ArrayLike<number>, threshold: number): number[] {
  const n = x.length;
  if (threshold >= n || n <= 2) return Array.from({ length: n }, (_, i) => i);
  if (threshold <= 2) return [0, n - 1];
  const out: number[] = [0];
  const every = (n - 2) / (threshold - 2);
  let a = 0;
  for (let i = 0; i < threshold - 2; i++) {
    // Next bucket's average (the third vertex).
    const nStart = Math.floor((i + 1) * every) + 1;
    const nEnd = Math.min(Math.floor((i + 2) * every) + 1, n);
    let avgX = 0;
    let avgY = 0;
    for (let j = nStart; j < nEnd; j++) {
      avgX += x[j];
      avgY += y[j];
    }
    const cnt = nEnd - nStart;
    if (cnt > 0) {
      avgX /= cnt;
      avgY /= cnt;
    } else {
      avgX = x[n - 1];
      avgY = y[n - 1];
    }
    const start = Math.floor(i * every) + 1;
    const end = Math.min(Math.floor((i + 1) * every) + 1, n - 1);
    const ax = x[a];
    const ay = y[a];
    let best = start;
    let bestArea = -1;
    for (let j = start; j < end; j++) {
      const area = Math.abs((ax - avgX) * (y[j] - ay) - (ax - x[j]) * (avgY - ay));
      if (area > bestArea) {
        bestArea = area;
        best = j;
      }
    }
    out.push(best);
    a = best;
  }
  out.push(n - 1);
  return out;
}
