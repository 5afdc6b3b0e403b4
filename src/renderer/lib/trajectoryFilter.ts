/** The trajectory viewer's episode filters: outcome (won / lost) and split (training rollout / validation). */
import type { Trajectory } from '../../shared/api';

export type OutcomeFilter = 'all' | 'won' | 'lost';
export type SplitFilter = 'all' | 'train' | 'val';

export interface EpisodeFilter {
  readonly outcome: OutcomeFilter;
  readonly split: SplitFilter;
}

/** Indices (into `trajs`, so the episode picker keeps each episode's position) of the episodes that pass. */
export function filterEpisodes(trajs: readonly Pick<Trajectory, 'won' | 'split'>[], f: EpisodeFilter): number[] {
  const out: number[] = [];
  trajs.forEach((t, i) => {
    if (f.outcome === 'won' && !t.won) return;
    if (f.outcome === 'lost' && t.won) return;
    if (f.split !== 'all' && t.split !== f.split) return;
    out.push(i);
  });
  return out;
}

/** Counts per filter value, shown beside each choice so an empty choice is visible before it is picked. */
export function episodeCounts(trajs: readonly Pick<Trajectory, 'won' | 'split'>[]): Record<'won' | 'lost' | 'train' | 'val', number> {
  const c = { won: 0, lost: 0, train: 0, val: 0 };
  for (const t of trajs) {
    c[t.won ? 'won' : 'lost']++;
    c[t.split]++;
  }
  return c;
}
