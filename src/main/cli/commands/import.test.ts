/**
 * `arlarena import` and `arlarena follow`: the --json shapes, exit codes and messages (the binary once, the
 * command modules directly for the rest, to keep the suite fast).
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testCliContext as ctxFor } from '../../testing/testContext';
import follow from './follow';
import importCommand from './import';
import show from './show';

const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-cli-import-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function verlLog(from: number, to: number): string {
  let s = '';
  for (let i = from; i <= to; i++)
    s += `step:${i} - actor/entropy:${(0.5 - i * 0.01).toFixed(3)} - actor/grad_norm:${i === 7 ? 'nan' : '1.5'} - critic/score/mean:0.${i}\n`;
  return s;
}

describe('arlarena import', () => {
  it('--json prints {"runIds", "format", "steps", "skipped"} (through the binary)', async () => {
    const p = join(dir, 'train.log');
    await writeFile(p, `${verlLog(0, 9)}some warning noise\n`);
    const res = spawnSync(
      process.execPath,
      [join(ROOT, 'bin', 'arlarena.mjs'), 'import', p, '--json', '--tags', 'a,b', '--data-dir', join(dir, 'data')],
      { cwd: ROOT, encoding: 'utf8', timeout: 60_000 },
    );
    expect(res.stderr).toBe('');
    expect(res.status).toBe(0);
    const lines = res.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const r = JSON.parse(lines[0]);
    expect(Object.keys(r).sort()).toEqual(['format', 'runIds', 'skipped', 'steps']);
    expect(r).toMatchObject({ format: 'verl-console', steps: 10, runIds: [expect.stringMatching(/^[A-Za-z0-9_-]+$/)] });
    const rec = JSON.parse(await readFile(join(dir, 'data', 'runs', r.runIds[0], 'run.json'), 'utf8'));
    expect(rec).toMatchObject({ kind: 'imported', tags: ['a', 'b'], status: 'completed' });
  });

  it('a second import exits 1 naming the run that holds it; --again imports it; an unknown format exits 1 naming the formats', async () => {
    const data = join(dir, 'data');
    const p = join(dir, 'train.log');
    await writeFile(p, verlLog(0, 4));
    const a = ctxFor(data);
    expect(await importCommand.run([p], a.ctx)).toBe(0);
    expect(a.out()).toMatch(/^imported "train.log" as run (\S+): steps 0–4 \(verl-console, verl\); \d+ alerts?/);
    const id = /as run (\S+):/.exec(a.out())![1];
    const b = ctxFor(data);
    expect(await importCommand.run([p, '--json'], b.ctx)).toBe(1);
    expect(JSON.parse(b.out())).toEqual({ runIds: [], format: 'verl-console', steps: 0, skipped: {}, duplicateOf: [id] });
    expect(b.err()).toContain(`already imported as run ${id} (same SHA-256); pass --again`);
    const c = ctxFor(data);
    expect(await importCommand.run([p, '--again', '--name', 'second'], c.ctx)).toBe(0);
    expect(c.out()).toMatch(/^imported "second" as run /);
    const notes = join(dir, 'notes.txt');
    await writeFile(notes, 'hello\nworld\n');
    const d = ctxFor(data);
    expect(await importCommand.run([notes], d.ctx)).toBe(1);
    expect(d.err()).toMatch(
      /refused: .*notes\.txt is in no known format .*formats tried: verl-console, .*, bundle\); nothing was imported/,
    );
    await expect(importCommand.run([], ctxFor(data).ctx)).rejects.toThrow(/expected at least one PATH/);
  });
});

describe('arlarena show on an imported run', () => {
  it("prints the source (format, path, SHA-256, mapped keys) and each key's latest value with its step when the last record lacks it", async () => {
    const data = join(dir, 'data');
    const p = join(dir, 'train.log');
    // Validation every 5 steps: the last step (6) has no val key, so val/score_mean comes from step 5.
    await writeFile(
      p,
      `${verlLog(0, 4)}step:5 - actor/grad_norm:1.0 - val-core/openai/gsm8k/reward/mean@1:0.42\nstep:6 - actor/grad_norm:1.1 - critic/score/mean:0.6\n`,
    );
    const a = ctxFor(data);
    expect(await importCommand.run([p], a.ctx)).toBe(0);
    const id = /as run (\S+):/.exec(a.out())![1];
    const s = ctxFor(data);
    expect(await show.run([id], s.ctx)).toBe(0);
    expect(s.out()).toMatch(/source {4}verl-console \(verl\), \d+ bytes/);
    expect(s.out()).toContain(`${p}  sha256 `);
    expect(s.out()).toMatch(/mapped {4}.*actor\/entropy → actor\/entropy/);
    expect(s.out()).toMatch(/Validation score +0\.42 +\(val\/score_mean, step 5\)/);
    expect(s.out()).toMatch(/Task score +0\.6 +\(episode\/score_mean\)\n/);
  });
});

describe('arlarena follow', () => {
  it('--until-idle ends the follow; --json prints started, the alerts as they are raised, and stopped', async () => {
    const data = join(dir, 'data');
    const p = join(dir, 'live.log');
    await writeFile(p, verlLog(0, 9));
    const f = ctxFor(data);
    expect(await follow.run([p, '--until-idle', '0.5', '--poll-ms', '50', '--json'], f.ctx)).toBe(0);
    const events = f
      .out()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(events[0]).toMatchObject({ event: 'started', path: p });
    const runId = events[0].runId;
    expect(events.some((e) => e.event === 'alert' && e.alert.rule === 'non_finite' && e.alert.firstStep === 7)).toBe(true);
    expect(events.at(-1)).toMatchObject({ event: 'stopped', runId, status: 'completed', step: 9, steps: 10, runIds: [runId] });
    await expect(follow.run([p, '--until-idle', 'soon'], ctxFor(data).ctx)).rejects.toThrow(
      /--until-idle must be a positive number of seconds, got "soon"/,
    );
  });
});
