/** Write a synthetic run into a store (UI benchmarks, tests, demo data). See src/core/stability/synthetic.ts. */
import type { RunRecord } from '../../shared/api';
import { syntheticStream, type SyntheticOptions } from '../../core/stability/synthetic';
import type { RunStore } from './runStore';

export async function writeSyntheticRun(
  store: RunStore,
  opts: SyntheticOptions & {
    readonly id?: string;
    readonly name?: string;
    readonly env?: string;
    readonly preset?: string;
    readonly tags?: readonly string[];
  },
): Promise<RunRecord> {
  const records = syntheticStream(opts);
  const run = await store.createRun({
    id: opts.id,
    name: opts.name,
    nameLead: `synthetic ${opts.shape ?? 'calm'} (${opts.steps} steps) · ${opts.env ?? 'sokoban'}`,
    tags: [...(opts.tags ?? []), 'synthetic'],
    env: opts.env ?? 'sokoban',
    preset: opts.preset ?? 'synthetic',
    seed: opts.seed ?? 1,
    config: {
      synthetic: { shape: opts.shape ?? 'calm', steps: opts.steps, collapseAt: opts.collapseAt ?? null, nanAt: opts.nanAt ?? null },
    },
    totalSteps: opts.steps,
    status: 'running',
  });
  const chunk = 500;
  for (let i = 0; i < records.length; i += chunk) await store.appendMetrics(run.id, records.slice(i, i + chunk));
  await store.flush(run.id);
  return store.updateRun(run.id, { status: 'completed', finishedAt: new Date().toISOString() });
}
