/**
 * "sampo-seed-1.actor_grad_norm": the stem of a chart's downloaded file (its CSV from main, its PNG from the
 * page), from a prefix (one run's name, or "compare") and the metric key, kept to letters, digits, ".", "_"
 * and "-" so it is a valid file name everywhere.
 */
export function chartFileStem(prefix: string, metric: string): string {
  const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[_.]+|_+$/g, '');
  return `${safe(prefix) || 'runs'}.${safe(metric) || 'metric'}`;
}
