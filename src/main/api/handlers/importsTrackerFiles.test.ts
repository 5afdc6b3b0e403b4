/**
 * imports.files with a picked folder's tracker files (the renderer finds them by content and sends them together):
 * the main side lays them out as they were, reads them as a path import does, records each run under the names the
 * user picked, and keeps every file inside its upload folder whatever the names say. Inputs: two run folders in
 * the layout wandb 0.9.7 writes (wandbOldSdk.integration.test.ts reads folders it wrote itself).
 */
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openHandlerTestLab, type HandlerTestLab } from '../../testing/testLab';
import { createImportsHandlers } from './imports';
import { createRunsHandlers } from './runs';

let lab: HandlerTestLab;
beforeEach(async () => {
  lab = await openHandlerTestLab('arl-imports-trackers-', (s) => ({ ...createImportsHandlers(s), ...createRunsHandlers(s) }));
});
afterEach(async () => {
  await lab.close();
});

const b64 = (s: string) => Buffer.from(s).toString('base64');

/** One older W&B run folder's files, named as inside the picked folder `job/`. */
function oldRun(id: string, name: string, steps: number): { fileName: string; dataBase64: string }[] {
  const dir = `job/wandb/dryrun-20200101_120000-${id}`;
  const rows = Array.from(
    { length: steps },
    (_, s) =>
      `{"actor/pg_loss": ${0.5 / (1 + s)}, "timing": {"gen": ${1.5 + s}}, "_runtime": ${2 + s}, "_timestamp": ${1577836800 + s}, "_step": ${s}}`,
  );
  return [
    { fileName: `${dir}/wandb-history.jsonl`, dataBase64: b64(`${rows.join('\n')}\n`) },
    {
      fileName: `${dir}/config.yaml`,
      dataBase64: b64('wandb_version: 1\n\nalgorithm:\n  desc: null\n  value:\n    adv_estimator: grpo\n'),
    },
    {
      fileName: `${dir}/wandb-metadata.json`,
      dataBase64: b64(JSON.stringify({ name, project: 'arl-old', state: 'finished', exitcode: 0 })),
    },
  ];
}

describe('imports.files with trackers’ files from a picked folder', () => {
  it('imports one run per W&B run folder, recorded under the picked names; the same files again are "already imported"', async () => {
    const files = [...oldRun('aaaa1111', 'grpo-a', 4), ...oldRun('bbbb2222', 'grpo-b', 6)];
    const r = await lab.call('imports.files', { files });
    expect(r.ok, JSON.stringify(r.error)).toBe(true);
    expect(r.value).toMatchObject({ trackers: { 'wandb-files': 2 }, steps: 10, format: 'wandb-files' });
    const { store } = await lab.services.lab();
    const recs = await Promise.all((r.value.runIds as string[]).map((id) => store.getRun(id)));
    const a = recs.find((x) => x?.name === 'grpo-a')!;
    expect(a.source?.paths).toEqual(files.slice(0, 3).map((f) => f.fileName));
    expect(a.source?.notes).toContain('uploaded through the app');
    expect(a.config).toEqual({ algorithm: { adv_estimator: 'grpo' } });
    // The temporary layout is gone.
    expect(existsSync(join(store.dataDir, '.uploads')) ? await readdir(join(store.dataDir, '.uploads')) : []).toEqual([]);
    const again = await lab.call('imports.files', { files });
    expect(again.value).toMatchObject({ runIds: [] });
    expect([...again.value.duplicateOf].sort()).toEqual([...r.value.runIds].sort());
  });

  it('names that climb out (../) or repeat stay inside the upload folder or are refused', async () => {
    const files = oldRun('cccc3333', 'grpo-c', 3).map((f, i) => (i === 0 ? { ...f, fileName: `../../../${f.fileName}` } : f));
    const r = await lab.call('imports.files', { files });
    expect(r.ok, JSON.stringify(r.error)).toBe(true);
    expect(r.value.trackers).toEqual({ 'wandb-files': 1 });
    expect(existsSync(join(lab.dir, '..', 'job'))).toBe(false);
    const twice = await lab.call('imports.files', { files: [...files, files[1]] });
    expect(twice.ok).toBe(false);
    expect(twice.error).toMatchObject({ code: 'VALIDATION' });
    expect(twice.error.message).toMatch(/config\.yaml is sent twice/);
  });

  it('a name that is also the folder of another name is refused in one line, nothing imported', async () => {
    const files = oldRun('dddd4444', 'grpo-d', 3);
    const clash = { fileName: `${files[0]!.fileName}/x.json`, dataBase64: b64('{}') };
    for (const order of [
      [...files, clash],
      [clash, ...files],
    ]) {
      const r = await lab.call('imports.files', { files: order });
      expect(r.ok).toBe(false);
      expect(r.error).toMatchObject({ code: 'VALIDATION', field: 'files' });
      expect(r.error.message).toBe(`${files[0]!.fileName} is sent both as a file and as a folder holding ${clash.fileName}`);
    }
    expect((await lab.call('runs.list', {})).value).toEqual([]);
  });
});
