/**
 * The bundle mutation suite: one good bundle, then every kind of damage and forgery the fault
 * campaign tried — bit flips, truncation, extra and duplicate entries, traversal paths, zip bombs, forged
 * manifests (re-hashed, so only deeper checks can catch them) — each refused with its own message, and nothing
 * written to the store. A bomb refused before inflating (memory bounded), checkpoint files that carry their own
 * SHA-256, and an imported or reproduced config validated like a new run's (a reproduction runs the live detector)
 * have their own cases.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { strToU8, unzipSync, zipSync } from 'fflate';
import { RunStore } from '../store/runStore';
import { bundleTestProcess } from '../testing/testProcess';
import { detectAlerts } from '../../core/stability/detector';
import { resolveConfig } from '../../core/config/index';
import { syntheticStream } from '../../core/stability/synthetic';
import { exportRun } from './exportBundle';
import { importBundle } from './importBundle';
import { BundleError, sha256Hex } from './manifest';
import { reproduceBundle } from './reproduce';
import { craftZip, zeroBomb } from '../testing/testZip';
import { syntheticRerun } from '../testing/jobs/index';

const dec = new TextDecoder();
type Entries = Record<string, Uint8Array>;

let work: string;
let good: Uint8Array;
let target: RunStore;
const refusals: Record<string, number> = {};

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'arl-mut-'));
  const src = await RunStore.open(join(work, 'src'));
  const run = await src.createRun({
    preset: 'sampo',
    env: 'sokoban',
    seed: 5,
    totalSteps: 40,
    config: structuredClone(resolveConfig('sampo', 'sokoban').config) as unknown as Record<string, unknown>,
    status: 'running',
  });
  await src.appendMetrics(run.id, syntheticStream({ steps: 40, seed: 5, shape: 'cispo_collapse', collapseAt: 25 }));
  await src.upsertAlerts(run.id, detectAlerts(run.id, await src.readMetrics(run.id)));
  await src.appendTrajectories(run.id, [
    { step: 40, split: 'val', env: 'sokoban', taskId: '1000000001', uid: 'u', trajUid: 't', won: true, episodeReturn: 9.5, turns: [] },
  ]);
  await src.saveCheckpoint(run.id, {
    step: 40,
    files: { 'policy.bin': new Uint8Array(2048).map((_, i) => (i * 7) % 251), 'state.json': strToU8('{"step":40}') },
    meta: { step: 40 },
  });
  await src.updateRun(run.id, { status: 'completed' });
  good = new Uint8Array(await readFile((await exportRun(src, run.id)).path));
  await src.close();
  target = await RunStore.open(join(work, 'dst'));
});
afterAll(async () => {
  await target.close();
  await rm(work, { recursive: true, force: true });
});

const entries = (b: Uint8Array): Entries => unzipSync(b);
const zip = (e: Entries): Uint8Array => zipSync(e);
/** Re-hash every file into the manifest: what a forger does so the manifest check alone passes. */
function rehash(e: Entries): Entries {
  const m = JSON.parse(dec.decode(e['manifest.json']));
  m.files = Object.fromEntries(
    Object.entries(e)
      .filter(([p]) => p !== 'manifest.json')
      .map(([p, d]) => [p, { sha256: sha256Hex(d), bytes: d.length }]),
  );
  return { ...e, 'manifest.json': strToU8(JSON.stringify(m)) };
}
function editJson(e: Entries, path: string, edit: (o: any) => void): void {
  const o = JSON.parse(dec.decode(e[path]));
  edit(o);
  e[path] = strToU8(JSON.stringify(o));
}
const forgeConfig = (edit: (c: any) => void) => {
  const e = entries(good);
  editJson(e, 'config.json', (o) => edit(o.config));
  editJson(e, 'run.json', (o) => edit(o.config));
  return zip(rehash(e));
};
const ckPath = (e: Entries, file: string) => Object.keys(e).find((p) => p.startsWith('checkpoint/') && p.endsWith(`/${file}`))!;

async function expectRefused(group: string, name: string, bytes: Uint8Array, msg: RegExp): Promise<void> {
  const e = await importBundle(target, bytes).then(
    () => null,
    (x: unknown) => x,
  );
  expect(e, `${group}: ${name} was imported`).toBeInstanceOf(BundleError);
  expect((e as Error).message, `${group}: ${name}`).toMatch(msg);
  refusals[group] = (refusals[group] ?? 0) + 1;
}

async function nothingWritten(): Promise<void> {
  expect(await target.listRuns()).toEqual([]);
  expect((await readdir(target.runsDir)).filter((n) => n.startsWith('.'))).toEqual([]);
}

