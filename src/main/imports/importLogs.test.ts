import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunStore } from '../store/runStore';
import { ImportError, importLogs } from './importLogs';
import { LineSplitter } from './files';
import { tinyRegistry } from '../testing/testRegistry';
import { SOURCE_DIR } from './runWriter';
import { exportRun } from '../bundles/exportBundle';
import { importBundle } from '../bundles/importBundle';
import { reproduceBundle } from '../bundles/reproduce';
import { unzipSync } from 'fflate';

let dir: string;
let store: RunStore;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-import-'));
  store = await RunStore.open(join(dir, 'data'));
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

async function write(name: string, text: string): Promise<string> {
  const p = join(dir, name);
  await writeFile(p, text);
  return p;
}

const registry = tinyRegistry();

describe('LineSplitter', () => {
  it('splits on \\n across chunk boundaries, strips \\r, keeps a last line without newline and multi-byte characters', () => {
    const lines: string[] = [];
    const sp = new LineSplitter((l) => lines.push(l));
    const bytes = new TextEncoder().encode('a\r\nbé\nc\r\n\nlast é');
    for (let i = 0; i < bytes.length; i += 3) sp.push(bytes.subarray(i, i + 3));
    sp.end();
    expect(lines).toEqual(['a', 'bé', 'c', '', 'last é']);
  });
});

describe('importLogs (the importer itself, with a tiny test format)', () => {
  it('stores one imported run: steps in order, catalog keys mapped, the source recorded, completed', async () => {
    const text = '#tiny\nstep:0 grad=1 loss=0.5\nstep:1 grad=2 loss=0.4\ngarbage here\nstep:2 grad=3 loss=0.3\n';
    const p = await write('run.log', text);
    const r = await importLogs(store, [p], { registry, name: 'mine', tags: ['ext'] });
    expect(r).toEqual({ runIds: [expect.any(String)], format: 'verl-console', steps: 3, skipped: { 'unparsable line': 1 } });
    const rec = (await store.getRun(r.runIds[0]))!;
    expect(rec.kind).toBe('imported');
    expect(rec.status).toBe('completed');
    expect(rec.name).toBe('mine');
    expect(rec.tags).toEqual(['ext']);
    expect(rec.step).toBe(2);
    // Every stored step went through the collapse detector: its empty alert list means something.
    expect(rec.detectedThrough).toBe(2);
    expect(rec.source).toMatchObject({
      format: 'verl-console',
      framework: 'verl',
      paths: [p],
      sha256: [createHash('sha256').update(text).digest('hex')],
      bytes: Buffer.byteLength(text),
      keyMap: { 'actor/grad_norm': 'grad' },
      skipped: { 'unparsable line': 1 },
      following: false,
    });
    const m = await store.readMetrics(rec.id);
    expect(m.map((x) => x.step)).toEqual([0, 1, 2]);
    expect(m[1].values).toEqual({ 'actor/grad_norm': 2, loss: 0.4 });
    expect(await store.metricKeys(rec.id)).toEqual(['actor/grad_norm', 'loss']);
    const lab = await store.createRun({ preset: 'grpo', env: 'sokoban', seed: 1, config: {}, totalSteps: 5 });
    expect((await store.listRuns({ kind: 'imported' })).map((x) => x.id)).toEqual([rec.id]);
    expect((await store.listRuns({ kind: 'lab' })).map((x) => x.id)).toEqual([lab.id]);
    expect(rec.summary['actor/grad_norm']).toBe(3);
  });

  it('keeps the stored steps strictly increasing: steps going back (a restarted process) start a linked "(restart 2)" run', async () => {
    const p = await write('ooo.log', '#tiny\nstep:5 grad=1\nstep:6 grad=1\nstep:6 grad=7\nstep:3 grad=9\nstep:4 grad=8\nstep:7 grad=1\n');
    const r = await importLogs(store, [p], { registry, name: 'job' });
    expect(r.skipped).toEqual({});
    expect(r.runIds).toHaveLength(2);
    expect(r.steps).toBe(5);
    const [a, b] = await Promise.all(r.runIds.map((id) => store.getRun(id)));
    // The parser merges the two step-6 lines (the later value wins).
    expect((await store.readMetrics(a!.id)).map((x) => [x.step, x.values['actor/grad_norm']])).toEqual([
      [5, 1],
      [6, 7],
    ]);
    expect((await store.readMetrics(b!.id)).map((x) => x.step)).toEqual([3, 4, 7]);
    expect(a!.source!.notes.join(' ')).toContain(`the source restarted at step 3 after step 6; later steps are in run ${b!.id}`);
    expect(b).toMatchObject({ name: 'job (restart 2)', tags: ['restart'] });
    expect(b!.source!.notes.join(' ')).toContain(`restart 2: the source process started again at step 3 after run ${a!.id} reached step 6`);
  });

  it('refuses the same source twice by SHA-256, naming the run that holds it, and imports it again with again', async () => {
    const p = await write('a.log', '#tiny\nstep:0 grad=1\nstep:1 grad=2\n');
    const first = await importLogs(store, [p], { registry });
    const copy = await write('renamed-copy.log', await readFile(p, 'utf8'));
    const second = await importLogs(store, [copy], { registry });
    expect(second).toMatchObject({ runIds: [], duplicateOf: first.runIds, steps: 0 });
    expect((await store.listRuns()).length).toBe(1);
    const third = await importLogs(store, [copy], { registry, again: true });
    expect(third.runIds).toHaveLength(1);
    expect(third.runIds[0]).not.toBe(first.runIds[0]);
    expect((await store.listRuns()).length).toBe(2);
  });

  it('a file in no known format is refused naming the formats tried, and nothing is written (even with a good file first)', async () => {
    const good = await write('good.log', '#tiny\nstep:0 grad=1\n');
    const bad = await write('notes.txt', 'just some notes\nnothing to see\n');
    const e = await importLogs(store, [good, bad], { registry }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ImportError);
    expect((e as ImportError).code).toBe('UNKNOWN_FORMAT');
    expect((e as Error).message).toContain(bad);
    expect((e as Error).message).toMatch(/formats tried: verl-console, bundle/);
    expect(await store.listRuns()).toEqual([]);
    expect((await readdir(store.runsDir)).filter((n) => !n.startsWith('.'))).toEqual([]);
  });

  it('an unknown --format is refused with the list of formats', async () => {
    const p = await write('a.log', '#tiny\nstep:0 grad=1\n');
    await expect(importLogs(store, [p], { registry, format: 'parquet' })).rejects.toThrow(
      /--format "parquet" is not a known format; known formats: verl-console, bundle/,
    );
  });

  it('a parser failing mid-import leaves no run behind', async () => {
    const lines = ['#tiny', ...Array.from({ length: 50 }, (_, i) => `step:${i} grad=1`)];
    const p = await write('crash.log', `${lines.join('\n')}\n`);
    await expect(importLogs(store, [p], { registry: tinyRegistry({ failAtLine: 40 }) })).rejects.toThrow(/failing at line 40/);
    expect(await store.listRuns()).toEqual([]);
  });

  it('a log with no step at all is refused as empty, nothing written', async () => {
    const p = await write('nosteps.log', '#tiny\nhello\n');
    await expect(importLogs(store, [p], { registry })).rejects.toThrow(
      /no metric step was found; nothing was imported \(skipped: \{"unparsable line":1\}\)/,
    );
    expect(await store.listRuns()).toEqual([]);
  });

  it('streams a large log in chunks: every step arrives, in order', async () => {
    const n = 20_000;
    const body = Array.from({ length: n }, (_, i) => `step:${i} grad=${i % 7} loss=0.${i % 10} filler=${'9'.repeat(50)}`).join('\n');
    const p = await write('big.log', `#tiny\n${body}\n`);
    const seen: number[] = [];
    const r = await importLogs(store, [p], { registry, onProgress: (x) => seen.push(x.bytesRead) });
    expect(r.steps).toBe(n);
    expect(seen.length).toBeGreaterThan(1); // more than one chunk: streamed, not read whole
    const m = await store.readMetrics(r.runIds[0]);
    expect(m.length).toBe(n);
    expect(m[n - 1].step).toBe(n - 1);
  });

  it('raises the collapse detector alerts over the imported stream (a NaN gradient norm)', async () => {
    const lines = ['#tiny', ...Array.from({ length: 30 }, (_, i) => `step:${i} grad=${i === 20 ? 'nan' : 1 + (i % 3) * 0.1}`)];
    const p = await write('nan.log', `${lines.join('\n')}\n`);
    const r = await importLogs(store, [p], { registry });
    const rec = (await store.getRun(r.runIds[0]))!;
    const nonFinite = rec.alerts.filter((a) => a.rule === 'non_finite');
    expect(nonFinite.length).toBeGreaterThan(0);
    expect(nonFinite[0].firstStep).toBe(20);
    expect(rec.alertCount).toBe(rec.alerts.length);
  });
});

