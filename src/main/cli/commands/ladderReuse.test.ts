/**
 * `arlarena ladder` reusing runs from other studies' ledgers (app/studies/reuse.ts; runLadder's side is
 * reuse.test.ts): a ledger beside this study's (--out DIR) holding its runs, trained on the backend and K a run
 * gets on this machine, makes a ladder of arms train nothing; --no-reuse trains them; lines trained with another K
 * or that do not record their backend are trained, and the log says why and how to fill them. And the committed
 * rollout-mismatch study's fp32 arms resolve to the configs of the pressure ladder's level-1 cells of their preset,
 * so the one's runs are the other's.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { levelPlan, type LadderPlan } from '../../app/studies/ladder';
import { configHash, ledgerHeader, ledgerText, readLedger, type LedgerRecord } from '../../app/studies/ledger';
import { plannedBackend } from '../../app/studies/reuse';
import { detectComputeBackend } from '../../compute/detect';
import { machineWorkers } from '../../compute/gradPool';
import { appVersion, projectRoot } from '../../platform/appInfo';
import { RunStore } from '../../store/index';
import { testCliContext } from '../../testing/testContext';
import ladder, { ladderRunConfig } from './ladder';

describe('arlarena ladder: runs reused from another study', () => {
  let dir: string;
  const donorPlan: LadderPlan = {
    command: 'arlarena ladder --levels 0 --presets grpo --seeds 2 --steps 3 --episodes 2 --study donor',
    levels: [0],
    envs: ['sokoban'],
    presets: ['grpo'],
    seeds: [1, 2],
    steps: 3,
    model: null,
    sets: {},
    baseline: 'grpo',
    episodes: 2,
    fraction: 0.5,
    stopOnCollapse: true,
    arms: null,
  };
  const ARGS = ['--levels', '0', '--arms', 'g=grpo', '--seeds', '2', '--steps', '3', '--episodes', '2', '--study', 'mine'];
  const configOf = (seed: number) => ladderRunConfig(levelPlan(donorPlan, 0), { env: 'sokoban', preset: 'grpo', seed });
  // What such a run trains on here (compute.backend auto, K = 0): the machine's first backend and its cores.
  const here = () => plannedBackend(configOf(1), { training: detectComputeBackend().training, workers: machineWorkers() });
  /** The donor's lines, each with the config hash this checkout resolves for its run (as its run record would hold). */
  const donorLines = (): LedgerRecord[] =>
    donorPlan.seeds.map((seed) => ({
      level: 0,
      env: 'sokoban',
      preset: 'grpo',
      seed,
      runId: `donor-run-${seed}`,
      status: 'completed',
      steps: 3,
      collapseStep: null,
      censoredAt: 3,
      collapseReason: null,
      heldOutGreedy: 0.5,
      heldOutSampled: 0.5,
      finalTrainSuccess: 0.5,
      bestTrainSuccess: 0.5,
      firstCriticalStep: null,
      stepsToThreshold: 1,
      rolloutSecondsPerStep: 0.25,
      rolloutMismatch: null,
      wallSeconds: 12,
      appVersion: appVersion(),
      appCommit: 'abc123',
      backend: here(),
      configHash: configHash(configOf(seed)),
    }));
  const writeDonor = async (out: string, lines: LedgerRecord[]) => {
    await mkdir(join(out, 'donor'), { recursive: true });
    await writeFile(join(out, 'donor', 'ledger.jsonl'), ledgerText(ledgerHeader('donor', donorPlan, null), lines));
  };
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'arl-ladder-reuse-'));
    await writeDonor(join(dir, 'out'), donorLines());
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('takes the runs from the ledger beside it and trains nothing; --no-reuse trains them', async () => {
    // The trainer is a stand-in that fails at once (mock): what matters is which runs the ladder hands it.
    const spawned: string[] = [];
    const jobs = {
      spawn: (id: string) => {
        spawned.push(id);
        throw new Error('no trainer in this test');
      },
      validateConfig: () => [],
    };
    const c = testCliContext(join(dir, 'data'), { jobs });
    expect(await ladder.run([...ARGS, '--out', join(dir, 'out')], c.ctx)).toBe(0);
    expect(spawned).toEqual([]);
    expect(c.err()).toMatch(
      /level 0: g · sokoban · seed 2: reused run donor-run-2 \(sha256:[0-9a-f]{16}\) from study donor instead of training it/,
    );
    const mine = (await readLedger(join(dir, 'out', 'mine')))!.records;
    expect(mine.map((r) => [r.arm, r.seed, r.runId, r.reusedFrom])).toEqual([
      ['g', 1, 'donor-run-1', { study: 'donor', runId: 'donor-run-1' }],
      ['g', 2, 'donor-run-2', { study: 'donor', runId: 'donor-run-2' }],
    ]);
    const summary = JSON.parse(await readFile(join(dir, 'out', 'mine', 'summary.json'), 'utf8'));
    expect(summary.reused).toMatchObject({ runs: 2, from: [{ study: 'donor', runs: 2, cells: ['level 0 g · sokoban seeds 1,2'] }] });

    // --no-reuse: both runs go to the trainer
    const n = testCliContext(join(dir, 'data-no'), { jobs });
    expect(await ladder.run([...ARGS.slice(0, -1), 'mine-no', '--out', join(dir, 'out'), '--no-reuse'], n.ctx)).toBe(1);
    expect(n.err()).not.toMatch(/reused/);
    expect(spawned).toHaveLength(2);
    const store = await RunStore.open(join(dir, 'data-no'));
    try {
      expect((await store.listRuns()).map((r) => r.seed).sort()).toEqual([1, 2]);
    } finally {
      await store.close();
    }
  });

  it('a line trained with another K, or one that does not record its backend, is trained here; the log says why', async () => {
    const spawned: string[] = [];
    const jobs = {
      spawn: (id: string) => {
        spawned.push(id);
        throw new Error('no trainer in this test');
      },
      validateConfig: () => [],
    };
    const [one, two] = donorLines();
    const { backend: _b, ...bare } = one;
    const K = here().workers;
    await writeDonor(join(dir, 'out-old'), [bare, { ...two, backend: { ...two.backend!, workers: K + 1 } }]);
    const c = testCliContext(join(dir, 'data-old'), { jobs });
    expect(await ladder.run([...ARGS, '--out', join(dir, 'out-old')], c.ctx)).toBe(1);
    expect(spawned).toHaveLength(2);
    expect(c.err()).not.toMatch(/reused run/);
    expect(c.err()).toContain(
      'level 0: g · sokoban · seed 1: run donor-run-1 of study donor has its config hash but is not reused: its line does not ' +
        'record the backend and worker count it trained on (a ledger written before lines did); re-export it, which fills them ' +
        `from the run records: arlarena --data-dir <the data dir that holds its runs> ladder --study donor --export-ledger --out ${join(dir, 'out-old')}\n`,
    );
    expect(c.err()).toContain(
      `level 0: g · sokoban · seed 2: run donor-run-2 of study donor has its config hash but is not reused: ${K + 1} gradient workers there, ${K} here\n`,
    );
  });

  it('--no-reuse with --export-ledger is refused (it trains nothing)', async () => {
    const c = testCliContext(join(dir, 'data-x'));
    await expect(ladder.run(['--study', 'mine', '--export-ledger', '--no-reuse'], c.ctx)).rejects.toThrow(
      /--export-ledger reads the ladder as the data dir stores it and trains nothing: drop --no-reuse/,
    );
  });
});

describe('the committed studies', () => {
  it("the rollout-mismatch study's fp32 arms are the pressure ladder's level-1 runs of their preset (the same config hash)", async () => {
    const studies = join(projectRoot(), 'resources', 'studies');
    const mismatch = (await readLedger(join(studies, 'mismatch-sokoban')))!.header.plan;
    const pressure = (await readLedger(join(studies, 'ladder-sokoban')))!.header.plan;
    const hashes = (plan: typeof mismatch, e: { preset: string; arm?: string }) =>
      plan.seeds.map((seed) => configHash(ladderRunConfig(levelPlan(plan, 1), { env: 'sokoban', seed, ...e })));
    for (const preset of ['sampo', 'grpo']) {
      const fp32 = hashes(mismatch, { preset, arm: `${preset}-fp32` });
      expect(fp32).toEqual(hashes(pressure, { preset }));
      // and not those of the int8 arm (the comparison can fail)
      expect(hashes(mismatch, { preset, arm: `${preset}-int8` })[0]).not.toBe(fp32[0]);
    }
  });
});
