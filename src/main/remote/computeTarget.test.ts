/**
 * Which target a stored run goes back to after a restart (targetOfRun), without Ray: the tags a Ray run records,
 * and which token re-attaching sends. The endpoint below is a plain HTTP server that only records the
 * Authorization header of the lab's first request (GET /api/version) — it is not Ray and stands in for no Ray
 * behaviour; the re-attach itself runs on a real Ray head in ray.test.ts.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import resume from '../cli/commands/resume';
import { RunStore } from '../store/runStore';
import { resolveTarget, targetOfRun } from './computeTarget';
import { RemoteTargets } from './targets';
import { standInServer } from '../testing/standInServer';

let dataDir: string;
const seen: Array<string | null> = [];

const dashboard = standInServer((req, res) => {
  seen.push(req.headers.authorization ?? null);
  // Token auth as Ray answers it: 401 without a token.
  if (!req.headers.authorization) res.writeHead(401).end('token required');
  else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ray_version: 'recorder' }));
});

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'arl-target-'));
});

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

async function addRemote(name: string, token: string): Promise<void> {
  const f = join(dataDir, `${name}.tok`);
  await writeFile(f, `${token}\n`);
  await new RemoteTargets(dataDir).add(name, dashboard.base, f);
}

describe('a Ray run records its target and goes back to it', () => {
  it('--on URL records the URL; --on NAME records the name and the URL; neither holds the token', async () => {
    await addRemote('lab-head', 's3cret-token');
    expect((await resolveTarget(dataDir, `${dashboard.base}/`)).tags).toEqual([`ray-url:${dashboard.base}`]);
    const named = await resolveTarget(dataDir, 'lab-head');
    expect(named.tags).toEqual(['ray:lab-head', `ray-url:${dashboard.base}`]);
    expect(named.tags.join(' ')).not.toContain('s3cret');
    expect((await resolveTarget(dataDir, undefined)).tags).toEqual([]);
    await new RemoteTargets(dataDir).remove('lab-head');
  });

  it('a run with no Ray tag is this machine; a URL-only run goes back to its URL, with no token when none is stored', async () => {
    expect((await targetOfRun(dataDir, ['arena', 'mine'])).kind).toBe('local');
    const t = await targetOfRun(dataDir, ['on:ray', `ray-url:${dashboard.base}`]);
    expect(t.kind).toBe('ray');
    expect(t.url).toBe(dashboard.base);
    seen.length = 0;
    // The cluster asks for a token and none was given: the message says how to give one.
    await expect(t.preflight()).rejects.toThrow(/asks for a token.*--token-file/);
    expect(seen).toEqual([null]);
  });

  it('a URL-only run takes the token of a remote added later with that address', async () => {
    await addRemote('added-later', 'tok-for-url');
    const t = await targetOfRun(dataDir, ['on:ray', `ray-url:${dashboard.base}`]);
    expect(t.label).toBe(`ray:added-later (${dashboard.base})`);
    seen.length = 0;
    await t.preflight();
    expect(seen).toEqual(['Bearer tok-for-url']);
    await new RemoteTargets(dataDir).remove('added-later');
  });

  it('a named run uses its remote; if the name is gone it falls back to the recorded URL; an old run with only the name says the name is unknown', async () => {
    await addRemote('head', 'tok-head');
    seen.length = 0;
    await (await targetOfRun(dataDir, ['ray:head', `ray-url:${dashboard.base}`])).preflight();
    expect(seen).toEqual(['Bearer tok-head']);
    await new RemoteTargets(dataDir).remove('head');
    const fallback = await targetOfRun(dataDir, ['ray:head', `ray-url:${dashboard.base}`]);
    expect(fallback.url).toBe(dashboard.base);
    expect(fallback.label).toBe(`ray:${dashboard.base}`);
    await expect(targetOfRun(dataDir, ['ray:head'])).rejects.toThrow(/no remote named "head"/);
  });
});

describe('arlarena resume on a run started --on URL', () => {
  it('a cluster that asks for a token gets a message saying how to give one, and the store is left closed', async () => {
    const store = await RunStore.open(dataDir);
    const run = await store.createRun({
      preset: 'grpo',
      env: 'sokoban',
      seed: 1,
      totalSteps: 4,
      config: {},
      tags: ['on:ray', `ray-url:${dashboard.base}`],
      status: 'stopped',
    });
    await store.close();
    const sink = new Writable({ write: (_c, _e, cb) => cb() });
    const ctx = { dataDir, stdout: sink, stderr: sink, isTTY: false };
    await expect(resume.run([run.id], ctx)).rejects.toThrow(
      new RegExp(
        `asks for a token.*${run.id} was started with --on ${dashboard.base}: add that address as a remote.*remote add NAME ${dashboard.base} --token-file FILE`,
      ),
    );
    // Closed again: the store opens (and closes) without waiting on a lock.
    await (await RunStore.open(dataDir)).close();
  });
});
