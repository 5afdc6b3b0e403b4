/**
 * Test kit for the tests that follow or import a verl console log (the follower's, the session-end and zombie-owner
 * tests): the log's lines, and what a data dir's store kept of it, read in a store opened for the look alone.
 */
import { RunStore } from '../store/runStore';

/** verl's console lines for steps `from`..`to` (each `step:N - actor/entropy:0.5 - critic/score/mean:0.N`, newline-ended). */
export function verlSteps(from: number, to: number): string {
  let s = '';
  for (let i = from; i <= to; i++) s += `step:${i} - actor/entropy:0.5 - critic/score/mean:0.${i}\n`;
  return s;
}

export interface StoredRun {
  id: string;
  status: string;
  /** How many metric rows the store holds for it. */
  steps: number;
}

/** Each run in the data dir with its status and stored step count; the store is opened here and closed again. */
export async function storedRuns(data: string): Promise<StoredRun[]> {
  const store = await RunStore.open(data);
  try {
    const out: StoredRun[] = [];
    for (const r of await store.listRuns()) out.push({ id: r.id, status: r.status, steps: (await store.readMetrics(r.id)).length });
    return out;
  } finally {
    await store.close();
  }
}
