/**
 * `arlarena ladder --resume` from a committed ledger on a data dir without the ladder (a fresh clone), and the
 * refusals of a ledger written under another plan, major version or config; `--export-ledger`'s usage. The ledger's
 * own format and the rows from it are ledger.test.ts; a tiny ladder exported and resumed end to end is
 * ladder.integration.test.ts.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { levelPlan, storedLadderLevels } from '../../app/studies/ladder';
import { ladderInfo } from '../../app/studies/ladderInfo';
import { ledgerHeader, ledgerPlanOf, ledgerText, readLedger, type LedgerRecord } from '../../app/studies/ledger';
import { readStudy } from '../../app/studies/studyFiles';
import { appVersion } from '../../platform/appInfo';
import { RunStore } from '../../store/index';
import { smallLadder, smallLadderRecords } from '../../testing/ladderPlan';
import { LADDER_LEVEL, constructedLadderPlan, finishedConstructedLadder } from '../../testing/ladderRuns';
import { testCliContext } from '../../testing/testContext';
import ladder, { ladderRunConfig } from './ladder';

/** Runs `arlarena ladder ARGS` on `dataDir`: its exit code, stdout and stderr. */
async function run(args: string[], dataDir: string): Promise<{ code: number; out: string; err: string }> {
  const c = testCliContext(dataDir);
  const code = await ladder.run(args, c.ctx);
  return { code, out: c.out(), err: c.err() };
}

