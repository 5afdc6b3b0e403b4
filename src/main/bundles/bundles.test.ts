import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { unzipSync, zipSync, strToU8 } from 'fflate';
import { RunStore } from '../store/runStore';
import { writeSyntheticRun } from '../store/synthetic';
import { detectAlerts } from '../../core/stability/detector';
import { syntheticStream } from '../../core/stability/synthetic';
import { exportRun } from './exportBundle';
import { importBundle, verifyBundle } from './importBundle';
import { compareStreams, reproduceBundle } from './reproduce';
import { sha256Hex } from './manifest';
import { resolveConfig } from '../../core/config/index';
import { syntheticRerun } from '../testing/jobs/index';
import type { TrainingJob } from '../sessions/job';

let a: string;
let b: string;
let opened: RunStore[] = [];
beforeEach(async () => {
  a = await mkdtemp(join(tmpdir(), 'arl-bun-a-'));
  b = await mkdtemp(join(tmpdir(), 'arl-bun-b-'));
});
afterEach(async () => {
  // Close the stores: an open metrics/trajectories stream left to the GC is a Node deprecation (DEP0137).
  for (const s of opened) await s.close();
  opened = [];
  await rm(a, { recursive: true, force: true });
  await rm(b, { recursive: true, force: true });
});

async function openStore(dir: string): Promise<RunStore> {
  const s = await RunStore.open(dir);
  opened.push(s);
  return s;
}

async function sampleRun(store: RunStore) {
  const run = await writeSyntheticRun(store, { steps: 80, seed: 5, shape: 'cispo_collapse', collapseAt: 50, nanAt: 70 });
  // A real resolved engine config must survive export/import exactly (scrubbing must not touch it).
  await store.updateRun(run.id, {
    config: structuredClone(resolveConfig('sampo', 'sokoban').config) as unknown as Record<string, unknown>,
  });
  await store.upsertAlerts(run.id, detectAlerts(run.id, await store.readMetrics(run.id)));
  await store.appendTrajectories(run.id, [
    { step: 80, split: 'val', env: 'sokoban', taskId: '1000000001', uid: 'u', trajUid: 't', won: true, episodeReturn: 9.5, turns: [] },
  ]);
  await store.saveCheckpoint(run.id, { step: 80, files: { 'policy.bin': new Uint8Array([1, 2, 3, 4]) }, meta: { step: 80 } });
  return (await store.getRun(run.id))!;
}

function rezip(bundle: Uint8Array, edit: (e: Record<string, Uint8Array>) => void): Uint8Array {
  const e = unzipSync(bundle);
  edit(e);
  return zipSync(e);
}