describe('bundle mutation suite', () => {
  it('the good bundle imports (and is removed again)', async () => {
    const r = await importBundle(target, good);
    expect((await target.readMetrics(r.runId)).length).toBe(40);
    await target.deleteRun(r.runId);
    await nothingWritten();
  });

  it('bit flips in any listed file are refused by its SHA-256', async () => {
    const e0 = entries(good);
    for (const p of Object.keys(e0).filter((x) => x !== 'manifest.json')) {
      for (const at of [0, 0.5, 0.999]) {
        const e = entries(good);
        const i = Math.min(e[p].length - 1, Math.floor(e[p].length * at));
        e[p][i] ^= 0x10;
        await expectRefused(
          'bit flip',
          `${p}@${i}`,
          zip(e),
          new RegExp(`"${p.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}" does not match its SHA-256`),
        );
      }
    }
    await nothingWritten();
  });

  it('raw bit flips anywhere in the zip are refused, or only touched bytes no reader uses', async () => {
    let harmless = 0;
    for (let k = 0; k < 32; k++) {
      const b = new Uint8Array(good);
      const i = Math.floor(((k + 0.5) / 32) * b.length);
      b[i] ^= 0x04;
      const r = await importBundle(target, b).then(
        (x) => x,
        (x: unknown) => x,
      );
      if (r instanceof BundleError) {
        refusals['raw bit flip'] = (refusals['raw bit flip'] ?? 0) + 1;
        continue;
      }
      // Accepted: the flip hit a header field nothing reads (a timestamp, a CRC fflate does not check) — the
      // imported content must then be exactly the original's.
      expect(r, `flip at ${i}`).not.toBeInstanceOf(Error);
      const id = (r as { runId: string }).runId;
      expect((await target.readMetrics(id)).length).toBe(40);
      await target.deleteRun(id);
      harmless++;
    }
    expect(refusals['raw bit flip']).toBeGreaterThan(harmless);
    await nothingWritten();
  });

  it('truncation, extra, duplicate and traversal entries, a bad manifest', async () => {
    for (const f of [0.1, 0.5, 0.9, 0.99])
      await expectRefused(
        'truncated',
        String(f),
        good.subarray(0, Math.floor(good.length * f)),
        /not a readable bundle \(truncated or not a zip\)/,
      );
    await expectRefused('truncated', 'last byte', good.subarray(0, good.length - 1), /not a readable bundle/);
    await expectRefused(
      'extra entry',
      'notes.txt',
      zip({ ...entries(good), 'notes.txt': strToU8('hi') }),
      /"notes\.txt" is in the bundle but not in its manifest/,
    );
    const list = Object.entries(entries(good)).map(([name, data]) => ({ name, data }));
    await expectRefused(
      'duplicate entry',
      'metrics.jsonl twice',
      craftZip([...list, { name: 'metrics.jsonl', data: strToU8('{"step":1,"values":{}}\n') }]),
      /"metrics\.jsonl" appears 2 times/,
    );
    await expectRefused(
      'duplicate entry',
      'manifest twice',
      craftZip([{ name: 'manifest.json', data: strToU8('{}') }, ...list]),
      /"manifest\.json" appears 2 times/,
    );
    for (const bad of ['../evil.sh', '/etc/x', 'a\\..\\b', 'C:/x', 'checkpoint/../../x', 'a//b', './run.json']) {
      await expectRefused('traversal entry', bad, craftZip([...list, { name: bad, data: strToU8('x') }]), /unsafe entry/);
    }
    const m = entries(good);
    editJson(m, 'manifest.json', (o) => (o.files['checkpoint/../../x'] = { sha256: '0'.repeat(64), bytes: 1 }));
    await expectRefused('traversal entry', 'listed in manifest', zip(m), /unsafe path "checkpoint\/\.\.\/\.\.\/x"/);
    const fmt = entries(good);
    editJson(fmt, 'manifest.json', (o) => (o.format = 'other'));
    await expectRefused('bad manifest', 'format', zip(fmt), /format is "other", expected "arlarena-bundle"/);
    await expectRefused(
      'bad manifest',
      'not json',
      zip({ ...entries(good), 'manifest.json': strToU8('{"format":') }),
      /manifest\.json is not valid JSON/,
    );
    await nothingWritten();
  });

  it('zip bombs are refused before or while inflating, never after', async () => {
    const list = Object.entries(entries(good)).map(([name, data]) => ({ name, data }));
    // An unlisted 1 GiB entry of zeros (≈1 MB compressed): refused from the directory, nothing inflated.
    const bomb = craftZip([...list, { name: 'zeros.bin', deflated: zeroBomb(1024) }]);
    const t0 = Date.now();
    await expectRefused('zip bomb', 'unlisted 1 GiB', bomb, /"zeros\.bin" is in the bundle but not in its manifest/);
    expect(Date.now() - t0).toBeLessThan(5_000);
    // A listed entry whose headers claim the manifest's size but whose stream inflates to 64 MiB: stopped at the cap.
    const lying = list.map((x) => (x.name === 'metrics.jsonl' ? { name: x.name, deflated: zeroBomb(64), declaredSize: x.data.length } : x));
    await expectRefused(
      'zip bomb',
      'listed, lying size',
      craftZip(lying),
      /"metrics\.jsonl" inflates to more than the \d+ bytes its manifest lists/,
    );
    // A manifest that lists more than the cap in total: refused before inflating.
    const huge = entries(good);
    editJson(huge, 'manifest.json', (o) => (o.files['metrics.jsonl'].bytes = 2 ** 31));
    const hugeList = Object.entries(huge).map(([name, data]) =>
      name === 'metrics.jsonl' ? { name, deflated: zeroBomb(1), declaredSize: 2 ** 31 } : { name, data },
    );
    await expectRefused('zip bomb', 'over the total cap', craftZip(hugeList), /more than the \d+ MiB a bundle may hold/);
    await nothingWritten();
    // Memory: a fresh process refuses the 1 GiB bomb with well under 300 MB of RSS growth.
    const bombFile = join(work, 'bomb.zip');
    await writeFile(bombFile, bomb);
    const probe = await bundleTestProcess(new URL('./bombProbe.ts', import.meta.url), join(work, 'bombProbe.mjs'));
    const out = await new Promise<string>((resolve, reject) => {
      const c = spawn(process.execPath, [probe, bombFile], { stdio: ['ignore', 'pipe', 'inherit'] });
      let s = '';
      c.stdout.on('data', (d) => (s += String(d)));
      c.on('exit', (code) => (code === 0 ? resolve(s) : reject(new Error(`probe exited ${code}`))));
    });
    const r = JSON.parse(out) as { refused: string; rssGrowthMB: number };
    expect(r.refused).toMatch(/not in its manifest/);
    expect(r.rssGrowthMB).toBeLessThan(300);
    refusals['bomb RSS growth MB'] = Math.round(r.rssGrowthMB);
  }, 60_000);

  it('forged manifests (re-hashed) are refused by the checkpoint hashes and config validation', async () => {
    const flipped = entries(good);
    flipped[ckPath(flipped, 'policy.bin')][100] ^= 0x01;
    await expectRefused(
      'forged manifest',
      'policy.bin byte flipped',
      zip(rehash(flipped)),
      /checkpoint step-00000040: policy\.bin does not match the SHA-256 in its meta\.json/,
    );
    const stripped = entries(good);
    editJson(stripped, ckPath(stripped, 'meta.json'), (o) => delete o.sha256);
    await expectRefused(
      'forged manifest',
      'checkpoint hashes stripped',
      zip(rehash(stripped)),
      /checkpoint step-00000040: meta\.json lists no SHA-256 for policy\.bin/,
    );
    await expectRefused(
      'forged manifest',
      'lr 1e9',
      forgeConfig((c) => (c.optim.lr = 1e9)),
      /config is not a valid run config: optim\.lr = 1000000000 is out of range/,
    );
    await expectRefused(
      'forged manifest',
      'eps 1e-300',
      forgeConfig((c) => (c.optim.eps = 1e-300)),
      /optim\.eps = 1e-300.*float32/,
    );
    await expectRefused(
      'forged manifest',
      'constructor setting',
      forgeConfig((c) => (c.env.settings = JSON.parse('{"constructor": 1}'))),
      /env\.settings\.constructor.*every JavaScript object/,
    );
    await expectRefused(
      'forged manifest',
      'unknown field dropped',
      forgeConfig((c) => delete c.optim),
      /optim\.lr is missing/,
    );
    const run = entries(good);
    editJson(run, 'run.json', (o) => (o.status = 'exploded'));
    await expectRefused('forged manifest', 'bad run record', zip(rehash(run)), /run\.json is not a valid run record: status/);
    await nothingWritten();
  });

  it('reproduce validates the config before training and runs the live detector on the rerun', async () => {
    const forged = join(work, 'forged.zip');
    await writeFile(
      forged,
      forgeConfig((c) => (c.optim.lr = 1e9)),
    );
    await expect(reproduceBundle(target, forged, { steps: 2 })).rejects.toThrow(/optim\.lr = 1000000000 is out of range/);
    await nothingWritten();
    // A synthetic collapse rerun by the test job: the rerun stores the alerts the detector raised live.
    const src = await RunStore.open(join(work, 'syn'));
    const run = await src.createRun({
      preset: 'test',
      env: 'sokoban',
      seed: 9,
      totalSteps: 40,
      config: { steps: 40, shape: 'cispo_collapse' },
      status: 'running',
    });
    await src.appendMetrics(run.id, syntheticStream({ steps: 40, seed: 9, shape: 'cispo_collapse' }));
    await src.updateRun(run.id, { status: 'completed' });
    const ex = await exportRun(src, run.id);
    await src.close();
    const store = await RunStore.open(join(work, 'syn-b'));
    const res = await reproduceBundle(store, ex.path, { job: syntheticRerun });
    const rerun = (await store.getRun(res.rerunId))!;
    const offline = detectAlerts(rerun.id, await store.readMetrics(rerun.id));
    expect(offline.length).toBeGreaterThan(0);
    expect(rerun.alerts.length).toBe(offline.length);
    await store.close();
  }, 60_000);

  afterAll(() => {
    // The counts the README's reliability section quotes (printed once per run of this suite).
    console.log(`bundle mutation suite refusals: ${JSON.stringify(refusals)}`);
  });
});
