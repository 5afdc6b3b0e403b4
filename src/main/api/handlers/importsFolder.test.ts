/**
 * imports.files: the UI's "Import folder…" sends one run folder's TensorBoard event files together, and a folder
 * holding two event files of one run (a restarted writer) becomes ONE run, as `arlarena import DIR` and
 * TensorBoard group it. The files are written by TensorBoard's own EventFileWriter (tests/peers).
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, it } from 'vitest';
import { peerPython } from '../../../../tests/support/peers';
import { createImportsHandlers } from './imports';
import { openHandlerTestLab, type HandlerTestLab } from '../../testing/testLab';

const ROOT = join(import.meta.dirname, '..', '..', '..', '..');
let work = '';
/** The two event files of one run folder, in the order the writer made them (0–5, then 6–11 after a restart). */
let eventFiles: string[] = [];

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'arl-imports-folder-'));
  const run = join(work, 'runs', 'seed1');
  const events = (from: number) =>
    Array.from({ length: 6 }, (_, i) => [
      from + i,
      1_700_000_000 + from + i,
      [
        ['train/loss', 'simple', 1 - (from + i) * 0.05],
        ['train/grad_norm', 'simple', 0.3 + (from + i) * 0.01],
      ],
    ]);
  const spec = join(work, 'spec.json');
  await writeFile(
    spec,
    JSON.stringify({
      files: [
        { dir: run, events: events(0) },
        { dir: run, events: events(6) },
      ],
    }),
  );
  const py = spawnSync(peerPython(), [join(ROOT, 'tests', 'peers', 'tensorboard_peer.py'), 'write', spec], { encoding: 'utf8' });
  expect(py.status, py.stderr).toBe(0);
  eventFiles = JSON.parse(py.stdout) as string[];
  expect(new Set(eventFiles).size).toBe(2);
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

let lab: HandlerTestLab;
beforeEach(async () => {
  lab = await openHandlerTestLab('arl-imports-files-', (s) => createImportsHandlers(s));
});
afterEach(async () => {
  await lab.close();
});

async function asSent(paths: readonly string[]): Promise<{ fileName: string; dataBase64: string }[]> {
  return Promise.all(
    paths.map(async (p) => ({ fileName: `runs/seed1/${basename(p)}`, dataBase64: (await readFile(p)).toString('base64') })),
  );
}

describe('imports.files (Import folder…)', () => {
  it('two event files of one run folder (a restarted writer) become one run with every step, named by the folder', async () => {
    // Sent in the reverse order: the main side reads them in name order, as TensorBoard does.
    const r = await lab.call('imports.files', { files: (await asSent(eventFiles)).reverse() });
    expect(r.ok, JSON.stringify(r.error)).toBe(true);
    expect(r.value).toMatchObject({ format: 'tensorboard', steps: 12, runIds: [expect.any(String)] });
    const { store } = await lab.services.lab();
    const rec = (await store.getRun(r.value.runIds[0]))!;
    expect(rec.name).toBe('seed1');
    expect(rec.source!.paths).toEqual([...eventFiles].sort().map((p) => `runs/seed1/${basename(p)}`));
    expect(rec.source!.sha256).toHaveLength(2);
    const m = await store.readMetrics(rec.id);
    expect(m.map((x) => x.step)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(m[7].values['train/loss']).toBeCloseTo(1 - 7 * 0.05, 6);
    // The same folder again is a duplicate of that run (by the SHA-256 of both files); again imports a copy.
    const twice = await lab.call('imports.files', { files: await asSent(eventFiles) });
    expect(twice.value).toMatchObject({ runIds: [], duplicateOf: [rec.id] });
    expect((await lab.call('imports.files', { files: await asSent(eventFiles), again: true })).value.runIds).toHaveLength(1);
  });

  it("refuses files from two folders, a file that is not an event file, and names the user's files", async () => {
    const [a, b] = await asSent(eventFiles);
    const two = await lab.call('imports.files', { files: [a, { ...b, fileName: 'runs/seed2/x.tfevents' }] });
    expect(two.error).toMatchObject({ code: 'VALIDATION', field: 'files' });
    expect(two.error.message).toMatch(/from 2 folders \("runs\/seed1", "runs\/seed2"\)/);
    const csv = { fileName: 'runs/seed1/metrics.csv', dataBase64: Buffer.from('step,loss\n1,0.5\n2,0.4\n').toString('base64') };
    const mixed = await lab.call('imports.files', { files: [a, csv] });
    expect(mixed.error.code).toBe('VALIDATION');
    expect(mixed.error.message).toContain('runs/seed1/metrics.csv is not a TensorBoard event file');
    expect(mixed.error.message).not.toContain('upload-');
    const { store } = await lab.services.lab();
    expect(await store.listRuns()).toEqual([]);
  });
});
