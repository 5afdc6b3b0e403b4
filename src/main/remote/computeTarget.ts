/**
 * The one "compute target" contract the session manager runs through: where a run's trainer runs. "This
 * machine" is the session manager's own worker (threads / utilityProcess); a Ray cluster is a spawner whose
 * worker handle submits the run as a Ray job and turns the job's log back into the worker messages the session
 * manager already understands (rayTarget.ts). Nothing in the engine or the store knows which one ran a run.
 */
import type { SpawnWorker } from '../sessions/workerHost';
import { RayClient } from './rayClient';
import { raySpawner } from './rayTarget';
import { normalizeUrl, RemoteTargets } from './targets';

export interface ComputeTarget {
  readonly kind: 'local' | 'ray';
  /** Shown to the user and recorded on the run (never holds the token). */
  readonly label: string;
  /** The dashboard address for a Ray target. */
  readonly url: string | null;
  /**
   * Tags recorded on the run so a later process can find the target again: `ray-url:<dashboard URL>` for every Ray
   * run, and `ray:<remote name>` when it was named. Never the token.
   */
  readonly tags: readonly string[];
  /** Answers once the target can take a run (reachable, token accepted); throws a RemoteError saying why not. */
  preflight(): Promise<void>;
  /** The worker spawner for the session manager; undefined = its default (this machine). */
  readonly spawn: SpawnWorker | undefined;
}

const RAY_TAG_PREFIX = 'ray:';
const RAY_URL_TAG_PREFIX = 'ray-url:';

/**
 * The target a stored run trained on, so resuming it after the lab restarted re-attaches to its Ray job (the job
 * kept running). A run trained `--on NAME` carries `ray:NAME` and `ray-url:URL`, one trained `--on URL` only
 * `ray-url:URL`; anything else is this machine. The token is found the way it was given: by the remote's name, or
 * for a bare URL by a stored remote with that address (`arlarena remote add NAME URL --token-file F` is how a
 * token is given for it), else none. A name that is gone or now points elsewhere falls back to the recorded URL.
 */
export async function targetOfRun(dataDir: string, tags: readonly string[]): Promise<ComputeTarget> {
  const name = tags.find((t) => t.startsWith(RAY_TAG_PREFIX))?.slice(RAY_TAG_PREFIX.length);
  const url = tags.find((t) => t.startsWith(RAY_URL_TAG_PREFIX))?.slice(RAY_URL_TAG_PREFIX.length);
  if (name === undefined && url === undefined) return LOCAL_TARGET;
  const remotes = await new RemoteTargets(dataDir).list();
  const byName = name === undefined ? undefined : remotes.find((r) => r.name === name);
  if (byName && (url === undefined || byName.url === normalizeUrl(url))) return resolveTarget(dataDir, byName.name);
  if (url === undefined) return resolveTarget(dataDir, name); // says the name is unknown, and what to do
  const byUrl = remotes.find((r) => r.url === normalizeUrl(url));
  return resolveTarget(dataDir, byUrl ? byUrl.name : url);
}

/** The tags a new run on this target is created with: `on:ray` and the target's own (none for this machine). */
export function runTagsFor(target: ComputeTarget): string[] {
  return target.kind === 'ray' ? ['on:ray', ...target.tags] : [];
}

export const LOCAL_TARGET: ComputeTarget = {
  kind: 'local',
  label: 'this machine',
  url: null,
  tags: [],
  preflight: async () => undefined,
  spawn: undefined,
};

/** Whether `--on` / `on` names a Ray cluster (anything but absent, empty or "local"). */
export function isRayTarget(on: string | undefined): on is string {
  return on !== undefined && on !== '' && on !== 'local';
}

/** `--on NAME|URL` → a Ray target (a stored remote by name, or a dashboard URL given directly); absent → local. */
export async function resolveTarget(dataDir: string, on: string | undefined): Promise<ComputeTarget> {
  if (!isRayTarget(on)) return LOCAL_TARGET;
  const access = await new RemoteTargets(dataDir).resolve(on);
  const client = new RayClient(access);
  return {
    kind: 'ray',
    label: access.name ? `ray:${access.name} (${access.url})` : `ray:${access.url}`,
    url: access.url,
    tags: [...(access.name ? [`${RAY_TAG_PREFIX}${access.name}`] : []), `${RAY_URL_TAG_PREFIX}${access.url}`],
    preflight: async () => {
      await client.version();
    },
    spawn: raySpawner(client),
  };
}