describe('bundles', () => {
  it('round trip preserves every metric, the config, alerts, trajectories and the checkpoint', async () => {
    const sa = await openStore(a);
    const run = await sampleRun(sa);
    const ex = await exportRun(sa, run.id);
    expect(ex.checkpointStep).toBe(80);
    const bytes = new Uint8Array(await readFile(ex.path));
    expect(sha256Hex(bytes)).toBe(ex.sha256);
    const sb = await openStore(b);
    const im = await importBundle(sb, bytes);
    expect(im.runId).toBe(run.id);
    const got = (await sb.getRun(im.runId))!;
    expect(got.config).toEqual(run.config);
    expect(got.seed).toBe(run.seed);
    expect(got.alerts.length).toBeGreaterThan(0);
    expect(got.alerts).toEqual(run.alerts);
    expect(got.tags).toContain('imported');
    const ma = await sa.readMetrics(run.id);
    const mb = await sb.readMetrics(im.runId);
    expect(mb).toEqual(ma);
    expect(mb[69].values['actor/grad_norm']).toBeNaN();
    expect(mb[69].values['actor/pg_loss']).toBe(Infinity);
    expect((await sb.trajectories(im.runId)).trajectories[0].taskId).toBe('1000000001');
    expect([...(await sb.loadLatestCheckpoint(im.runId))!.files['policy.bin']]).toEqual([1, 2, 3, 4]);
    // Importing again gets a fresh id rather than overwriting.
    const again = await importBundle(sb, bytes);
    expect(again.runId).not.toBe(run.id);
    const names = Object.keys(unzipSync(bytes)).sort();
    expect(names).toEqual(
      expect.arrayContaining([
        'manifest.json',
        'run.json',
        'config.json',
        'environment.json',
        'package-lock.json',
        'metrics.jsonl',
        'trajectories.jsonl',
        'alerts.json',
        'checkpoint/step-00000080/policy.bin',
        'checkpoint/step-00000080/meta.json',
      ]),
    );
    const env = JSON.parse(new TextDecoder().decode(unzipSync(bytes)['environment.json']));
    expect(env.taskSeeds.master).toBe(5);
    expect(env.versions.node).toBe(process.versions.node);
  });

  it('contains no secrets, environment variables or home paths', async () => {
    const sa = await openStore(a);
    const home = homedir();
    process.env.ARLARENA_TEST_SECRET = 'env-secret-value-123';
    const run = await sa.createRun({
      preset: 'p',
      env: 'sokoban',
      seed: 1,
      totalSteps: 1,
      config: {
        cacheDir: `${home}/.cache/arl`,
        other: '/home/alice/x',
        remote: { apiToken: 'sk-live-abcdef', password: 'hunter2', client_secret: 'cs-999' },
        rollout: { maxResponseTokens: 32 },
        tokenizer: 'words',
      },
    });
    await sa.updateRun(run.id, { status: 'failed', error: `Error at ${home}/work/x.ts:1 and C:\\Users\\bob\\x` });
    const ex = await exportRun(sa, run.id);
    const files = unzipSync(new Uint8Array(await readFile(ex.path)));
    const text = Object.values(files)
      .map((f) => new TextDecoder().decode(f))
      .join('\n');
    for (const bad of [
      home,
      '/home/alice',
      'C:\\\\Users\\\\bob',
      'sk-live-abcdef',
      'hunter2',
      'cs-999',
      'env-secret-value-123',
      'ARLARENA_TEST_SECRET',
    ])
      expect(text.includes(bad), bad).toBe(false);
    expect(text).toContain('~/.cache/arl');
    // Ordinary config fields whose names merely contain "token" survive (the bundle must rerun).
    const cfg = JSON.parse(new TextDecoder().decode(files['config.json'])).config;
    expect(cfg.rollout.maxResponseTokens).toBe(32);
    expect(cfg.tokenizer).toBe('words');
    delete process.env.ARLARENA_TEST_SECRET;
  });

  it('refuses each kind of damaged bundle, and nothing is half-imported', async () => {
    const sa = await openStore(a);
    const run = await sampleRun(sa);
    const good = new Uint8Array(await readFile((await exportRun(sa, run.id)).path));
    const sb = await openStore(b);
    const enc = (o: unknown) => strToU8(JSON.stringify(o));
    const manifestOf = (e: Record<string, Uint8Array>) => JSON.parse(new TextDecoder().decode(e['manifest.json']));
    const cases: Array<[string, Uint8Array, RegExp]> = [
      [
        'bad hash',
        rezip(good, (e) => {
          const m = e['metrics.jsonl'];
          m[10] = m[10] === 0x31 ? 0x32 : 0x31;
        }),
        /metrics\.jsonl.*does not match its SHA-256/,
      ],
      ['truncated', good.subarray(0, Math.floor(good.length * 0.7)), /not a readable bundle \(truncated or not a zip\)/],
      [
        'wrong schema version',
        rezip(good, (e) => {
          const m = manifestOf(e);
          m.schemaVersion = 99;
          e['manifest.json'] = enc(m);
        }),
        /schema version 99 is not supported: this app reads version 1/,
      ],
      [
        'missing file',
        rezip(good, (e) => {
          delete e['alerts.json'];
        }),
        /"alerts\.json" listed in the manifest is missing/,
      ],
      [
        'extra file',
        rezip(good, (e) => {
          e['notes.txt'] = strToU8('hi');
        }),
        /"notes\.txt" is in the bundle but not in its manifest/,
      ],
      [
        'path traversal',
        rezip(good, (e) => {
          e['../evil.sh'] = strToU8('rm -rf');
        }),
        /unsafe entry "\.\.\/evil\.sh"/,
      ],
      [
        'absolute path',
        rezip(good, (e) => {
          e['/etc/x'] = strToU8('x');
        }),
        /unsafe entry "\/etc\/x"/,
      ],
      [
        'traversal listed in manifest',
        rezip(good, (e) => {
          const m = manifestOf(e);
          m.files['checkpoint/../../x'] = { sha256: '0'.repeat(64), bytes: 1 };
          e['manifest.json'] = enc(m);
        }),
        /unsafe path "checkpoint\/\.\.\/\.\.\/x"/,
      ],
      [
        'size mismatch',
        rezip(good, (e) => {
          e['metrics.jsonl'] = e['metrics.jsonl'].subarray(0, 100);
        }),
        /metrics\.jsonl" is 100 bytes, the manifest says/,
      ],
      [
        'no manifest',
        rezip(good, (e) => {
          delete e['manifest.json'];
        }),
        /no manifest\.json/,
      ],
      ['not a zip', strToU8('hello world, definitely not a zip file'), /not a readable bundle/],
    ];
    for (const [name, bytes, msg] of cases) {
      await expect(importBundle(sb, bytes), name).rejects.toThrow(msg);
    }
    expect(await sb.listRuns()).toEqual([]);
    expect((await readdir(join(b, 'runs'))).filter((n) => n.startsWith('.'))).toEqual([]);
    expect(() => verifyBundle(good)).not.toThrow();
  });

  it('reproduce reruns the bundle: the deterministic test job is bit-identical', async () => {
    const sa = await openStore(a);
    const run = await sa.createRun({
      preset: 'test',
      env: 'sokoban',
      seed: 9,
      totalSteps: 30,
      config: { steps: 30, shape: 'cispo_collapse' },
      status: 'running',
    });
    await sa.appendMetrics(run.id, syntheticStream({ steps: 30, seed: 9, shape: 'cispo_collapse' }));
    await sa.updateRun(run.id, {
      status: 'completed',
      backend: { training: 'synthetic', rollout: 'synthetic', detail: '', available: [] },
    });
    const ex = await exportRun(sa, run.id);
    const sb = await openStore(b);
    const res = await reproduceBundle(sb, ex.path, { job: syntheticRerun });
    expect(res.error).toBeNull();
    expect(res.verdict).toBe('bit-identical');
    expect(res.stepsCompared).toBe(30);
    expect(res.backendMatches).toBe(true);
    const part = await reproduceBundle(sb, ex.path, { job: syntheticRerun, steps: 10 });
    expect(part.verdict).toBe('bit-identical');
    expect(part.stepsCompared).toBe(10);
  });

  it('a rerun whose job fails after reading a Hugging Face folder still records the model it reported', async () => {
    const sa = await openStore(a);
    const run = await sa.createRun({ preset: 'test', env: 'sokoban', seed: 9, totalSteps: 3, config: { steps: 3 }, status: 'running' });
    await sa.appendMetrics(run.id, syntheticStream({ steps: 3, seed: 9 }));
    await sa.updateRun(run.id, { status: 'completed' });
    const ex = await exportRun(sa, run.id);
    const model = {
      path: '/models/tiny',
      architecture: 'Qwen3ForCausalLM',
      config: { max_position_embeddings: 512 },
      weights: { 'model.safetensors': 'c'.repeat(64) },
      tokenizer: { 'tokenizer.json': 'd'.repeat(64) },
      params: 10,
      trainableParams: 10,
      lora: null,
    };
    const failing: TrainingJob = {
      async run(_input, _hooks, _resume, report) {
        report?.model(model);
        throw new Error('the export failed');
      },
    };
    const sb = await openStore(b);
    const res = await reproduceBundle(sb, ex.path, { job: { ...syntheticRerun, job: failing } });
    expect(res.error).toBe('the export failed');
    expect((await sb.getRun(res.rerunId))!).toMatchObject({ status: 'failed', model });
  });

  it('compareStreams: small noise is within band, a different run diverges', () => {
    const o = syntheticStream({ steps: 100, seed: 1 });
    const noisy = o.map((r) => ({
      step: r.step,
      values: Object.fromEntries(Object.entries(r.values).map(([k, v]) => [k, Number.isFinite(v) ? v * 1.001 : v])),
    }));
    expect(compareStreams(o, noisy).verdict).toBe('within-band');
    expect(compareStreams(o, syntheticStream({ steps: 100, seed: 1, shape: 'cispo_collapse', collapseAt: 10 })).verdict).toBe('diverged');
    expect(compareStreams(o, o).verdict).toBe('bit-identical');
  });
});
