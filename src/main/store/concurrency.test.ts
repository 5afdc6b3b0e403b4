/**
 * Two processes with the same data directory open (the app and a CLI `train` or `runs --tag`): every catalog
 * and record update of both must survive. Each process (concurrentWriter.ts) creates its own runs and, at the
 * same time as the other, adds tags to, raises and acknowledges alerts on one shared run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunRecord } from '../../shared/api';
import { RunStore } from './runStore';
import { bundleTestProcess } from '../testing/testProcess';

const ITERATIONS = 20;
let work: string;
let writer: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'arl-conc-'));
  writer = await bundleTestProcess(new URL('../testing/concurrentWriter.ts', import.meta.url), join(work, 'concurrentWriter.mjs'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

interface Child {
  ready: Promise<void>;
  done: Promise<void>;
  go(): void;
}

function startWriter(dataDir: string, who: string, shared: string): Child {
  const child = spawn(process.execPath, [writer, dataDir, who, String(ITERATIONS), shared], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += String(d)));
  const ready = new Promise<void>((resolve) => {
    child.stdout.on('data', (d) => {
      out += String(d);
      if (out.includes('ready')) resolve();
    });
  });
  const done = new Promise<void>((resolve, reject) => {
    child.on('exit', (code, signal) => {
      if (code === 0 && out.includes('done')) resolve();
      else reject(new Error(`writer ${who} exited with ${signal ?? code}: ${err}`));
    });
  });
  return { ready, done, go: () => child.stdin.end('go\n') };
}

describe('two processes sharing a data directory', () => {
  it('keep every create, tag, alert and acknowledgement of both (no lost update)', async () => {
    const dataDir = join(work, 'data');
    const setup = await RunStore.open(dataDir);
    const shared = (
      await setup.createRun({
        id: 'shared',
        preset: 'conc',
        env: 'sokoban',
        seed: 0,
        totalSteps: 10,
        config: {},
        appVersion: 'test',
        appCommit: 'test',
      })
    ).id;
    await setup.close();

    const children = [startWriter(dataDir, 'a', shared), startWriter(dataDir, 'b', shared)];
    await Promise.all(children.map((c) => c.ready));
    for (const c of children) c.go();
    await Promise.all(children.map((c) => c.done));

    const expected = ['a', 'b'].flatMap((who) => Array.from({ length: ITERATIONS }, (_, k) => `${who}-${k}`));
    // The catalog file as the two processes left it (before any reopening reconciles it with the run folders).
    const catalog = JSON.parse(await readFile(join(dataDir, 'runs.json'), 'utf8')) as { runs: Record<string, RunRecord> };
    expect(Object.keys(catalog.runs).sort()).toEqual([shared, ...expected].sort());
    const sharedDisk = JSON.parse(await readFile(join(dataDir, 'runs', shared, 'run.json'), 'utf8')) as RunRecord;
    for (const rec of [catalog.runs[shared], sharedDisk]) {
      expect([...rec.tags].sort()).toEqual([...expected].sort());
      expect(rec.alerts.map((a) => a.id).sort()).toEqual([...expected].sort());
      expect(rec.alerts.filter((a) => !a.acknowledged).map((a) => a.id)).toEqual([]);
      expect(rec.alertCount).toBe(expected.length);
    }
    for (const who of ['a', 'b']) {
      for (let k = 0; k < ITERATIONS - 1; k++) {
        expect(catalog.runs[`${who}-${k}`].name).toBe(`renamed ${who}-${k}`);
        expect(catalog.runs[`${who}-${k}`].status).toBe('completed');
      }
    }
    // No lock file or temp file left behind.
    expect((await readdir(dataDir)).sort()).toEqual(['runs', 'runs.json']);
    const store = await RunStore.open(dataDir);
    expect(store.warnings).toEqual([]);
    expect((await store.listRuns()).length).toBe(expected.length + 1);
    await store.close();
  }, 120_000);
});
