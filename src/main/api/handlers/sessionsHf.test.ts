/**
 * sessions.start with model.source=hf:PATH from a page in browser mode: the folder is read on the main side, so
 * as for models.inspect and imports.path only inside the `serve --allow-dir` folders (pathAccess.ts) — a path
 * outside them or a relative one is refused on `overrides.model.source` before any run exists.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openHandlerTestLab, type HandlerTestLab } from '../../testing/testLab';
import { createRunsHandlers } from './runs';
import { createSessionsHandlers } from './sessions';

let root = '';
let outside = '';
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'arlarena-hf-start-root-'));
  outside = mkdtempSync(join(tmpdir(), 'arlarena-hf-start-outside-'));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

// The settings a hf run needs (as `train --model hf:` and New run set them), so that only the folder is at issue.
const hfRun = {
  'compute.rolloutEngine': 'tfjs',
  'compute.logProbEngine': 'trainer',
  'compute.refLogProbEngine': 'trainer',
  'compute.workers': 1,
  'warmStart.source': 'none',
};

let lab: HandlerTestLab;
afterEach(async () => {
  await lab?.close();
});

describe('sessions.start on a Hugging Face folder in browser mode', () => {
  it('refuses a folder outside --allow-dir, and a relative one, naming model.source; no run is made', async () => {
    lab = await openHandlerTestLab('arl-hf-start-', (s) => ({ ...createSessionsHandlers(s), ...createRunsHandlers(s) }), {
      transport: 'browser',
      publishDownload: null,
      importRoots: [root],
    });
    const start = (source: string) =>
      lab.call('sessions.start', { preset: 'sampo', env: 'sokoban', overrides: { ...hfRun, 'model.source': source } });
    const outsideDir = join(outside, 'qwen');
    const r = await start(`hf:${outsideDir}`);
    expect(r).toMatchObject({ ok: false, error: { code: 'VALIDATION', field: 'overrides.model.source' } });
    expect(r.error.message).toBe(
      `in browser mode the lab reads model folders by path only inside ${JSON.stringify(root)}; ${JSON.stringify(outsideDir)} is not one of them; no run was created`,
    );
    expect(r.error.hint).toMatch(/--allow-dir/);
    const rel = await start('hf:models/qwen');
    expect(rel).toMatchObject({ ok: false, error: { code: 'VALIDATION', field: 'overrides.model.source' } });
    expect(rel.error.message).toMatch(/give the model folder's absolute path after "hf:"/);
    // A Ray cluster does not have the folder: refused before the cluster is asked anything.
    const ray = await lab.call('sessions.start', {
      preset: 'sampo',
      env: 'sokoban',
      overrides: { ...hfRun, 'model.source': `hf:${root}` },
      on: 'my-cluster',
    });
    expect(ray.error).toMatchObject({ code: 'VALIDATION', field: 'on', message: expect.stringMatching(/trains on this machine only/) });
    expect((await lab.call('runs.list', {})).value).toEqual([]);
  });

  it('refuses a grant: in browser mode the folder is named by model.source alone', async () => {
    lab = await openHandlerTestLab('arl-hf-start-', (s) => createSessionsHandlers(s), {
      transport: 'browser',
      publishDownload: null,
      importRoots: [root],
    });
    const r = await lab.call('sessions.start', {
      preset: 'sampo',
      env: 'sokoban',
      overrides: { ...hfRun, 'model.source': `hf:${root}` },
      modelGrant: 'g'.repeat(24),
    });
    expect(r.error).toMatchObject({ code: 'VALIDATION', field: 'modelGrant' });
  });
});

describe('sessions.start on a Hugging Face folder in the desktop app', () => {
  it('trains only the folder its dialog picked: no grant, an unknown grant or another folder is refused before any run exists', async () => {
    const picked = join(root, 'picked');
    const grant = 'p'.repeat(24);
    const pathGrants = { pick: async () => null, path: (g: string) => (g === grant ? picked : null) };
    lab = await openHandlerTestLab('arl-hf-start-', (s) => ({ ...createSessionsHandlers(s), ...createRunsHandlers(s) }), {
      transport: 'electron',
      publishDownload: null,
      pathGrants,
    });
    const start = (source: string, modelGrant?: string) =>
      lab.call('sessions.start', {
        preset: 'sampo',
        env: 'sokoban',
        overrides: { ...hfRun, 'model.source': source },
        ...(modelGrant ? { modelGrant } : {}),
      });
    const none = await start(`hf:${picked}`);
    expect(none.error).toMatchObject({
      code: 'VALIDATION',
      field: 'modelGrant',
      message: expect.stringMatching(/only when picked in its folder dialog/),
    });
    expect((await start(`hf:${picked}`, 'q'.repeat(24))).error).toMatchObject({ code: 'VALIDATION', field: 'modelGrant' });
    const other = await start(`hf:${outside}`, grant);
    expect(other.error).toMatchObject({ code: 'VALIDATION', field: 'overrides.model.source' });
    expect(other.error.message).toBe(
      `model.source names ${JSON.stringify(outside)}, but the folder picked in the dialog is ${JSON.stringify(picked)}; no run was created`,
    );
    // A grant on a run that trains the lab's own model means nothing: refused rather than ignored.
    expect((await lab.call('sessions.start', { preset: 'sampo', env: 'sokoban', modelGrant: grant })).error).toMatchObject({
      field: 'modelGrant',
    });
    expect((await lab.call('runs.list', {})).value).toEqual([]);
    // The picked folder itself passes this check (whatever the run then makes of it, the refusal is not about the grant).
    const ok = await start(`hf:${picked}`, grant);
    if (!ok.ok) expect(ok.error.field).not.toMatch(/^(modelGrant|overrides\.model\.source)$/);
    // Past the grant the run may start (and then fail on the empty folder): wait for its end, so closing the lab does
    // not remove the data folder while the run is still writing into it.
    else await (await lab.services.lab()).sessions.waitFor(ok.value.runId);
  });
});
