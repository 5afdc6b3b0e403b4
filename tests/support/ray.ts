/**
 * A real Ray head for the tests: `ray start --head --block` from the peer venv (.peers-venv, ray[default] pinned in
 * tests/peers/requirements.txt), on 127.0.0.1 with token auth on (RAY_AUTH_MODE=token, the token given in
 * RAY_AUTH_TOKEN as Ray's token-auth guide describes, Ray ≥ 2.52), every port picked free and its own short temp
 * dir, so two heads (two test files, another developer's) never meet. `--block` keeps the starting process in the
 * foreground as the owner of the head's processes: stopping it by its pid (SIGTERM) takes the whole head down
 * without `ray stop`, which would stop every Ray on the machine.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { peerPython } from './peers';

export interface RayHead {
  /** The dashboard (Jobs REST API) address, http://127.0.0.1:<port>. */
  readonly url: string;
  readonly token: string;
  /** A file holding the token (mode 0600), as `remote add --token-file` takes it. */
  readonly tokenFile: string;
  readonly pid: number;
  /** Milliseconds from spawn to the dashboard answering /api/version with the token. */
  readonly startMs: number;
  /** What `ray start` printed so far, and whether it has exited (a head that died mid-test says so). */
  status(): { exited: boolean; log: string };
  stop(): Promise<void>;
}

/** A TCP port nothing listens on right now (bound to 0, then released). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** Resident set of a process tree (the head's children included), in MB, from /proc. */
export async function treeRssMb(rootPid: number): Promise<number> {
  const { readdirSync, readFileSync } = await import('node:fs');
  const parent = new Map<number, number>();
  const rss = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const st = readFileSync(`/proc/${d}/stat`, 'utf8');
      const fields = st.slice(st.lastIndexOf(')') + 2).split(' ');
      parent.set(Number(d), Number(fields[1]));
      rss.set(Number(d), (Number(fields[21]) * 4096) / 1e6);
    } catch {
      // the process ended while we looked
    }
  }
  const inTree = (p: number): boolean => {
    for (let q = p, i = 0; q > 1 && i < 64; q = parent.get(q) ?? 0, i++) if (q === rootPid) return true;
    return false;
  };
  let total = 0;
  for (const [p, r] of rss) if (inTree(p)) total += r;
  return total;
}

export async function startRayHead(opts: { numCpus?: number; timeoutMs?: number } = {}): Promise<RayHead> {
  const rayBin = join(dirname(peerPython()), 'ray');
  // Ray's unix socket paths must stay under ~107 characters: a short temp dir.
  const tmp = mkdtempSync('/tmp/rayt-');
  const token = randomBytes(32).toString('hex');
  const tokenFile = join(tmp, 'token');
  writeFileSync(tokenFile, token);
  chmodSync(tokenFile, 0o600);
  const ports: Record<string, number> = {};
  // Each port free and distinct: a port released by freePort() can be handed out again by the next call, and Ray
  // refuses to start when two of its components share one (seen in CI: object_manager = metrics_export).
  const taken = new Set<number>();
  for (const k of [
    'port',
    'dashboard-port',
    'node-manager-port',
    'object-manager-port',
    'dashboard-agent-listen-port',
    'dashboard-agent-grpc-port',
    'metrics-export-port',
    'runtime-env-agent-port',
    'ray-client-server-port',
  ]) {
    let p = await freePort();
    while (taken.has(p)) p = await freePort();
    taken.add(p);
    ports[k] = p;
  }
  // Worker ports below the kernel's ephemeral range (32768+), where the free ports above were picked.
  const minWorker = 11000 + (process.pid % 200) * 100;
  const args = [
    'start',
    '--head',
    '--block',
    '--node-ip-address',
    '127.0.0.1',
    '--dashboard-host',
    '127.0.0.1',
    '--include-dashboard',
    'true',
    '--num-cpus',
    String(opts.numCpus ?? 2),
    '--num-gpus',
    '0',
    '--temp-dir',
    tmp,
    '--disable-usage-stats',
    '--min-worker-port',
    String(minWorker),
    '--max-worker-port',
    String(minWorker + 99),
    ...Object.entries(ports).flatMap(([k, v]) => [`--${k}`, String(v)]),
  ];
  const t0 = Date.now();
  const child: ChildProcess = spawn(rayBin, args, {
    env: { ...process.env, RAY_AUTH_MODE: 'token', RAY_AUTH_TOKEN: token, RAY_USAGE_STATS_ENABLED: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: false,
  });
  let log = '';
  child.stdout?.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (log += d.toString()));
  let exited = false;
  child.on('exit', () => (exited = true));
  const url = `http://127.0.0.1:${ports['dashboard-port']}`;
  const stop = async (): Promise<void> => {
    if (!exited) {
      const gone = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await gone;
      clearTimeout(t);
    }
    // Ray's last processes may still be closing files in the session folder as the head exits (ENOTEMPTY): retry.
    rmSync(tmp, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  };
  const deadline = t0 + (opts.timeoutMs ?? 90_000);
  for (;;) {
    if (exited) {
      rmSync(tmp, { recursive: true, force: true });
      throw new Error(`ray start --head exited before its dashboard answered:\n${log.slice(-2000)}`);
    }
    try {
      const r = await fetch(`${url}/api/version`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(2000) });
      // The Jobs API needs the job agent too: /api/jobs/ answers once the head can take a submission.
      if (r.ok) {
        const j = await fetch(`${url}/api/jobs/`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(2000) });
        if (j.ok) break;
      }
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the Ray head's dashboard did not answer within ${opts.timeoutMs ?? 90_000} ms:\n${log.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  return { url, token, tokenFile, pid: child.pid!, startMs: Date.now() - t0, status: () => ({ exited, log }), stop };
}
