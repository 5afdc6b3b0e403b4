/**
 * remotes.* — the app's side of `arlarena remote` (src/main/cli/commands/remote.ts) and its Cluster view: the same
 * RemoteTargets store (tokens copied owner-only into the data dir, only `hasToken` ever sent back) and the same
 * RayClient, plus the lab's jobs on a cluster (src/main/remote/cluster.ts). The Ray client is loaded on first use.
 */
import { err, ok, type Result } from '../../../shared/result';
import type { LabServices } from '../../app/lab';
import { RemoteError, RemoteTargets } from '../../remote/targets';
import type { AreaMethods, Handlers } from '../types';

/** A cluster that cannot be reached or refuses the token is UNAVAILABLE; bad input names its field. */
async function guard<T>(fn: () => Promise<T>): Promise<Result<T>> {
  try {
    return ok(await fn());
  } catch (e) {
    if (!(e instanceof RemoteError)) throw e;
    if (/exists already/.test(e.message)) return err('CONFLICT', e.message, { field: 'name' });
    if (e.field) return err('VALIDATION', e.message, { field: e.field });
    if (/^no remote named/.test(e.message)) return err('NOT_FOUND', e.message, { field: 'name' });
    return err('UNAVAILABLE', e.message);
  }
}

async function clientFor(services: LabServices, name: string) {
  const { RayClient } = await import('../../remote/rayClient');
  return new RayClient(await new RemoteTargets(services.dataDir).resolve(name));
}

export function createRemotesHandlers(services: LabServices): Handlers<AreaMethods<'remotes'>> {
  const targets = () => new RemoteTargets(services.dataDir);
  return {
    'remotes.list': async () => ok(await targets().list()),
    'remotes.add': async ({ name, url, token, tokenFile }) => {
      // A token file named by the page would send any one-word file of this machine to any URL: from the app,
      // the token is pasted; `arlarena remote add --token-file F` stays for the terminal.
      if (tokenFile !== undefined) {
        return err('VALIDATION', 'the app takes a cluster token pasted, not a file on this machine', {
          field: 'tokenFile',
          hint: `paste the token, or add the cluster from a terminal: arlarena remote add ${name} ${url} --token-file FILE`,
        });
      }
      return guard(() => targets().add(name, url, undefined, token === undefined ? {} : { token }));
    },
    'remotes.test': async ({ name }) =>
      guard(async () => {
        const client = await clientFor(services, name);
        return { url: client.url, ...(await client.summary()) };
      }),
    'remotes.remove': async ({ name }) => guard(async () => ({ removed: await targets().remove(name) })),
    'remotes.jobs': async ({ name }) =>
      guard(async () => {
        const client = await clientFor(services, name);
        const { labJobs } = await import('../../remote/cluster');
        return { name, url: client.url, jobs: await labJobs(client) };
      }),
    'remotes.jobLog': async ({ name, submissionId, lines }) =>
      guard(async () => {
        const client = await clientFor(services, name);
        const { jobLogTail } = await import('../../remote/cluster');
        return jobLogTail(client, submissionId, lines ?? 200);
      }),
    'remotes.stopJob': async ({ name, submissionId }) => {
      // A lab run this app follows stops through its session: Ray's stop is sent by the run's own follower, the
      // trainer writes its checkpoint, and the run is marked stopped here rather than failed.
      const { sessions } = await services.lab();
      if (sessions.list().some((s) => s.runId === submissionId)) {
        await sessions.stop(submissionId);
        return ok({ stopped: true, via: 'session' as const });
      }
      const found = await guard(async () => {
        const client = await clientFor(services, name);
        const { toClusterJob } = await import('../../remote/cluster');
        const job = await client.jobInfo(submissionId);
        return { client, lab: job !== null && toClusterJob(job) !== null, exists: job !== null };
      });
      if (!found.ok) return found;
      const { client, lab, exists } = found.value;
      if (!exists) return err('NOT_FOUND', `no job "${submissionId}" on remote "${name}"`, { field: 'submissionId' });
      if (!lab)
        return err('CONFLICT', `job "${submissionId}" on remote "${name}" was not started by the lab; stop it with Ray's own tools`, {
          field: 'submissionId',
        });
      return guard(async () => ({ stopped: await client.stopJob(submissionId), via: 'ray' as const }));
    },
  };
}
