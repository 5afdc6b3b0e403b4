/**
 * Test kit for the lab's tests on a real Ray head (remote/ray, rayFaults, rayComputeRecord.integration): one head for
 * the test file (tests/support/ray.ts's startRayHead: token auth, 127.0.0.1, its own ports and temp dir) and a data
 * dir in which `arlarena remote add` made it the remote "head" with its token file, as a user adds one; a Jobs API
 * client for it; a wait that says so when the head died; and the pids of a run's processes on the node, read from
 * /proc.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import remote from '../cli/commands/remote';
import { RayClient } from '../remote/rayClient';
import { startRayHead, type RayHead } from '../../../tests/support/ray';
import { testCliContext } from './testContext';

export interface RayHeadForFile {
  readonly head: RayHead;
  /** The data dir the file's runs go to; the head is its remote "head". */
  readonly dataDir: string;
  /** The Jobs API of the head, with its token. */
  readonly client: RayClient;
}

/**
 * Starts the head and makes the data dir before the file's tests, stops the head (by its pid) and removes the dir
 * after them. Call at the top level; read the fields in hooks and tests. The remote is added as a user adds it:
 * `arlarena remote add head URL --token-file FILE`, whose failure fails the file with what it printed.
 */
export function rayHeadForFile(dataDirPrefix: string): RayHeadForFile {
  let head: RayHead | undefined;
  let dataDir = '';
  let client: RayClient | undefined;
  beforeAll(async () => {
    head = await startRayHead();
    dataDir = await mkdtemp(join(tmpdir(), dataDirPrefix));
    client = new RayClient({ name: null, url: head.url, token: head.token });
    const add = testCliContext(dataDir);
    const code = await remote.run(['add', 'head', head.url, '--token-file', head.tokenFile], add.ctx);
    if (code !== 0) throw new Error(`remote add head ${head.url} exited ${code}: ${add.err()}`);
  }, 120_000);
  afterAll(async () => {
    await head?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);
  return {
    get head() {
      if (!head) throw new Error('the Ray head is not started yet (read it in a hook or a test)');
      return head;
    },
    get dataDir() {
      return dataDir;
    },
    get client() {
      if (!client) throw new Error('the Ray head is not started yet (read it in a hook or a test)');
      return client;
    },
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Waits for a real condition (never a fixed sleep standing in for one), every 100 ms; the error says what did not
 * happen, or that the head died meanwhile, with the end of its log.
 */
export async function waitOnHead(head: RayHead, what: string, cond: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const t0 = Date.now();
  while (!(await cond())) {
    if (head.status().exited) throw new Error(`the Ray head died while waiting for ${what}: ${head.status().log.slice(-1500)}`);
    if (Date.now() - t0 > timeoutMs) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** The pids of processes whose command line has the argument `argv` and whose environment has `env` (NAME=value). */
export function pidsWith(argv: string, env: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (!readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').includes(argv)) continue;
      if (readFileSync(`/proc/${d}/environ`, 'utf8').split('\0').includes(env)) out.push(Number(d));
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}
