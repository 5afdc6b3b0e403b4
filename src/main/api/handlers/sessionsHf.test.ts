/**
 * sessions.start with model.source=hf:PATH from a page in browser mode: the folder is read on the main side, so
 * as for models.inspect and imports.path only inside the `serve --allow-dir` folders (pathAccess.ts) — a path
 * outside them or a relative one is refused on `overrides.model.source` before any run exists.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import train from '../../cli/commands/train';
import { UsageError } from '../../cli/types';
import { TINY_QWEN2_CONFIG, writeHfFolder } from '../../testing/hfFolder';
import { testCliContext } from '../../testing/testContext';
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
    // The picked folder itself passes the grant, and goes on to the folder's own check (train --model hf:'s
    // preflight): this one was never made, so that refuses it, naming the folder — still no run.
    const past = await start(`hf:${picked}`, grant);
    expect(past.error).toMatchObject({
      code: 'VALIDATION',
      field: 'overrides.model.source',
      message: `model folder ${picked} does not exist (give the folder that holds config.json)`,
    });
    expect((await lab.call('runs.list', {})).value).toEqual([]);
  });
});

/**
 * sessions.start runs the preflight `train --model hf:` runs (compute/models/hfRunModel.ts, preflightHfRunHere) before
 * a run exists: a folder the CLI refuses is refused here in the same sentence, on overrides.model.source, and
 * nothing is written to the store. Without it the start made a run that failed at its first step (the tokenizer's
 * own refusal), a failed run left in the store.
 */
describe('sessions.start checks the Hugging Face folder as train --model hf: does, before a run exists', () => {
  /** Every file under `dir`, with its size: what the store holds on disk. */
  const files = (dir: string): string[] =>
    readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => `${join(e.parentPath, e.name)} ${statSync(join(e.parentPath, e.name)).size}`)
      .sort();

  /** The sentence `arlarena train --model hf:FOLDER` refuses the folder with (it made no data folder). */
  async function cliRefusal(folder: string, sets: string[] = []): Promise<string> {
    const dataDir = join(outside, `cli-data-${folder.split('/').pop()}`);
    const e = await train
      .run(['--model', `hf:${folder}`, '--steps', '2', ...sets.flatMap((s) => ['--set', s])], testCliContext(dataDir).ctx)
      .then(
        () => null,
        (x: unknown) => x,
      );
    expect(e).toBeInstanceOf(UsageError);
    expect(existsSync(dataDir)).toBe(false);
    return (e as Error).message;
  }

  function tinyFolder(name: string, opts: Parameters<typeof writeHfFolder>[1] = {}): string {
    const folder = join(root, name);
    mkdirSync(folder);
    writeHfFolder(folder, { config: { ...TINY_QWEN2_CONFIG, max_position_embeddings: 1024 }, ...opts });
    return folder;
  }

  it('refuses a tokenizer without a chat template, a missing shard and a context past the checkpoint; starts a whole folder', async () => {
    lab = await openHandlerTestLab('arl-hf-start-', (s) => ({ ...createSessionsHandlers(s), ...createRunsHandlers(s) }), {
      transport: 'browser',
      publishDownload: null,
      importRoots: [root],
    });
    const start = (folder: string, more: Record<string, unknown> = {}) =>
      lab.call('sessions.start', {
        preset: 'sampo',
        env: 'sokoban',
        overrides: { ...hfRun, 'model.source': `hf:${folder}`, 'model.maxSeqLen': 512, ...more },
      });
    const before = files(lab.dir);

    const noTemplate = tinyFolder('no-template');
    const tc = join(noTemplate, 'tokenizer_config.json');
    const { chat_template: _dropped, ...rest } = JSON.parse(readFileSync(tc, 'utf8')) as Record<string, unknown>;
    writeFileSync(tc, JSON.stringify(rest));
    const r1 = await start(noTemplate);
    expect(r1).toMatchObject({ ok: false, error: { code: 'VALIDATION', field: 'overrides.model.source' } });
    expect(r1.error.message).toBe(
      `${noTemplate}: tokenizer_config.json has no chat_template (and there is no chat_template.jinja); the agent's prompts go through it: use a chat (instruct) checkpoint or add a template`,
    );
    expect(r1.error.message).toBe(await cliRefusal(noTemplate));

    const noShard = tinyFolder('no-shard', { shards: true });
    rmSync(join(noShard, 'model-00002-of-00002.safetensors'));
    const r2 = await start(noShard);
    expect(r2).toMatchObject({ ok: false, error: { code: 'VALIDATION', field: 'overrides.model.source' } });
    expect(r2.error.message).toBe(
      `${noShard}: model.safetensors.index.json names model-00002-of-00002.safetensors, which is not in the folder (copy every shard)`,
    );
    expect(r2.error.message).toBe(await cliRefusal(noShard));

    const whole = tinyFolder('whole');
    const r3 = await start(whole, { 'model.maxSeqLen': 2048 });
    expect(r3).toMatchObject({ ok: false, error: { code: 'VALIDATION', field: 'overrides.model.source' } });
    expect(r3.error.message).toBe(
      `model.maxSeqLen 2048 is longer than ${whole}'s context (config.json max_position_embeddings 1024); set model.maxSeqLen ≤ 1024`,
    );
    expect(r3.error.message).toBe(await cliRefusal(whole, ['model.maxSeqLen=2048']));

    // Nothing written: no run listed, not a byte more in the data folder.
    expect((await lab.call('runs.list', {})).value).toEqual([]);
    expect(files(lab.dir)).toEqual(before);

    // The whole folder passes and its run starts (the test lab's synthetic job trains it).
    const ok = await start(whole);
    expect(ok.ok).toBe(true);
    await (await lab.services.lab()).sessions.waitFor(ok.value.runId);
    expect((await lab.call('runs.list', {})).value.map((r: { id: string }) => r.id)).toEqual([ok.value.runId]);
  });
});