describe('an imported run in a bundle', () => {
  it('carries its source log byte for byte, and a bundle import keeps it with the run', async () => {
    const text = '#tiny\nstep:0 grad=1\nstep:1 grad=2\n';
    const p = await write('cluster run.log', text);
    const r = await importLogs(store, [p], { registry });
    const id = r.runIds[0];
    expect(await readFile(join(store.runDir(id), SOURCE_DIR, '0-cluster_run.log'), 'utf8')).toBe(text);
    const bundle = await exportRun(store, id, { out: join(dir, 'b.zip') });
    const entries = unzipSync(new Uint8Array(await readFile(bundle.path)));
    expect(new TextDecoder().decode(entries['source/0-cluster_run.log'])).toBe(text);
    const other = await RunStore.open(join(dir, 'other'));
    try {
      const imp = await importBundle(other, new Uint8Array(await readFile(bundle.path)));
      expect(await readFile(join(other.runDir(imp.runId), SOURCE_DIR, '0-cluster_run.log'), 'utf8')).toBe(text);
      expect((await other.getRun(imp.runId))!.source).toMatchObject({
        format: 'verl-console',
        sha256: [createHash('sha256').update(text).digest('hex')],
      });
      // Not a lab run: reproducing it is refused with the reason, nothing is created.
      await expect(reproduceBundle(other, bundle.path)).rejects.toThrow(
        /was imported from a verl-console log \(verl framework\), not trained in this lab/,
      );
      expect((await other.listRuns()).length).toBe(1);
    } finally {
      await other.close();
    }
  });
});