// A ladder continued from its committed ledger on a data dir without it (a fresh clone): the ledger's runs are done,
// nothing trains when it holds them all; a plan, version or config that differs is refused with the fix.
describe('--resume from a committed ledger', () => {
  let dir: string;
  const { args: ARGS, plan } = smallLadder('lg');
  /** The ledger's runs (smallLadderRecords: each with this checkout's config hash); gspo seed 2 fell at step 2. */
  const records = () => smallLadderRecords(plan, (preset, seed) => preset === 'gspo' && seed === 2);
  const writeOut = async (name: string, recs: LedgerRecord[], extra = '') => {
    await mkdir(join(dir, name, 'lg'), { recursive: true });
    await writeFile(join(dir, name, 'lg', 'ledger.jsonl'), ledgerText(ledgerHeader('lg', plan, null), recs) + extra);
    return join(dir, name);
  };
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'arl-ladder-ledger-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('takes every ledger run as done, trains nothing, and writes the summary from the ledger', async () => {
    const out = await writeOut('out', records());
    const r = await run([...ARGS, '--resume', '--out', out], join(dir, 'data'));
    expect(r.code).toBe(0);
    expect(r.err).toContain('level 0: 4 of 4 runs from the committed ledger');
    const summary = JSON.parse(await readFile(join(out, 'lg', 'summary.json'), 'utf8'));
    expect(summary.rows.map((x: { preset: string; seeds: number; medianCollapseStep: number | null }) => [x.preset, x.seeds])).toEqual([
      ['grpo', 2],
      ['gspo', 2],
    ]);
    expect(summary.rows[1].collapsedShare.mean).toBe(0.5);
    expect(summary.progress).toEqual([{ level: 0, done: 4, planned: 4 }]);
    const store = await RunStore.open(join(dir, 'data'));
    try {
      expect(await store.listRuns()).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('--study NAME --resume alone continues it under the plan in the ledger (no flag repeated)', async () => {
    const out = await writeOut('out-bare', records());
    const r = await run(['--study', 'lg', '--out', out, '--resume'], join(dir, 'data-bare'));
    expect(r.code).toBe(0);
    expect(r.err).toContain('level 0: 4 of 4 runs from the committed ledger');
    // the level was made under the ledger's plan, not the bare command's defaults (8 seeds, 100 episodes, 4 presets)
    const level = await readStudy(join(dir, 'data-bare'), 'lg-p0');
    expect(level.plan).toMatchObject({ command: plan.command, presets: ['grpo', 'gspo'], seeds: [1, 2], steps: 3, episodes: 2 });
    const summary = JSON.parse(await readFile(join(out, 'lg', 'summary.json'), 'utf8'));
    expect(summary.command).toBe(plan.command);
    expect(summary.progress).toEqual([{ level: 0, done: 4, planned: 4 }]);
  });

  it('resumed with another --out, the ledger moves there whole: its lines of runs the data dir lacks too', async () => {
    // data-bare took all four runs from out-bare's ledger (the test before): none is in its run store
    const moved = join(dir, 'out-moved');
    const r = await run(['--study', 'lg', '--out', moved, '--resume'], join(dir, 'data-bare'));
    expect(r.code).toBe(0);
    expect(r.err).toContain(
      `ladder "lg": its ledger moves from ${join(dir, 'out-bare', 'lg', 'ledger.jsonl')} to ${join(moved, 'lg', 'ledger.jsonl')}`,
    );
    expect(await readFile(join(moved, 'lg', 'ledger.jsonl'), 'utf8')).toBe(
      await readFile(join(dir, 'out-bare', 'lg', 'ledger.jsonl'), 'utf8'),
    );
    expect(JSON.parse(await readFile(join(moved, 'lg', 'summary.json'), 'utf8')).progress).toEqual([{ level: 0, done: 4, planned: 4 }]);
    expect((await readStudy(join(dir, 'data-bare'), 'lg-p0')).reportDir).toBe(join(moved, 'lg'));
  });

  it('a torn last line is reported and left out', async () => {
    const out = await writeOut('out-torn', records(), '{"level":0,"env":"sokoban","preset":"gspo","se');
    const r = await run([...ARGS, '--resume', '--out', out], join(dir, 'data-torn'));
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/ledger\.jsonl line 6 \(the last\) is not a whole run record \(not JSON/);
  });

  it('another plan, another major version or another config of a run is refused, naming it and the fix', async () => {
    const out = await writeOut('out-plan', records());
    await expect(run([...ARGS, '--resume', '--out', out, '--seeds', '3'], join(dir, 'd1'))).rejects.toThrow(
      new RegExp(
        '^ladder "lg" was started with another plan than this --resume gives: --seeds: 3 here, 2 when it was started\\. ' +
          `Fix: drop --seeds \\(arlarena ladder --study lg --out ${out} --resume continues it with the plan it was started with\\), ` +
          'or start a new ladder under another --study name',
      ),
    );
    await expect(run([...ARGS, '--resume', '--out', out, '--presets', 'grpo,sampo', '--steps', '4'], join(dir, 'd1'))).rejects.toThrow(
      /--presets: grpo,sampo here, grpo,gspo when it was started; --steps: 4 here, 3 when it was started\. Fix: drop --presets, --steps /,
    );
    await expect(run([...ARGS, '--out', out], join(dir, 'd1'))).rejects.toThrow(
      /ladder "lg" has a ledger \(.*, 4 finished runs\); continue it with --study lg --resume, or choose another name/,
    );
    const major = await writeOut(
      'out-major',
      records().map((r) => ({ ...r, appVersion: '9.0.0' })),
    );
    await expect(run([...ARGS, '--resume', '--out', major], join(dir, 'd2'))).rejects.toThrow(
      /4 run\(s\) of its ledger .* were trained by ARLArena Lab 9\.0\.0 \(level 0 · grpo · sokoban · seed 1, commit abc123\), this is .*another major version.* Fix: finish the ladder with a checkout of that version \(git checkout abc123\)/,
    );
    const changed = await writeOut(
      'out-config',
      records().map((r) => (r.preset === 'gspo' && r.seed === 2 ? { ...r, configHash: 'sha256:0000000000000000' } : r)),
    );
    await expect(run([...ARGS, '--resume', '--out', changed], join(dir, 'd3'))).rejects.toThrow(
      /1 run\(s\) of its ledger .* another config than this checkout resolves for them \(level 0 · gspo · sokoban · seed 2: sha256:0000000000000000 in the ledger, sha256:[0-9a-f]{16} here\): a preset, a pressure level or a default changed since\. Fix: finish the ladder with the checkout that trained them \(git checkout abc123\)/,
    );
    // nothing was made for any refused resume
    for (const d of ['d1', 'd2', 'd3']) expect(await storedLadderLevels(join(dir, d), 'lg')).toEqual([]);
  });

  it('--export-ledger trains nothing and takes no training flags; a data dir without the ladder has nothing to export', async () => {
    await expect(run(['--study', 'lg', '--export-ledger', '--seeds', '2'], join(dir, 'd4'))).rejects.toThrow(
      /--export-ledger reads the ladder as the data dir stores it and trains nothing: drop --seeds/,
    );
    await expect(run(['--export-ledger'], join(dir, 'd4'))).rejects.toThrow(
      /--export-ledger writes the ledger of a ladder: add --study NAME/,
    );
    await expect(run(['--study', 'lg', '--export-ledger', '--out', join(dir, 'out-x')], join(dir, 'd4'))).rejects.toThrow(
      /no ladder "lg" in .*d4 \(no study lg-p<level>\); nothing to export/,
    );
  });
});

// A ladder the data dir holds, continued by `--study NAME --resume` alone: its level study's plan, not the bare
// command's defaults; a plan flag given must equal it; the ledger goes where --out says and the ladder remembers it.
describe('--resume of a ladder in the data dir', () => {
  let dir: string;
  let data: string;
  const started = constructedLadderPlan('cl');
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'arl-ladder-resume-'));
    data = join(dir, 'data');
    // its runs' records hold the configs this checkout resolves for them (the ledger's hash check reads them)
    await finishedConstructedLadder(data, 'cl', {
      appVersion: appVersion(),
      config: (preset, seed) => ladderRunConfig(levelPlan(started, LADDER_LEVEL), { env: 'sokoban', preset, seed }),
    });
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const ledgerFileShown = async () => {
    const states = [await readStudy(data, 'cl-p2')];
    const info = await ladderInfo(states, 'cl', { getRun: async () => undefined, readMetrics: async () => [] });
    return info!.ledgerFile;
  };

  it('takes the stored plan, writes the ledger at --out, and ladders.get names that file after each --out', async () => {
    const r = await run(['--study', 'cl', '--resume', '--out', join(dir, 'out1')], data);
    expect(r.code).toBe(0);
    const ledger = (await readLedger(join(dir, 'out1', 'cl')))!;
    expect(ledger.header.plan).toEqual(ledgerPlanOf(started));
    expect(ledger.records).toHaveLength(6);
    expect((await readStudy(data, 'cl-p2')).reportDir).toBe(join(dir, 'out1', 'cl'));
    expect(await ledgerFileShown()).toBe(join(dir, 'out1', 'cl', 'ledger.jsonl'));
    // resumed again with another --out (the whole command repeated this time: the same values are no conflict)
    const again = await run(
      [
        '--study',
        'cl',
        '--resume',
        '--out',
        join(dir, 'out2'),
        '--presets',
        'grpo,cispo',
        '--seeds',
        '3',
        '--steps',
        '12',
        '--episodes',
        '4',
      ],
      data,
    );
    expect(again.code).toBe(0);
    expect((await readLedger(join(dir, 'out2', 'cl')))!.records).toHaveLength(6);
    // the command the plan keeps is the first one (its --out is not where the ledger is now)
    expect((await readStudy(data, 'cl-p2')).plan.command).toBe(started.command);
    expect(await ledgerFileShown()).toBe(join(dir, 'out2', 'cl', 'ledger.jsonl'));
  });

  it('a plan flag that differs is refused, each named with both values and the fix; nothing is written', async () => {
    const before = await readFile(join(data, 'studies', 'cl-p2', 'study.json'), 'utf8');
    const out = join(dir, 'out-refused');
    await expect(
      run(
        [
          '--study',
          'cl',
          '--resume',
          '--out',
          out,
          '--episodes',
          '5',
          '--set',
          'optim.lr=0.001',
          '--on-collapse',
          'continue',
          '--model',
          'small',
        ],
        data,
      ),
    ).rejects.toThrow(
      new RegExp(
        '^ladder "cl" was started with another plan than this --resume gives: --model: small here, none \\(each preset\'s\\) when it was started; ' +
          '--set: optim.lr=0.001 here, none when it was started; --episodes: 5 here, 4 when it was started; ' +
          '--on-collapse: continue here, stop when it was started\\. Fix: drop --model, --set, --episodes, --on-collapse ' +
          `\\(arlarena ladder --study cl --out ${out} --resume continues it with the plan it was started with\\)`,
      ),
    );
    await writeFile(join(dir, 'arms.txt'), '# the arms\ng=grpo\nc=cispo vs g\n');
    await expect(run(['--study', 'cl', '--resume', '--out', out, '--arms-file', join(dir, 'arms.txt')], data)).rejects.toThrow(
      /--arms-file: g=grpo c=cispo vs g here, none \(presets grpo,cispo\) when it was started\. Fix: drop --arms-file /,
    );
    await expect(
      run(['--study', 'cl', '--resume', '--out', out, '--presets', 'grpo', '--baseline', 'cispo', '--fraction', '0.25'], data),
    ).rejects.toThrow(
      /--presets: grpo here, grpo,cispo when it was started; --baseline: cispo here, grpo when it was started; --fraction: 0\.25 here, 0\.5 when it was started\./,
    );
    expect(await readFile(join(data, 'studies', 'cl-p2', 'study.json'), 'utf8')).toBe(before);
    expect(await readLedger(join(out, 'cl'))).toBeNull();
  });

  it("--out naming another ladder's ledger of the name is refused: the data dir's plan and the ledger's differ", async () => {
    const other = join(dir, 'out-other', 'cl');
    await mkdir(other, { recursive: true });
    await writeFile(join(other, 'ledger.jsonl'), ledgerText(ledgerHeader('cl', { ...started, episodes: 8 }, null), []));
    await expect(run(['--study', 'cl', '--resume', '--out', join(dir, 'out-other')], data)).rejects.toThrow(
      /^ladder "cl": its ledger \(.*out-other\/cl\/ledger\.jsonl\) holds runs trained under another plan than ladder "cl" in .*data was started with: episodes 8 in the ledger, 4 here\. Fix: give --out the folder of this ladder's own ledger/,
    );
  });
});
