/**
 * One-line errors where a stack trace or INTERNAL was (hardening round three, "unclear errors"): a folder of more
 * than 20,000 files, and "/" forced to TensorBoard (which walked into /proc), answer VALIDATION naming the folder
 * and the fix, over the API too (/usr stands for a big tree: a Debian /usr holds far more than 20,000 files).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunStore } from '../store/runStore';
import { openHandlerTestLab, type HandlerTestLab } from '../testing/testLab';
import { createImportsHandlers } from '../api/handlers/imports';
import { ImportError, importLogs } from './importLogs';
import { importSources } from './importSources';

let dir: string;
let store: RunStore;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-unclear-'));
  store = await RunStore.open(join(dir, 'data'));
});
afterAll(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

describe('import errors in one line', () => {
  it("a folder of none of the formats names what was looked for: TensorBoard files and trackers' runs, not TensorBoard alone", async () => {
    const folder = join(dir, 'not-a-run');
    await mkdir(folder);
    await writeFile(join(folder, 'notes.txt'), 'hello\n');
    const e = await importSources(store, [folder]).then(
      () => null,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(ImportError);
    expect((e as ImportError).message).toBe(
      `${folder} is a folder without TensorBoard event files or trackers' runs (W&B run folders, MLflow stores, MLflow or Trackio databases) (1 other file(s) looked at); to import a log file (verl, TRL, JSONL, CSV, …), pass the file itself`,
    );
    // Forced to TensorBoard, nothing else was looked for.
    const forced = await importLogs(store, [folder], { format: 'tensorboard' }).then(
      () => null,
      (x: unknown) => x,
    );
    expect((forced as ImportError).message).toMatch(/^\S+ is a folder without TensorBoard event files \(1 other/);
  });

  it('a folder of more than 20,000 files is TOO_LARGE, naming it and the fix', async () => {
    const e = await importLogs(store, ['/usr'], { format: 'tensorboard' }).then(
      () => null,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(ImportError);
    expect((e as ImportError).code).toBe('TOO_LARGE');
    expect((e as ImportError).message).toBe(
      '/usr holds more than 20000 files; import the run folder itself (the one holding its event files)',
    );
  });

  it('"/" forced to TensorBoard over the API: VALIDATION, not INTERNAL', async () => {
    const lab: HandlerTestLab = await openHandlerTestLab('arl-unclear-api-', (s) => createImportsHandlers(s), {
      transport: 'electron',
      publishDownload: null,
    });
    try {
      const r = await lab.call('imports.path', { path: '/', format: 'tensorboard' });
      expect(r.error).toMatchObject({
        code: 'VALIDATION',
        field: 'path',
        message: expect.stringMatching(/^\/ holds more than 20000 files/),
      });
    } finally {
      await lab.close();
    }
  });
});
