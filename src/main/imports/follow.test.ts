import { describe, expect, it } from 'vitest';
import { appendFile, readdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Alert } from '../../shared/api';
import { LogFollower } from './follow';
import { ImportError } from './importLogs';
import { tinyRegistry } from '../testing/testRegistry';
import { until } from '../testing/until';
import { followTestSetup } from '../testing/followSetup';

const fx = followTestSetup('arl-follow-');

const registry = tinyRegistry();

function lines(from: number, to: number, value: (i: number) => string = (i) => `${1 + (i % 3) * 0.1}`): string {
  let s = '';
  for (let i = from; i <= to; i++) s += `step:${i} grad=${value(i)} loss=0.${i % 10}\n`;
  return s;
}

async function steps(runId: string): Promise<number[]> {
  return (await fx.store.readMetrics(runId)).map((r) => r.step);
}

async function follow(path: string, opts: Parameters<typeof LogFollower.start>[2] = {}): Promise<LogFollower> {
  const f = await LogFollower.start(fx.store, path, { registry, pollMs: 40, ...opts });
  fx.followers.push(f);
  return f;
}

describe('LogFollower (live follow, tiny test format)', () => {
  it('appends new steps live, raises alerts as they happen, and completes on stop', async () => {
    const p = join(fx.dir, 'train.log');
    await writeFile(p, `#tiny\n${lines(0, 4)}`);
    const published: number[] = [];
    const raised: Alert[] = [];
    const f = await follow(p, {
      onRecords: (_id, recs) => published.push(...recs.map((r) => r.step)),
      onAlert: (_id, a, kind) => kind === 'raised' && raised.push(a),
    });
    const id = f.runId;
    const rec0 = (await fx.store.getRun(id))!;
    expect(rec0).toMatchObject({ kind: 'imported', status: 'running', source: { following: true } });
    // A text step completes when the next begins: 0–3 now, 4 with the next line.
    await until('steps 0–3', async () => (await steps(id)).length === 4);
    await appendFile(p, lines(5, 9));
    await until('steps up to 8', async () => (await steps(id)).at(-1) === 8);
    expect(raised).toEqual([]);
    await appendFile(p, `${lines(10, 10, () => 'nan')}${lines(11, 12)}`);
    await until('the NaN alert', () => raised.some((a) => a.rule === 'non_finite'));
    const live = (await fx.store.getRun(id))!;
    expect(live.status).toBe('running');
    expect(live.alerts.some((a) => a.rule === 'non_finite' && a.firstStep === 10)).toBe(true);
    const info = await f.stop();
    expect(info).toMatchObject({ runId: id, status: 'completed', step: 12, steps: 13 });
    expect(await steps(id)).toEqual(Array.from({ length: 13 }, (_, i) => i));
    expect(published).toEqual(Array.from({ length: 13 }, (_, i) => i));
    const done = (await fx.store.getRun(id))!;
    expect(done.status).toBe('completed');
    expect(done.source).toMatchObject({ following: false, format: 'verl-console', keyMap: { 'actor/grad_norm': 'grad' } });
    expect(done.source!.sha256).toHaveLength(1);
  });

  it('survives truncation and in-place rewrites: replayed steps are not stored twice, later steps continue the run', async () => {
    const p = join(fx.dir, 'train.log');
    await writeFile(p, `#tiny\n${lines(0, 5)}`);
    const notices: string[] = [];
    const f = await follow(p, { onNotice: (m) => notices.push(m) });
    const id = f.runId;
    await until('steps 0–4', async () => (await steps(id)).length === 5);
    // copytruncate-style: the file is emptied and the same process goes on writing its next steps.
    await writeFile(p, lines(6, 8));
    await until('steps after truncation', async () => (await steps(id)).at(-1) === 7);
    expect(notices.some((n) => /truncated/.test(n))).toBe(true);
    // A tool rewrites the whole log from the start (same steps, same values) and carries on.
    await writeFile(p, `#tiny\n${lines(0, 8)}${lines(9, 11)}`);
    await until('steps after the rewrite', async () => (await steps(id)).at(-1) === 10);
    const info = await f.stop();
    expect(info.status).toBe('completed');
    expect(await steps(id)).toEqual(Array.from({ length: 12 }, (_, i) => i));
    expect((await fx.store.getRun(id))!.source!.skipped['replayed step']).toBe(9);
    expect((await fx.store.listRuns()).length).toBe(1);
  });

  it('follows a rotated log (renamed away, a new file in its place)', async () => {
    const p = join(fx.dir, 'train.log');
    await writeFile(p, `#tiny\n${lines(0, 3)}`);
    const f = await follow(p);
    await until('steps 0–2', async () => (await steps(f.runId)).length === 3);
    await rename(p, `${p}.1`);
    await writeFile(p, lines(4, 6));
    await until('steps after rotation', async () => (await steps(f.runId)).at(-1) === 5);
    await f.stop();
    expect(await steps(f.runId)).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('a restarted process writing its own steps from 0 goes to a new linked run "(restart 2)"', async () => {
    const p = join(fx.dir, 'train.log');
    await writeFile(p, `#tiny\n${lines(0, 6)}`);
    const f = await follow(p, { name: 'ppo' });
    const first = f.runId;
    await until('steps 0–5', async () => (await steps(first)).length === 6);
    // The job crashed and was relaunched without resuming: its log starts again at step 0, other values.
    await appendFile(
      p,
      lines(0, 3, (i) => `${5 + i}`),
    );
    await until('the restart run', () => f.runIds.length === 2);
    const second = f.runId;
    expect(second).not.toBe(first);
    await f.stop();
    const a = (await fx.store.getRun(first))!;
    const b = (await fx.store.getRun(second))!;
    expect(a.status).toBe('completed');
    expect(await steps(first)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(a.source!.notes.join(' ')).toMatch(/restarted at step 0 after step 6/);
    expect(b.name).toBe('ppo (restart 2)');
    expect(b.tags).toContain('restart');
    expect(b.source!.notes.join(' ')).toContain(first);
    expect(b.status).toBe('completed');
    expect(await steps(second)).toEqual([0, 1, 2, 3]);
    expect((await fx.store.readMetrics(second))[2].values['actor/grad_norm']).toBe(7);
  });

  it('stops by itself after idleSeconds without new bytes', async () => {
    const p = join(fx.dir, 'train.log');
    await writeFile(p, `#tiny\n${lines(0, 2)}`);
    const f = await follow(p, { idleSeconds: 0.3 });
    const info = await f.done;
    expect(info.status).toBe('completed');
    expect(await steps(f.runId)).toEqual([0, 1, 2]);
  });

  it('waits for an empty file to show its format, and refuses a file that has shown it is none', async () => {
    const p = join(fx.dir, 'young.log');
    await writeFile(p, '');
    const f = await follow(p);
    expect(f.info().format).toBe('detecting');
    await appendFile(p, `#tiny\n${lines(0, 2)}`);
    await until('steps of the young file', async () => (await steps(f.runId)).length === 2);
    expect(f.info().format).toBe('verl-console');
    await f.stop();

    const never = join(fx.dir, 'never.log');
    await writeFile(never, '');
    const g = await follow(never);
    expect(await g.stop()).toMatchObject({ status: 'stopped', steps: 0 });
    expect((await fx.store.getRun(g.runId))!).toMatchObject({
      status: 'stopped',
      error: expect.stringMatching(/no step was read from .*never\.log while it was followed \(its format never showed\)/),
    });

    const bad = join(fx.dir, 'notes.txt');
    await writeFile(bad, 'x'.repeat(70 * 1024));
    const before = (await readdir(fx.store.runsDir)).length;
    const e = await LogFollower.start(fx.store, bad, { registry }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ImportError);
    expect((e as Error).message).toMatch(/no known format.*formats tried: verl-console/s);
    expect((await readdir(fx.store.runsDir)).length).toBe(before);
  });
});
