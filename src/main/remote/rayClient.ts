/**
 * A small client for a Ray cluster's dashboard REST API (the Jobs API and the package store), facts from Ray's
 * dashboard/modules/job/job_head.py (2.60): `GET /api/version`, `GET|PUT /api/packages/{protocol}/{name}`,
 * `POST /api/jobs/`, `GET /api/jobs/` (list), `GET /api/jobs/{id}`, `POST /api/jobs/{id}/stop`, `GET /api/jobs/{id}/logs`, and `GET /api/cluster_status` for resources. With token auth on, every request
 * carries `Authorization: Bearer <token>` (Ray ≥ 2.52; 401 without it, 403 with a wrong one).
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { RemoteAccess } from './targets';
import { RemoteError } from './targets';
import { JobLogTail, LogAnswerError, RayLogsDecoder, type TailLine } from './logTail';

export type RayJobStatus = 'PENDING' | 'RUNNING' | 'STOPPED' | 'SUCCEEDED' | 'FAILED';
export const TERMINAL_JOB_STATUSES: readonly RayJobStatus[] = ['STOPPED', 'SUCCEEDED', 'FAILED'];

export interface RayJobInfo {
  readonly submission_id: string;
  readonly status: RayJobStatus;
  readonly message: string | null;
  readonly entrypoint: string;
  readonly start_time: number | null;
  readonly end_time: number | null;
  readonly driver_exit_code?: number | null;
  readonly driver_node_id?: string | null;
}

/** A job as `GET /api/jobs/` lists it (Ray's JobDetails): the info above plus its metadata and driver. */
export interface RayJobDetails extends RayJobInfo {
  readonly metadata?: Record<string, string> | null;
  /** Set only for an entrypoint that connects to Ray as a driver (ray.init); a lab run's `node …` never does. */
  readonly driver_info?: { readonly id?: string; readonly node_ip_address?: string; readonly pid?: string } | null;
  /** The agent of the node the entrypoint runs on, e.g. `http://10.0.0.5:52365` (null while pending). */
  readonly driver_agent_http_address?: string | null;
  readonly driver_node_id?: string | null;
}

export interface JobSubmission {
  readonly submissionId: string;
  readonly entrypoint: string;
  readonly runtimeEnv: Record<string, unknown>;
  readonly metadata?: Record<string, string>;
  readonly entrypointNumCpus?: number;
  readonly entrypointNumGpus?: number;
}

export interface ClusterSummary {
  readonly rayVersion: string;
  readonly nodes: number;
  readonly cpus: { total: number; free: number };
  readonly gpus: { total: number; free: number };
}

/** How much a cluster may send and how long it may take (RayClient's defaults; tests pass smaller ones). */
export interface RayClientLimits {
  /** Deadline for one whole answer, however slowly its bytes arrive. */
  readonly deadlineMs: number;
  /** Largest JSON answer of the small calls (version, cluster status, job list, job info). */
  readonly maxJsonBytes: number;
  /** Largest job log read whole (a training job's log carries its checkpoints as base64 lines). */
  readonly maxLogBytes: number;
}

