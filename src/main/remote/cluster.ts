/**
 * What the app's Cluster view reads from a Ray cluster, through the same client the CLI uses (rayClient.ts):
 * the lab's own jobs on it and a job's log tail. The lab's jobs are told from others by the metadata the lab
 * submits them with — `arlarena_run` (a lab run, submission id = run id; rayTarget.ts) and `arlarena_verl` (a verl
 * hand-off, `preset/env`; verlCli.ts) — so jobs other people run on a shared cluster are not listed.
 */
import type { ClusterJob } from '../../shared/api';
import type { RayClient, RayJobDetails } from './rayClient';

/** Ray's times are milliseconds since the epoch (0 or null before the job started). */
function iso(ms: number | null | undefined): string | null {
  return typeof ms === 'number' && ms > 0 ? new Date(ms).toISOString() : null;
}

/**
 * The node a job's entrypoint runs on: the driver's address when it is a Ray driver, else the host of the node
 * agent that supervises it (Ray's JobInfo.driver_agent_http_address), else the node id; null while pending.
 */
function nodeOf(j: RayJobDetails): string | null {
  if (j.driver_info?.node_ip_address) return j.driver_info.node_ip_address;
  if (j.driver_agent_http_address) {
    try {
      return new URL(j.driver_agent_http_address).hostname;
    } catch {
      // not a URL: fall through to the node id
    }
  }
  return j.driver_node_id ? j.driver_node_id.slice(0, 12) : null;
}

export function toClusterJob(j: RayJobDetails): ClusterJob | null {
  const meta = j.metadata ?? {};
  const runId = typeof meta.arlarena_run === 'string' ? meta.arlarena_run : null;
  const verl = typeof meta.arlarena_verl === 'string' ? meta.arlarena_verl : null;
  if (runId === null && verl === null) return null;
  return {
    submissionId: j.submission_id,
    kind: runId !== null ? 'run' : 'verl',
    runId,
    verl,
    status: j.status,
    node: nodeOf(j),
    startTime: iso(j.start_time),
    endTime: iso(j.end_time),
    message: j.message ? j.message.trim().split('\n').pop()!.slice(0, 500) : null,
  };
}

/** The lab's jobs on the cluster, newest first (by start time; pending ones, not started yet, on top). */
export async function labJobs(client: RayClient): Promise<ClusterJob[]> {
  const jobs = (await client.listJobs()).map(toClusterJob).filter((j): j is ClusterJob => j !== null);
  return jobs.sort((a, b) => (b.startTime ?? '9999').localeCompare(a.startTime ?? '9999'));
}

/** Line-protocol lines longer than this are shown shortened to their kind and first characters. */
const PROTOCOL_SHOWN = 200;

/**
 * The last `n` non-blank lines of a job's log, and how many it has, streamed from Ray's job logs endpoint
 * (RayClient.jobLogTail): a log of any size gives its tail holding no more than the tail. Line-protocol lines
 * (`@arlarena:` metric, checkpoint …) are the lab's own traffic — a checkpoint line holds megabytes of base64 — so
 * they are shown shortened to their kind and first characters; the lab has already stored what they carry. Any
 * other line past KEEP_CHARS characters is shown up to there, with its length.
 */
export async function jobLogTail(client: RayClient, submissionId: string, n: number): Promise<{ lines: string[]; totalLines: number }> {
  const { lines, totalLines } = await client.jobLogTail(submissionId, n);
  const shown = lines.map(({ text, length }) =>
    text.includes('@arlarena:') && length > PROTOCOL_SHOWN
      ? `${text.slice(0, 160)}… (${length} characters)`
      : length > text.length
        ? `${text}… (${length} characters)`
        : text,
  );
  return { lines: shown, totalLines };
}
