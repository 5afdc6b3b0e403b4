/**
 * `arlarena arena --study`: usage errors, and the study that survives a kill — a tiny study killed mid-run
 * (SIGKILL from the store's deterministic kill point, in a separate CLI process) and resumed gives the same
 * summary as an uninterrupted one (trained two runs at a time), and its runs' metric streams match step
 * for step.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deterministicPart } from '../../../../tests/tinyTrainer';
import { RunStore } from '../../store/runStore';
import { readStudy } from '../../app/studies/studyFiles';
import { testCliContext as ctx } from '../../testing/testContext';
import { tinyCliSets } from '../../testing/tinyCli';
import { UsageError } from '../types';
import arena from './arena';

const root = fileURLToPath(new URL('../../../../', import.meta.url));

/** The tiny model and batches, validation off. */
const TINY = tinyCliSets({ 'training.validateEvery': 0, 'training.valEpisodes': 1 });
const PLAN = ['--presets', 'grpo,gspo', '--seeds', '1', '--steps', '2', '--episodes', '3', ...TINY];

describe('arlarena arena: usage', () => {
  const bad: Array<[string[], RegExp]> = [
    [['--resume'], /--resume continues a study: add --study NAME/],
    [['--out', '/tmp/x'], /--out is where a study writes its summary: add --study NAME/],
    [['--study', '../up'], /--study: study name "..\/up": use 1–40 letters/],
    [['--presets', 'gspo,sampo'], /--baseline grpo: not among --presets \(gspo,sampo\)/],
    [['--presets', 'grpo,grpo'], /lists a name twice/],
    [['--threshold', '2'], /--threshold "2": expected a number in \[0, 1\]/],
    [['--parallel', '0'], /--parallel "0": expected an integer ≥ 1/],
    [['--study', 'nope', '--resume'], /no study "nope" in .*; start it with arlarena arena --study nope/],
  ];
  for (const [args, re] of bad) {
    it(args.join(' '), async () => {
      const c = ctx(join(tmpdir(), 'arl-arena-none'));
      await expect(arena.run(args, c.ctx)).rejects.toThrow(UsageError);
      await expect(arena.run(args, c.ctx)).rejects.toThrow(re);
    });
  }
});

describe('arlarena arena --study: killed mid-run and resumed = uninterrupted', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'arl-study-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('same summary, same metric streams; the killed run continues under its own id; a plan flag with --resume is refused', async () => {
    const data = join(dir, 'data');
    const out = join(dir, 'out');
    const clean = ctx(data);
    // The uninterrupted study trains its two runs side by side; the killed one trains them one by one.
    expect(await arena.run([...PLAN, '--study', 'clean', '--out', out, '--parallel', '2', '--json'], clean.ctx)).toBe(0);

    // The same plan in a separate CLI process that SIGKILLs itself just before renaming its second
    // checkpoint into place: the first run is then mid-run, with the step-1 checkpoint on disk.
    const killed = spawnSync(
      process.execPath,
      ['src/main/testing/cliKilled.mjs', '2', 'checkpoint-rename', '--data-dir', data, 'arena', ...PLAN, '--study', 'killed', '--out', out],
      {
        cwd: root,
        encoding: 'utf8',
        timeout: 120_000,
      },
    );
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    const before = await readStudy(data, 'killed');
    expect(before.entries.map((e) => [e.preset, e.runId !== null, e.outcome])).toEqual([
      ['grpo', true, null],
      ['gspo', false, null],
    ]);
    const killedRun = before.entries[0].runId!;
    const store = await RunStore.open(data);
    try {
      expect(await store.checkpointSteps(killedRun)).toEqual([1]);
    } finally {
      await store.close();
    }

    await expect(arena.run(['--study', 'killed', '--resume', '--steps', '5'], ctx(data).ctx)).rejects.toThrow(
      /--resume uses the plan stored with study "killed"; drop --steps/,
    );
    await expect(arena.run([...PLAN, '--study', 'killed'], ctx(data).ctx)).rejects.toThrow(
      /study "killed" already exists .*\(0 run\(s\) done\); continue it with --study killed --resume/,
    );
    const resumed = ctx(data);
    expect(await arena.run(['--study', 'killed', '--resume', '--out', out, '--json'], resumed.ctx)).toBe(0);

    const a = JSON.parse(await readFile(join(out, 'clean', 'summary.json'), 'utf8'));
    const b = JSON.parse(await readFile(join(out, 'killed', 'summary.json'), 'utf8'));
    expect(b.rows).toEqual(a.rows);
    expect(b.plan).toEqual(a.plan);
    expect(b.incomplete).toEqual([]);
    expect(b.command).toMatch(/^arlarena arena --presets grpo,gspo .* --study killed --out /);
    expect(
      a.rows.map((r: { preset: string; vsBaseline: { verdict: string } | null }) => [r.preset, r.vsBaseline?.verdict ?? null]),
    ).toEqual([
      ['grpo', null],
      ['gspo', 'not separable at 1 seed'],
    ]);
    expect(await readFile(join(out, 'killed', 'README.md'), 'utf8')).toMatch(/# Study killed[\s\S]*\| method \| held-out greedy %/);

    const after = await readStudy(data, 'killed');
    expect(after.entries[0].runId).toBe(killedRun);
    const cleanState = await readStudy(data, 'clean');
    const s2 = await RunStore.open(data);
    try {
      for (let i = 0; i < 2; i++) {
        const ma = deterministicPart(await s2.readMetrics(cleanState.entries[i].runId!));
        const mb = deterministicPart(await s2.readMetrics(after.entries[i].runId!));
        expect(mb.map((m) => m.step)).toEqual([1, 2]);
        expect(mb).toEqual(ma);
      }
      // --parallel 2 did train side by side: the second run was created before the first finished
      const [c0, c1] = await Promise.all(cleanState.entries.map((e) => s2.getRun(e.runId!)));
      expect(Date.parse(c1!.createdAt)).toBeLessThan(Date.parse(c0!.finishedAt!));
      // the streams carry weight-dependent numbers, so the equality above is not 0 = 0
      const ent = (await s2.readMetrics(after.entries[0].runId!)).map((m) => m.values['actor/entropy']);
      expect(ent.every(Number.isFinite) && ent[0] !== ent[1]).toBe(true);
    } finally {
      await s2.close();
    }

    // A finished study resumes to the same summary without training anything.
    const again = ctx(data);
    expect(await arena.run(['--study', 'killed', '--resume', '--out', out], again.ctx)).toBe(0);
    expect(again.err()).not.toMatch(/resuming|\] grpo · sokoban · seed 1\n/);
    expect(JSON.parse(await readFile(join(out, 'killed', 'summary.json'), 'utf8'))).toEqual(b);
  }, 240_000);
});
