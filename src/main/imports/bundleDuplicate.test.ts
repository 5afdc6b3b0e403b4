/**
 * A bundle already in the lab says so instead of making a look-alike run: the same bundle file imported twice (its
 * SHA-256), or the bundle of a run that is still here with the same metrics — in the CLI (`arlarena import
 * X.arlarena.zip`) and through imports.file (the UI's Import button), with `again` importing a copy.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { exportRun } from '../bundles/exportBundle';
import importCommand from '../cli/commands/import';
import { testCliContext as ctxFor } from '../testing/testContext';
import { createImportsHandlers } from '../api/handlers/imports';
import { openHandlerTestLab, type HandlerTestLab } from '../testing/testLab';

let lab: HandlerTestLab;
beforeEach(async () => {
  lab = await openHandlerTestLab('arl-bundle-dup-', (s) => createImportsHandlers(s));
});
afterEach(async () => {
  await lab.close();
});

function verlLines(n: number): string {
  let s = '';
  for (let i = 0; i < n; i++)
    s += `step:${i} - actor/entropy:${(0.5 - i * 0.001).toFixed(4)} - actor/grad_norm:1.${i % 5} - critic/score/mean:0.${10 + i}\n`;
  return s;
}

/** A bundle of an imported verl log, exported from the lab's own store. */
async function aBundle(): Promise<{ path: string; sourceRun: string }> {
  const first = await lab.call('imports.file', { fileName: 'a.log', dataBase64: Buffer.from(verlLines(8)).toString('base64') });
  const sourceRun = first.value.runIds[0];
  const { store } = await lab.services.lab();
  const bundle = await exportRun(store, sourceRun, { out: join(lab.dir, 'a.arlarena.zip') });
  return { path: bundle.path, sourceRun };
}

describe('importing a bundle that is already in the lab', () => {
  it('imports.file: the bundle of a run still here is that run (same metrics), reported as already in the lab; again: true imports a copy', async () => {
    const { path, sourceRun } = await aBundle();
    const data = (await readFile(path)).toString('base64');
    const { store } = await lab.services.lab();
    const before = (await store.listRuns()).map((r) => r.id);
    const own = await lab.call('imports.file', { fileName: 'a.arlarena.zip', dataBase64: data });
    expect(own.value).toEqual({ runIds: [], format: 'bundle', steps: 0, skipped: {}, duplicateOf: [sourceRun], exportedFrom: [sourceRun] });
    expect((await store.listRuns()).map((r) => r.id)).toEqual(before);
    const copy = (await lab.call('imports.file', { fileName: 'a.arlarena.zip', dataBase64: data, again: true })).value.runIds[0];
    expect(copy).not.toBe(sourceRun);
    expect((await store.getRun(copy))!.importedBundle).toEqual({ sha256: expect.stringMatching(/^[0-9a-f]{64}$/), originalId: sourceRun });
    // The same file once more: held by the copy (same bundle file) and by the run itself (same metrics).
    const twice = await lab.call('imports.file', { fileName: 'a.arlarena.zip', dataBase64: data });
    expect(twice.value.runIds).toEqual([]);
    expect([...twice.value.duplicateOf].sort()).toEqual([copy, sourceRun].sort());
    expect(twice.value.exportedFrom).toEqual([sourceRun]);
    const again = await lab.call('imports.file', { fileName: 'a.arlarena.zip', dataBase64: data, again: true });
    expect(again.value.runIds).toHaveLength(1);
    expect([copy, sourceRun]).not.toContain(again.value.runIds[0]);
  });

  it('a run that logged more steps after its export is not what the bundle holds: the bundle imports as a copy of its earlier state', async () => {
    const { path, sourceRun } = await aBundle();
    const { store } = await lab.services.lab();
    await store.appendMetrics(sourceRun, [{ step: 8, values: { 'actor/entropy': 0.49 } }]);
    await store.flush(sourceRun);
    const r = await lab.call('imports.file', { fileName: 'a.arlarena.zip', dataBase64: (await readFile(path)).toString('base64') });
    expect(r.value.runIds).toHaveLength(1);
    expect(r.value.duplicateOf).toBeUndefined();
    expect(r.value.steps).toBe(8);
  });

  it('arlarena import of the bundle of a run in the same data folder: "already in the lab as run R", exit 1, nothing changed', async () => {
    const { path, sourceRun } = await aBundle();
    const { store } = await lab.services.lab();
    const before = (await store.listRuns()).length;
    const a = ctxFor(lab.dir);
    expect(await importCommand.run([path], a.ctx)).toBe(1);
    expect(a.out()).toBe('');
    expect(a.err()).toBe(
      `arlarena import: ${path}: already in the lab as run ${sourceRun} (the run this bundle holds: same metrics, by SHA-256); nothing was changed; --again to import a copy under a new id\n`,
    );
    expect((await store.listRuns()).length).toBe(before);
  });

  it('arlarena import X.arlarena.zip twice: "already imported as run R; --again to import a copy", exit 1; --again imports it', async () => {
    const { path } = await aBundle();
    const data = join(lab.dir, 'data');
    const zip = join(lab.dir, 'x.arlarena.zip');
    await writeFile(zip, await readFile(path));
    const a = ctxFor(data);
    expect(await importCommand.run([zip], a.ctx)).toBe(0);
    const id = /as run (\S+):/.exec(a.out())![1];
    const b = ctxFor(data);
    expect(await importCommand.run([zip], b.ctx)).toBe(1);
    expect(b.out()).toBe('');
    expect(b.err()).toBe(
      `arlarena import: ${zip}: already imported as run ${id} (same bundle file, by SHA-256); --again to import a copy\n`,
    );
    const c = ctxFor(data);
    expect(await importCommand.run([zip, '--again', '--json'], c.ctx)).toBe(0);
    const r = JSON.parse(c.out()) as { runIds: string[]; format: string };
    expect(r.format).toBe('bundle');
    expect(r.runIds).toHaveLength(1);
    expect(r.runIds[0]).not.toBe(id);
  });
});
