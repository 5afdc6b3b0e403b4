/**
 * Following a file that is no training log, or not yet one: refused at once when its content is binary in no
 * binary format (as import refuses it), stopped with the reason when no format shows within the time limit, and
 * a run page's "waiting for the first step" until one arrives; a log's config shown as soon as the log printed it.
 */
import { expect, it } from 'vitest';
import { appendFile, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LogFollower, looksLikeText } from './follow';
import { ImportError } from './importLogs';
import { realRun } from '../../../tests/support/realRuns';
import { until } from '../testing/until';
import { followTestSetup } from '../testing/followSetup';

const fx = followTestSetup('arl-follow-start-');

// The first bytes of a PNG file: its signature and IHDR chunk (a 1×1 picture), then some pixel data.
const PNG = Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex'), Buffer.alloc(200, 0xf7)]);

it('refuses a small binary file in no known format at once, writing no run (a PNG was followed forever at "step 0")', async () => {
  const p = join(fx.dir, 'loss-curve.png');
  await writeFile(p, PNG);
  expect(looksLikeText(PNG)).toBe(false);
  const e = await LogFollower.start(fx.store, p, { pollMs: 40 }).catch((x: unknown) => x);
  expect(e).toBeInstanceOf(ImportError);
  expect((e as ImportError).code).toBe('UNKNOWN_FORMAT');
  expect((e as Error).message).toMatch(/loss-curve\.png is in no known format \(its content is binary.*nothing was followed/s);
  expect(await readdir(fx.store.runsDir).catch(() => [])).toEqual([]);
  // Text, a log with a NUL byte in it (a real verl log has two) and a character cut at the end still read as text.
  expect(looksLikeText(Buffer.from('step:1 - a:1\n\u0000 NCCL é'))).toBe(true);
  expect(looksLikeText(Buffer.from('é', 'utf8').subarray(0, 1))).toBe(true);
});

it('stops a follow whose format has not shown within the time limit, saying why, instead of staying at step 0', async () => {
  const p = join(fx.dir, 'young.log');
  await writeFile(p, 'starting up…\n');
  const f = await LogFollower.start(fx.store, p, { pollMs: 40, formatSeconds: 0.3 });
  fx.followers.push(f);
  await until('the follow to end', async () => (await fx.store.getRun(f.runId))?.status === 'stopped');
  expect((await fx.store.getRun(f.runId))!.error).toMatch(
    /no step was read from .*young\.log in the first 0\.3 s of following: its content matches no known format.*following stopped/,
  );
});

const REAL = realRun('verl-console/play-verl_verl_qwen2_7b_min.log');

it(`shows a followed verl log's config as soon as the log printed it, before its first step (${REAL ? 'the shared real verl Qwen2-7B console log' : 'NOT the shared real logs (absent): a verl console log written here'})`, async () => {
  const text = REAL
    ? await readFile(REAL, 'utf8')
    : `(main_task pid=1) {'algorithm': {'adv_estimator': 'gae'}, 'data': {'train_files': '~/data/gsm8k/train.parquet'}, 'trainer': {'seed': 5}}\n(main_task pid=1) step:1 - actor/pg_loss:0.1 - critic/score/mean:0.3\n(main_task pid=1) step:2 - actor/pg_loss:0.2 - critic/score/mean:0.4\n`;
  const first = text.indexOf('step:1 -');
  const head = text.slice(0, text.lastIndexOf('\n', first) + 1);
  const p = join(fx.dir, 'train.log');
  await writeFile(p, REAL ? head : text.slice(0, text.indexOf('\n', first) + 1));
  const f = await LogFollower.start(fx.store, p, { pollMs: 40 });
  fx.followers.push(f);
  await until('the config on the run', async () => Object.keys((await fx.store.getRun(f.runId))?.config ?? {}).length > 0);
  const rec = (await fx.store.getRun(f.runId))!;
  expect(rec.status).toBe('running');
  expect(rec.config).toHaveProperty('algorithm');
  expect(rec.preset).toBe('gae');
  if (REAL) expect(f.info().steps).toBe(0);
  await appendFile(p, text.slice(head.length, text.indexOf('step:3 -')));
  await until('its steps', () => f.info().steps > 0);
});
