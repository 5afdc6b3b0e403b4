/**
 * The one "compute target" contract the session manager runs through: where a run's trainer runs. "This
 * machine" is the session manager's own worker (threads / utilityProcess); a Ray cluster is a spawner whose
 * worker handle submits the run as a Ray job and turns the job's log back into the worker messages the session
 * manager already understands (rayTarget.ts). Nothing in the engine or the store knows which one ran a run.
 */
import type { SpawnWorker } from '../sessions/workerHost';
import { RayClient } from './rayClient';
import { raySpawner } from './rayTarget';
import { RemoteTargets } from './targets';

export interface ComputeTarget {
  readonly kind: 'local' | 'ray';
  /** Shown to the user and recorded on the run (never holds the token). */
  readonly label: string;
  /** The dashboard address for a Ray target. */
  readonly url: string | null;
  /** Tag recorded on the run so a later process can find the target again (`ray:<remote name>`), or null. */
  readonly tag: string | null;
  /** Answers once the target can take a run (reachable, token accepted); throws a RemoteError saying why not. */
  preflight(): Promise<void>;
  /** The worker spawner for the session manager; undefined = its default (this machine). */
  readonly spawn: SpawnWorker | undefined;
}

const RAY_TAG_PREFIX = 'ray:';

/**
 * The target a stored run trained on: a run trained `--on NAME` carries the tag `ray:NAME`, so resuming it after
 * the lab restarted re-attaches to its Ray job (the job kept running); anything else is this machine.
 */
export async function targetOfRun(dataDir: string, tags: readonly string[]): Promise<ComputeTarget> {
  const tag = tags.find((t) => t.startsWith(RAY_TAG_PREFIX));
  return tag ? resolveTarget(dataDir, tag.slice(RAY_TAG_PREFIX.length)) : LOCAL_TARGET;
}

export const LOCAL_TARGET: ComputeTarget = {
  kind: 'local',
  label: 'this machine',
  url: null,
  tag: null,
  preflight: async () => undefined,
  spawn: undefined,
};

/** `--on NAME|URL` → a Ray target (a stored remote by name, or a dashboard URL given directly); absent → local. */
export async function resolveTarget(dataDir: string, on: string | undefined): Promise<ComputeTarget> {
  if (on === undefined || on === '' || on === 'local') return LOCAL_TARGET;
  const access = await new RemoteTargets(dataDir).resolve(on);
  const client = new RayClient(access);
  return {
    kind: 'ray',
    label: access.name ? `ray:${access.name} (${access.url})` : `ray:${access.url}`,
    url: access.url,
    tag: access.name ? `${RAY_TAG_PREFIX}${access.name}` : null,
    preflight: async () => {
      await client.version();
    },
    spawn: raySpawner(client),
  };
}
