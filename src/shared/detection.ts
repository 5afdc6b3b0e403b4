/** What the collapse detector has read of a run. Free of zod, so the renderer can import it without the schemas. */
import type { RunSummary } from './api';

/**
 * The last step the collapse detector has checked on a run, or null if it never has. A record from before
 * detectedThrough was kept (the field absent) is read by where it came from: a lab run or an import fed every
 * stored step to the detector as it was written, a synthetic run (tag `synthetic`) or a record rebuilt from a
 * damaged one (tag `damaged`) never was.
 */
export function detectedThroughOf(r: Pick<RunSummary, 'detectedThrough' | 'tags' | 'step'>): number | null {
  if (r.detectedThrough !== undefined) return r.detectedThrough;
  return r.tags.includes('synthetic') || r.tags.includes('damaged') ? null : r.step;
}