export const DEFAULT_RAY_LIMITS: RayClientLimits = { deadlineMs: 30_000, maxJsonBytes: 16 * 1024 * 1024, maxLogBytes: 256 * 1024 * 1024 };
/** Nothing received for this long ends a call early (a live connection sends something). */
const IDLE_TIMEOUT_MS = 15_000;
/** Of an error answer (4xx/5xx), only this much is read: the message wants its last line at most. */
const ERROR_BODY_BYTES = 64 * 1024;
/** The whole job log may take this long to arrive. */
const LOG_DEADLINE_MS = 300_000;

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(0)} MiB` : `${(n / 1024).toFixed(0)} KiB`;
}

export class RayClient {
  private readonly limits: RayClientLimits;

  constructor(
    private readonly access: RemoteAccess,
    limits: Partial<RayClientLimits> = {},
  ) {
    this.limits = { ...DEFAULT_RAY_LIMITS, ...limits };
  }

  get url(): string {
    return this.access.url;
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { ...(this.access.token ? { authorization: `Bearer ${this.access.token}` } : {}), ...extra };
  }

  private where(): string {
    return this.access.name ? `remote "${this.access.name}" (${this.access.url})` : this.access.url;
  }

  /** A request that got no answer (refused, reset, timed out): said with the address and what to check. */
  private unreachable(err: NodeJS.ErrnoException): RemoteError {
    return new RemoteError(
      `cannot reach the Ray dashboard at ${this.where()}: ${err.code ?? err.message}. Is the cluster up and the address (dashboard port, usually 8265) right?`,
    );
  }

  /** An answer of 401 or 403 (Ray's token auth) is thrown with what to do about the token; other statuses pass. */
  private checkAuth(status: number): void {
    if (status === 401)
      throw new RemoteError(
        `${this.where()} asks for a token (Ray token auth is on): add the remote with --token-file FILE holding the cluster's token`,
      );
    if (status === 403)
      throw new RemoteError(
        `${this.where()} refused the token: it is not this cluster's token (ray get-auth-token on the head prints the right one); re-add the remote with the right --token-file`,
      );
  }

  /**
   * One request; network failures and auth refusals become one clear RemoteError. node:http rather than fetch:
   * Node's fetch always sends `Sec-Fetch-Mode`, and Ray's dashboard refuses every non-GET request carrying a
   * Sec-Fetch-* header as browser traffic (dashboard/optional_utils.py, is_browser_request).
   *
   * Bounded whatever the other end does: `timeoutMs` is the deadline for the whole answer (a server sending one
   * byte every few seconds does not restart it), an answer over `maxBytes` is refused as soon as it passes that
   * (the connection is closed, nothing more is read), and of an error answer only the first 64 KiB are kept. With
   * `sink`, a successful answer is handed to it chunk by chunk instead of being kept (and `maxBytes` does not
   * apply); an error the sink throws ends the call with its message.
   */
  async request(
    method: string,
    path: string,
    body?: string | Uint8Array,
    contentType?: string,
    timeoutMs = this.limits.deadlineMs,
    maxBytes = this.limits.maxJsonBytes,
    sink?: (chunk: Buffer) => void,
  ): Promise<{ status: number; ok: boolean; text: string }> {
    const url = new URL(`${this.access.url}${path}`);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    let r: { status: number; ok: boolean; text: string };
    try {
      r = await new Promise((resolve, reject) => {
        let settled = false;
        const finish = (f: () => void) => {
          if (settled) return;
          settled = true;
          clearTimeout(deadline);
          f();
        };
        const req = send(
          url,
          {
            method,
            headers: this.headers({
              ...(contentType ? { 'content-type': contentType } : {}),
              ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}),
            }),
            timeout: Math.min(timeoutMs, IDLE_TIMEOUT_MS),
          },
          (res) => {
            const status = res.statusCode ?? 0;
            const ok = status >= 200 && status < 300;
            const cap = ok ? maxBytes : ERROR_BODY_BYTES;
            const chunks: Buffer[] = [];
            let size = 0;
            const done = () => finish(() => resolve({ status, ok, text: Buffer.concat(chunks).toString('utf8') }));
            res.on('data', (c: Buffer) => {
              if (settled) return;
              if (ok && sink) {
                try {
                  sink(c);
                } catch (e) {
                  finish(() => reject(Object.assign(e instanceof Error ? e : new Error(String(e)), { code: 'ESINK' })));
                  req.destroy();
                }
                return;
              }
              if (size + c.length > cap) {
                if (ok) {
                  finish(() =>
                    reject(
                      Object.assign(
                        new Error(
                          `the answer is over the ${formatBytes(cap)} a ${method} ${url.pathname} may send; nothing of it was used`,
                        ),
                        { code: 'ETOOBIG' },
                      ),
                    ),
                  );
                } else {
                  chunks.push(c.subarray(0, cap - size));
                  size = cap;
                  done();
                }
                req.destroy();
                return;
              }
              size += c.length;
              chunks.push(c);
            });
            res.on('end', done);
            res.on('error', (e) => finish(() => reject(e)));
            res.on('close', () =>
              finish(() =>
                reject(Object.assign(new Error('the connection closed before the answer was complete'), { code: 'ECONNRESET' })),
              ),
            );
          },
        );
        const deadline = setTimeout(() => {
          finish(() => reject(Object.assign(new Error(`no complete answer within ${timeoutMs / 1000} s`), { code: 'ETIMEDOUT' })));
          req.destroy();
        }, timeoutMs);
        req.on('timeout', () =>
          req.destroy(
            Object.assign(new Error(`nothing received for ${Math.min(timeoutMs, IDLE_TIMEOUT_MS) / 1000} s`), { code: 'ETIMEDOUT' }),
          ),
        );
        req.on('error', (e) => finish(() => reject(e)));
        if (body !== undefined) req.write(body);
        req.end();
      });
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      if (err.code === 'ESINK') throw e; // the sink's own error: its caller says what it means
      if (err.code === 'ETOOBIG') throw new RemoteError(`${this.where()}: ${err.message}. Is this address a Ray dashboard?`);
      if (err.code === 'ETIMEDOUT' && err.message.startsWith('no complete answer'))
        throw new RemoteError(
          `${method} ${url.pathname} on ${this.where()}: ${err.message} (the dashboard answers too slowly or not at all)`,
        );
      throw this.unreachable(err);
    }
    this.checkAuth(r.status);
    return r;
  }

  /**
   * A GET whose answer is handed over as it arrives (the state API's log stream, `/api/v0/logs/stream`, which
   * keeps the connection open and sends what the file gains). Resolves once the head answers, with its status (and
   * the body when it is not 200); `closed` settles when the answer ends or the connection drops, `close()` ends it.
   */
  async openStream(
    path: string,
    onChunk: (chunk: Buffer) => void,
  ): Promise<{ status: number; text: string; closed: Promise<void>; close: () => void }> {
    const url = new URL(`${this.access.url}${path}`);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    let r: { status: number; text: string; closed: Promise<void>; close: () => void };
    try {
      r = await new Promise((resolve, reject) => {
        const req = send(url, { method: 'GET', headers: this.headers() }, (res) => {
          const status = res.statusCode ?? 0;
          const closed = new Promise<void>((done) => {
            res.once('close', done);
            res.once('error', () => done());
          });
          if (status !== 200) {
            const chunks: Buffer[] = [];
            let size = 0;
            res.on('data', (c: Buffer) => {
              if (size >= ERROR_BODY_BYTES) return void res.destroy();
              size += c.length;
              chunks.push(c);
            });
            void closed.then(() => resolve({ status, text: Buffer.concat(chunks).toString('utf8'), closed, close: () => undefined }));
            return;
          }
          res.on('data', onChunk);
          resolve({ status, text: '', closed, close: () => req.destroy() });
        });
        // Only the wait for the head's first answer is bounded: a quiet log is not a dead connection.
        const t = setTimeout(() => req.destroy(Object.assign(new Error('no answer within 15000 ms'), { code: 'ETIMEDOUT' })), 15_000);
        req.once('response', () => clearTimeout(t));
        req.once('close', () => clearTimeout(t));
        req.on('error', reject);
        req.end();
      });
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      throw this.unreachable(err);
    }
    this.checkAuth(r.status);
    return r;
  }

  private async json<T>(
    method: string,
    path: string,
    body?: unknown,
    timeoutMs = this.limits.deadlineMs,
    maxBytes = this.limits.maxJsonBytes,
  ): Promise<T> {
    const r = await this.request(
      method,
      path,
      body === undefined ? undefined : JSON.stringify(body),
      body === undefined ? undefined : 'application/json',
      timeoutMs,
      maxBytes,
    );
    const text = r.text;
    if (!r.ok) throw new RemoteError(`${method} ${path} on ${this.where()} answered ${r.status}: ${lastLine(text)}`);
    return this.parse<T>(`${method} ${path}`, text);
  }

  private parse<T>(what: string, text: string): T {
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new RemoteError(
        `${what} on ${this.where()} answered something that is not JSON (${JSON.stringify(text.slice(0, 60))}${text.length > 60 ? '…' : ''}): is this address a Ray dashboard?`,
      );
    }
  }

  async version(): Promise<string> {
    const v = await this.json<{ ray_version?: string } | null>('GET', '/api/version');
    if (!isObject(v) || typeof v.ray_version !== 'string')
      throw new RemoteError(`${this.where()} answered /api/version without a ray_version: is this a Ray dashboard?`);
    return v.ray_version;
  }

  /**
   * Version, alive nodes and CPU/GPU totals and free amounts, from the autoscaler report behind
   * /api/cluster_status (loadMetricsReport.usage is {resource: [used, total]}; usageByNode has one key per node).
   * A head that has just started may not have reported yet: asked again for up to `waitMs`.
   */
  async summary(waitMs = 10_000): Promise<ClusterSummary> {
    const rayVersion = await this.version();
    const t0 = Date.now();
    for (;;) {
      const s = await this.json<{
        data?: {
          clusterStatus?: { loadMetricsReport?: { usage?: Record<string, [number, number]>; usageByNode?: Record<string, unknown> } };
        };
      } | null>('GET', '/api/cluster_status');
      const report =
        isObject(s) && isObject(s.data) && isObject(s.data.clusterStatus) && isObject(s.data.clusterStatus.loadMetricsReport)
          ? s.data.clusterStatus.loadMetricsReport
          : undefined;
      const usage = report?.usage ?? {};
      const bad =
        !isObject(usage) ||
        (report?.usageByNode !== undefined && !isObject(report.usageByNode)) ||
        Object.values(usage).some(
          (u) => !Array.isArray(u) || u.length !== 2 || !u.every((x) => typeof x === 'number' && Number.isFinite(x)),
        );
      if (bad)
        throw new RemoteError(
          `${this.where()} answered /api/cluster_status in a shape Ray does not use (usage is not {resource: [used, total]}): is this a Ray dashboard?`,
        );
      if (Object.keys(usage).length > 0 || Date.now() - t0 > waitMs) {
        const pair = (k: string) => {
          const [used, total] = usage[k] ?? [0, 0];
          return { total, free: Math.max(0, total - used) };
        };
        return { rayVersion, nodes: Object.keys(report?.usageByNode ?? {}).length, cpus: pair('CPU'), gpus: pair('GPU') };
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  /** True when the cluster's package store already holds `gcs://<name>` (GET also pins it for a while). */
  async hasPackage(name: string): Promise<boolean> {
    const r = await this.request('GET', `/api/packages/gcs/${name}`);
    if (r.status === 404) return false;
    if (!r.ok) throw new RemoteError(`checking package ${name} on ${this.where()} failed (${r.status})`);
    return true;
  }

  async uploadPackage(name: string, zip: Uint8Array): Promise<void> {
    const r = await this.request('PUT', `/api/packages/gcs/${name}`, zip, 'application/octet-stream', 300_000);
    const text = r.text;
    if (!r.ok)
      throw new RemoteError(
        `uploading package ${name} (${(zip.byteLength / 1e6).toFixed(1)} MB) to ${this.where()} failed (${r.status}): ${lastLine(text)}`,
      );
  }

  /**
   * Submit a job under a submission id of our choosing. Submitting the same id again (a retry after a lost
   * answer) is idempotent: Ray refuses a second job with that id, and the existing job is returned instead.
   */
  async submitJob(j: JobSubmission): Promise<{ submissionId: string; existed: boolean }> {
    const body = {
      entrypoint: j.entrypoint,
      submission_id: j.submissionId,
      runtime_env: j.runtimeEnv,
      metadata: j.metadata ?? {},
      ...(j.entrypointNumCpus !== undefined ? { entrypoint_num_cpus: j.entrypointNumCpus } : {}),
      ...(j.entrypointNumGpus !== undefined ? { entrypoint_num_gpus: j.entrypointNumGpus } : {}),
    };
    let r = await this.request('POST', '/api/jobs/', JSON.stringify(body), 'application/json');
    // A head that has just started answers "No available agent to submit job" until its job agent is up (seconds):
    // wait for it rather than fail the submission.
    for (const until = Date.now() + 30_000; !r.ok && /No available agent/i.test(r.text) && Date.now() < until;) {
      await new Promise((res) => setTimeout(res, 500));
      r = await this.request('POST', '/api/jobs/', JSON.stringify(body), 'application/json');
    }
    const text = r.text;
    if (r.ok) return { submissionId: this.parse<{ submission_id: string }>('POST /api/jobs/', text).submission_id, existed: false };
    if (/already exists/i.test(text)) {
      const existing = await this.jobInfo(j.submissionId);
      if (existing && existing.entrypoint === j.entrypoint) return { submissionId: j.submissionId, existed: true };
      throw new RemoteError(`a different job with submission id ${j.submissionId} already exists on ${this.where()}`);
    }
    throw new RemoteError(`submitting job ${j.submissionId} to ${this.where()} failed (${r.status}): ${lastLine(text)}`);
  }

  async jobInfo(id: string): Promise<RayJobInfo | null> {
    const r = await this.request('GET', `/api/jobs/${encodeURIComponent(id)}`);
    const text = r.text;
    if (r.status === 404) return null;
    if (!r.ok) throw new RemoteError(`reading job ${id} on ${this.where()} failed (${r.status}): ${lastLine(text)}`);
    const info = this.parse<RayJobInfo | null>(`GET /api/jobs/${id}`, text);
    if (!isObject(info)) throw new RemoteError(`reading job ${id} on ${this.where()}: the answer is not a job`);
    return info;
  }

  /** Every job the cluster knows (submitted through the Jobs API or not), in Ray's order. */
  async listJobs(): Promise<RayJobDetails[]> {
    const jobs = await this.json<unknown>('GET', '/api/jobs/');
    if (!Array.isArray(jobs) || !jobs.every(isObject))
      throw new RemoteError(`${this.where()} answered /api/jobs/ with something that is not a list of jobs: is this a Ray dashboard?`);
    return jobs as RayJobDetails[];
  }

  async stopJob(id: string): Promise<boolean> {
    const r = await this.json<{ stopped: boolean }>('POST', `/api/jobs/${encodeURIComponent(id)}/stop`);
    return r.stopped;
  }

  /** A job's whole log (up to `maxBytes`, default the client's maxLogBytes: past that, a RemoteError). */
  async jobLogs(id: string, maxBytes = this.limits.maxLogBytes): Promise<string> {
    const r = await this.json<{ logs?: unknown } | null>(
      'GET',
      `/api/jobs/${encodeURIComponent(id)}/logs`,
      undefined,
      LOG_DEADLINE_MS,
      maxBytes,
    );
    if (!isObject(r) || typeof r.logs !== 'string')
      throw new RemoteError(`reading the log of job ${id} on ${this.where()}: the answer has no logs text`);
    return r.logs;
  }

  /**
   * The last `n` non-blank lines of a job's log and how many it has, from the same endpoint as jobLogs, read as the
   * answer arrives (logTail.ts): however long the log, only the tail is held — n lines of at most KEEP_CHARS
   * characters each (a longer line comes with its real length). Bounded in time by the whole-log deadline.
   */
  async jobLogTail(id: string, n: number): Promise<{ lines: TailLine[]; totalLines: number; peakHeldChars: number }> {
    const tail = new JobLogTail(n);
    return this.readLogAnswer(
      id,
      (c) => tail.write(c),
      () => tail.end(),
    );
  }

  /**
   * A job's whole log handed to `onText` in order, piece by piece, as the answer arrives (the same endpoint as
   * jobLogs, decoded by logTail.ts): nothing is held, so no size cap applies; the whole-log deadline bounds it in
   * time. A failure part-way leaves what was handed on so far.
   */
  async streamJobLog(id: string, onText: (text: string) => void): Promise<void> {
    const decoder = new RayLogsDecoder(onText);
    await this.readLogAnswer(
      id,
      (c) => decoder.write(c),
      () => decoder.end(),
    );
  }

  /**
   * Any GET whose successful answer is plain text, handed to `onText` piece by piece as it arrives (the state API's
   * log file: logFollow.ts). No size cap, since nothing is held; `deadlineMs` bounds the whole answer.
   */
  async streamText(
    path: string,
    onText: (text: string) => void,
    deadlineMs = LOG_DEADLINE_MS,
  ): Promise<{ status: number; ok: boolean; text: string }> {
    const decoder = new TextDecoder('utf-8');
    const r = await this.request('GET', path, undefined, undefined, deadlineMs, Infinity, (c) => {
      const t = decoder.decode(c, { stream: true });
      if (t) onText(t);
    });
    if (r.ok) {
      const t = decoder.decode();
      if (t) onText(t);
    }
    return r;
  }

  /** Ray's job logs answer fed to `sink` as it arrives, then `end` (logTail.ts's readers); their errors made RemoteErrors. */
  private async readLogAnswer<T>(id: string, sink: (chunk: Buffer) => void, end: () => T): Promise<T> {
    const what = `GET /api/jobs/${id}/logs`;
    try {
      const r = await this.request(
        'GET',
        `/api/jobs/${encodeURIComponent(id)}/logs`,
        undefined,
        undefined,
        LOG_DEADLINE_MS,
        Infinity,
        sink,
      );
      if (!r.ok) throw new RemoteError(`${what} on ${this.where()} answered ${r.status}: ${lastLine(r.text)}`);
      return end();
    } catch (e) {
      if (!(e instanceof LogAnswerError)) throw e;
      if (e.kind === 'no-logs') throw new RemoteError(`reading the log of job ${id} on ${this.where()}: ${e.message}`);
      throw new RemoteError(`${what} on ${this.where()} ${e.message}: is this address a Ray dashboard?`);
    }
  }

  /** The deadline and size cap a whole-log read uses (logFollow reads the state API's log file with them). */
  get logLimits(): { deadlineMs: number; maxBytes: number } {
    return { deadlineMs: LOG_DEADLINE_MS, maxBytes: this.limits.maxLogBytes };
  }
}

function isObject(v: unknown): v is Record<string, any> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function lastLine(text: string): string {
  const lines = text
    .trim()
    .split('\n')
    .filter((l) => l.trim());
  return (lines[lines.length - 1] ?? '').slice(0, 300);
}
