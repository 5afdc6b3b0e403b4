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
import { resolveConfig } from '../../../core/config/index';
import { storedLadderLevels } from '../../app/studies/ladder';
import { configHash, ledgerHeader, ledgerText, type LedgerRecord } from '../../app/studies/ledger';
import { appVersion } from '../../platform/appInfo';
import { RunStore } from '../../store/index';
import { testLadderPlan } from '../../testing/ladderPlan';
import { testCliContext } from '../../testing/testContext';
import ladder from './ladder';

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
  const ARGS = ['--levels', '0', '--presets', 'grpo,gspo', '--seeds', '2', '--steps', '3', '--episodes', '2', '--study', 'lg'];
  const plan = testLadderPlan({
    command: `arlarena ladder ${ARGS.join(' ')}`,
    levels: [0],
    presets: ['grpo', 'gspo'],
    seeds: [1, 2],
    steps: 3,
    episodes: 2,
  });
  /** The ledger's runs, with the config hash this checkout resolves for each (as `arlarena ladder` does). */
  const records = (): LedgerRecord[] =>
    plan.presets.flatMap((preset) =>
      plan.seeds.map((seed) => ({
        level: 0,
        env: 'sokoban',
        preset,
        seed,
        runId: `run-${preset}-${seed}`,
        status: 'completed' as const,
        steps: 3,
        collapseStep: preset === 'gspo' && seed === 2 ? 2 : null,
        censoredAt: preset === 'gspo' && seed === 2 ? null : 3,
        collapseReason: preset === 'gspo' && seed === 2 ? 'first critical alert at step 2' : null,
        heldOutGreedy: 0.5,
        heldOutSampled: 0.5,
        finalTrainSuccess: 0.5,
        bestTrainSuccess: 0.5,
        firstCriticalStep: preset === 'gspo' && seed === 2 ? 2 : null,
        stepsToThreshold: 1,
        rolloutSecondsPerStep: 0.25 * seed,
        rolloutMismatch: null,
        wallSeconds: 12,
        appVersion: appVersion(),
        appCommit: 'abc123',
        configHash: configHash(resolveConfig(preset, 'sokoban', { 'training.pressure': 0, seed, 'training.steps': 3 }).config),
      })),
    );
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

  it('a torn last line is reported and left out', async () => {
    const out = await writeOut('out-torn', records(), '{"level":0,"env":"sokoban","preset":"gspo","se');
    const r = await run([...ARGS, '--resume', '--out', out], join(dir, 'data-torn'));
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/ledger\.jsonl line 6 \(the last\) is not a whole run record \(not JSON/);
  });

  it('another plan, another major version or another config of a run is refused, naming it and the fix', async () => {
    const out = await writeOut('out-plan', records());
    await expect(run([...ARGS, '--resume', '--out', out, '--seeds', '3'], join(dir, 'd1'))).rejects.toThrow(
      /ladder "lg": its ledger \(.*ledger\.jsonl\) holds runs trained under another plan: seeds 1,2 in the ledger, 1\.\.3 here\. Fix: repeat the ladder's command with --resume \(arlarena ladder --levels 0 .* --resume\), or start a new ladder under another --study name/,
    );
    await expect(run([...ARGS, '--resume', '--out', out, '--presets', 'grpo,sampo', '--steps', '4'], join(dir, 'd1'))).rejects.toThrow(
      /presets grpo,gspo in the ledger, grpo,sampo here; steps 3 in the ledger, 4 here\./,
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
