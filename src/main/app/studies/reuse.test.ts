/**
 * A ladder takes a run another study's ledger holds finished instead of training it (reuse.ts), through runLadder
 * on constructed ladders: a donor study's runs are in a run store and its ledger is written from them (each line
 * with its run record's backend); a second ladder of arms that train the same runs on the same backend reuses them
 * all — nothing goes to the trainer, the lines are the donor's copied and marked, the summary's rows are those of the
 * trained runs — and keeps them when resumed. A different config hash, seed, major version, held-out episodes,
 * collapse rule, training backend, rollout engine or K, a donor line that does not record its backend, or no donors
 * (--no-reuse), trains instead. The trainer is a stand-in that fails at once (mock): what matters is which runs the
 * ladder hands it.
 */
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunConfig } from '../../../core/config/index';
import type { ComputeBackendInfo } from '../../../shared/api';
import { ladderRows, type LadderRunOutcome } from '../../../core/stats/index';
import { RunStore } from '../../store/index';
import { appVersion } from '../../platform/appInfo';
import { LedgerKeeper, armBaselines, ladderRun, ladderSummary, type LadderPlan } from './ladder';
import { ledgerHeader, readLedger, writeLedger, type LedgerBackend, type LedgerRecord } from './ledger';
import { findReusable, plannedBackend, readDonorLedgers, type DonorLedger } from './reuse';
import { readStudy, writeStudy, type StudyEntry, type StudyPlan } from './studyFiles';
import { LADDER_LEVEL, constructedLadderPlan, runStandInLadder, storeConstructedRuns } from '../../testing/ladderRuns';

const LEVEL = LADDER_LEVEL;

/** What the donor's runs trained on (their run records' backend), and what the reusing ladders would train on. */
const HERE: LedgerBackend = { training: 'wasm', rollout: 'tfjs-wasm', workers: 2 };
const RECORDED: ComputeBackendInfo = { ...HERE, detail: 'tfjs-wasm (SIMD, 1 thread); rollouts on tfjs', available: ['wasm'] };

const donorPlan = constructedLadderPlan('donor');

/** The reusing ladder: arms that are the donor's presets with no overrides (the same runs), under other names. */
const armsPlan: LadderPlan = {
  ...donorPlan,
  command: 'arlarena ladder --levels 2 --seeds 3 --steps 12 --episodes 4 --arms grpo-a=grpo "cispo-a=cispo vs grpo-a" --study mine',
  baseline: 'grpo-a',
  arms: [
    { name: 'grpo-a', preset: 'grpo', sets: {}, vs: null },
    { name: 'cispo-a', preset: 'cispo', sets: {}, vs: 'grpo-a' },
  ],
};

/** The donor's runs in a store, by this lab's version, their records with `backend` (null: none, the store's 'unknown'). */
const trainedDonor = (dataDir: string, backend: ComputeBackendInfo | null = RECORDED): Promise<StudyEntry[]> =>
  storeConstructedRuns(dataDir, { appVersion: appVersion(), ...(backend ? { backend } : {}) });

/**
 * runLadder of `plan` as `name` on `dataDir`, reporting into `studies/name`, with a stand-in trainer (mock); its runs
 * would train on `here` (default HERE).
 */
async function ladder(
  plan: LadderPlan,
  o: {
    dataDir: string;
    studies: string;
    name: string;
    resume?: boolean;
    reuseFrom: readonly DonorLedger[];
    donors?: readonly DonorLedger[];
    here?: LedgerBackend;
  },
) {
  const reportDir = join(o.studies, o.name);
  const result = await runStandInLadder({
    dataDir: o.dataDir,
    name: o.name,
    plan,
    resume: o.resume ?? false,
    reportDir,
    ledger: await readLedger(reportDir),
    reuse: { from: o.reuseFrom, backendOf: () => o.here ?? HERE },
    ...(o.donors ? { donors: o.donors } : {}),
  });
  return { ...result, reportDir };
}

describe('reusing another study’s runs', () => {
  let dir: string;
  let studies: string;
  let donorLines: LedgerRecord[];
  let fromStore: LadderRunOutcome[];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'arl-reuse-'));
    studies = join(dir, 'studies');
    const entries = await trainedDonor(join(dir, 'donor-data'));
    const keeper = new LedgerKeeper(join(dir, 'donor-data'), join(studies, 'donor'), 'donor', donorPlan, null);
    expect(await keeper.addFinished(LEVEL, { version: 1, name: 'donor-p2', createdAt: '', plan: {} as StudyPlan, entries })).toBe(6);
    await keeper.save();
    donorLines = [...(await readLedger(join(studies, 'donor')))!.records];
    // The trained runs' figures, as the arms' cells (grpo → grpo-a, cispo → cispo-a).
    fromStore = [];
    for (const e of entries) {
      const { outcome } = await ladderRun(join(dir, 'donor-data'), e, LEVEL, donorPlan.fraction);
      fromStore.push({ ...outcome, arm: `${e.preset}-a` });
    }
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a matching run is taken, not trained: its line copied and marked, the summary rows those of the trained runs', async () => {
    // the donor's lines carry what its run records say the runs trained on
    expect(donorLines.map((l) => l.backend)).toEqual(donorLines.map(() => HERE));
    const donors = await readDonorLedgers([studies], join(studies, 'mine'), () => undefined);
    expect(donors.map((d) => d.study)).toEqual(['donor']);
    // a study of this one's name elsewhere is a copy of it, not a donor (not even read); a ledger that does not
    // parse is left out, and said
    for (const study of ['mine', 'bad']) {
      await mkdir(join(dir, 'elsewhere', study), { recursive: true });
      await writeFile(join(dir, 'elsewhere', study, 'ledger.jsonl'), 'not a ledger\n');
    }
    const said: string[] = [];
    const both = await readDonorLedgers([studies, join(dir, 'elsewhere')], join(studies, 'mine'), (l) => said.push(l));
    expect(both.map((d) => d.study)).toEqual(['donor']);
    expect(said).toEqual([
      expect.stringMatching(/^reuse: .*bad.ledger\.jsonl line 1: not a ladder ledger's header .*; its runs are not reused$/),
    ]);
    const r = await ladder(armsPlan, { dataDir: join(dir, 'mine-data'), studies, name: 'mine', reuseFrom: donors });
    expect(r.spawned).toEqual([]);
    expect(r.complete).toBe(true);
    const cispo1 = donorLines.find((x) => x.preset === 'cispo' && x.seed === 1)!;
    expect(r.lines).toContain(
      `level 2: cispo-a · sokoban · seed 1: reused run ${cispo1.runId} (${cispo1.configHash}) from study donor instead of training it`,
    );
    expect(r.lines).toContain("level 2: 6 of 6 runs reused from other studies' ledgers");
    const mine = (await readLedger(r.reportDir))!.records;
    expect(mine).toHaveLength(6);
    for (const line of mine) {
      const d = donorLines.find((x) => x.preset === line.preset && x.seed === line.seed)!;
      // every outcome and provenance field unchanged; the cell is this ladder's arm
      expect(line).toEqual({ ...d, arm: `${d.preset}-a`, reusedFrom: { study: 'donor', runId: d.runId } });
    }
    const opts = { baseline: armsPlan.baseline, vs: armBaselines(armsPlan) };
    const rows = ladderRows(fromStore, opts);
    // not a vacuous equality: a collapse, censoring and a test against the baseline arm
    expect(rows.map((x) => [x.arm, x.collapsedShare.mean, x.vsBaseline?.against ?? null])).toEqual([
      ['grpo-a', 1 / 3, null],
      ['cispo-a', 2 / 3, 'grpo-a'],
    ]);
    expect(ladderRows(r.outcomes, opts)).toEqual(rows);
    const summary = JSON.parse(await readFile(join(r.reportDir, 'summary.json'), 'utf8'));
    expect(summary.rows).toEqual(JSON.parse(JSON.stringify(ladderSummary('mine', armsPlan, rows).rows)));
    expect(summary.reused).toMatchObject({
      runs: 6,
      from: [{ study: 'donor', runs: 6, cells: ['level 2 grpo-a · sokoban seeds 1..3', 'level 2 cispo-a · sokoban seeds 1..3'] }],
    });
    const readme = await readFile(join(r.reportDir, 'README.md'), 'utf8');
    expect(readme).toContain(
      'Reused, not trained again: 6 runs, 6 from study donor (level 2 grpo-a · sokoban seeds 1..3; level 2 cispo-a · sokoban seeds 1..3).',
    );
    // the level's study.json has the entries done, with the donor's run ids (not in this data dir)
    const store = await RunStore.open(join(dir, 'mine-data'));
    try {
      expect(await store.listRuns()).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('a resumed study keeps its reused lines, with or without the donor, on its data dir or a fresh one', async () => {
    const before = await readFile(join(studies, 'mine', 'ledger.jsonl'), 'utf8');
    const summaryBefore = await readFile(join(studies, 'mine', 'summary.json'), 'utf8');
    for (const dataDir of [join(dir, 'mine-data'), join(dir, 'mine-fresh')]) {
      const r = await ladder(armsPlan, { dataDir, studies, name: 'mine', resume: true, reuseFrom: [] });
      expect(r.spawned).toEqual([]);
      expect(r.complete).toBe(true);
      expect(r.lines[0]).toBe('level 2: 6 of 6 runs from the committed ledger');
      expect(await readFile(join(studies, 'mine', 'ledger.jsonl'), 'utf8')).toBe(before);
      expect(await readFile(join(studies, 'mine', 'summary.json'), 'utf8')).toBe(summaryBefore);
    }
  });

  // --export-ledger once wrote only the runs of the data dir, so a ledger lost its reused lines, and a resume
  // then summarised without them (no baseline row; the other rows read "baseline").
  it('a reused run whose line the ledger lacks gets it again from its donor, on export and on resume', async () => {
    const mine = (await readLedger(join(studies, 'mine')))!.records;
    const data = join(dir, 'lost-data');
    await cp(join(dir, 'mine-data'), data, { recursive: true });
    const donors = await readDonorLedgers([studies], join(dir, 'lost', 'mine'), () => undefined);
    // export: the data dir's finished runs (none here: all six reused) and the reused entries' donor lines
    const state = await readStudy(data, 'mine-p2');
    const keeper = new LedgerKeeper(data, join(dir, 'lost', 'mine'), 'mine', armsPlan, null);
    expect(await keeper.addFinished(LEVEL, state)).toBe(0);
    expect(keeper.restoreReused(LEVEL, state, donors)).toEqual({ restored: 6, missing: [] });
    await keeper.save();
    expect((await readLedger(join(dir, 'lost', 'mine')))!.records).toEqual(mine);
    // resume into a folder without a ledger (the repro: the ledger deleted, or exported without these lines), the
    // entries as a study stored before entries kept reusedFrom (only their run ids and figures)
    await writeStudy(data, { ...state, entries: state.entries.map(({ reusedFrom: _r, ...e }) => e) });
    const r = await ladder(armsPlan, { dataDir: data, studies: join(dir, 'lost2'), name: 'mine', resume: true, reuseFrom: [], donors });
    expect(r.spawned).toEqual([]);
    expect(r.lines).toContain("level 2: 6 reused runs' lines the ledger lacked were copied again from their donors' ledgers");
    expect((await readLedger(r.reportDir))!.records).toEqual(mine);
    const opts = { baseline: armsPlan.baseline, vs: armBaselines(armsPlan) };
    expect(ladderRows(r.outcomes, opts).map((x) => [x.arm, x.vsBaseline?.against ?? null])).toEqual([
      ['grpo-a', null],
      ['cispo-a', 'grpo-a'],
    ]);
  });

  it('a reused run whose donor no longer holds its line is not summarised silently: said, and it trains again', async () => {
    const data = join(dir, 'gone-data');
    await cp(join(dir, 'mine-data'), data, { recursive: true });
    const grpo1 = donorLines.find((x) => x.preset === 'grpo' && x.seed === 1)!;
    const donors = await donorWith(
      'd-gone',
      donorPlan,
      donorLines.filter((l) => l !== grpo1),
    );
    const r = await ladder(armsPlan, { dataDir: data, studies: join(dir, 'gone'), name: 'mine', resume: true, reuseFrom: [], donors });
    expect(r.lines).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^level 2: grpo-a · sokoban · seed 1: reused run ${grpo1.runId} from study donor, but study donor's ledger \\(.*d-gone.donor.ledger\\.jsonl\\) no longer holds the line of run ${grpo1.runId} \\(seed 1\\), so its ledger line cannot be written; it trains again$`,
        ),
      ),
    );
    expect(r.spawned).toHaveLength(1);
    expect(r.complete).toBe(false);
    expect((await readLedger(r.reportDir))!.records).toHaveLength(5);
  });

  /** A donor study `donor` in a folder of its own, with these lines under this plan. */
  const donorWith = async (name: string, plan: LadderPlan, lines: LedgerRecord[]): Promise<DonorLedger[]> => {
    const root = join(dir, name);
    await mkdir(join(root, 'donor'), { recursive: true });
    await writeLedger(join(root, 'donor'), ledgerHeader('donor', plan, null), lines);
    return readDonorLedgers([root], join(root, 'none'), () => undefined);
  };
  const onePlan: LadderPlan = { ...armsPlan, seeds: [1], arms: [armsPlan.arms![0]] };
  const cases: Array<{ why: string; plan?: LadderPlan; here?: LedgerBackend; donor: () => Promise<DonorLedger[]>; miss: RegExp | null }> = [
    {
      why: 'another config hash (an arm with an override)',
      plan: { ...onePlan, arms: [{ name: 'grpo-a', preset: 'grpo', sets: { 'optim.lr': 0.001 }, vs: null }] },
      donor: () => donorWith('d-hash', donorPlan, donorLines),
      miss: null,
    },
    {
      why: 'another seed (the same hash on a line of seed 2)',
      donor: () =>
        donorWith(
          'd-seed',
          donorPlan,
          donorLines.map((l) => (l.preset === 'grpo' && l.seed === 2 ? { ...l, configHash: donorLines[0].configHash } : l)).slice(1),
        ),
      miss: null,
    },
    {
      why: 'another major version',
      donor: () =>
        donorWith(
          'd-major',
          donorPlan,
          donorLines.map((l) => ({ ...l, appVersion: '9.0.0' })),
        ),
      miss: /^level 2: grpo-a · sokoban · seed 1: run \S+ of study donor has its config hash but is not reused: trained by ARLArena Lab 9\.0\.0, this is \d+\.\d+\.\d+/,
    },
    {
      why: 'other held-out episodes',
      donor: () => donorWith('d-episodes', { ...donorPlan, episodes: 8 }, donorLines),
      miss: /: held-out episodes 8 there, 4 here$/,
    },
    {
      why: 'another collapse rule',
      donor: () => donorWith('d-collapse', { ...donorPlan, fraction: 0.25, stopOnCollapse: false }, donorLines),
      miss: /: collapse fraction 0\.25 there, 0\.5 here; on collapse continue there, stop here$/,
    },
    {
      why: 'another training backend (auto resolves to native TensorFlow here)',
      here: { ...HERE, training: 'tensorflow' },
      donor: () => donorWith('d-training', donorPlan, donorLines),
      miss: /: run \S+ of study donor has its config hash but is not reused: trained on wasm there, tensorflow here$/,
    },
    {
      why: 'another rollout engine',
      here: { ...HERE, rollout: 'onnxruntime-cpu-int8' },
      donor: () => donorWith('d-rollout', donorPlan, donorLines),
      miss: /: rollouts on tfjs-wasm there, onnxruntime-cpu-int8 here$/,
    },
    {
      why: 'another worker count (K = 0 on a machine of 4 cores)',
      here: { ...HERE, workers: 4 },
      donor: () => donorWith('d-workers', donorPlan, donorLines),
      miss: /: 2 gradient workers there, 4 here$/,
    },
    {
      why: 'a donor line that does not record its backend (a ledger written before lines did)',
      donor: () =>
        donorWith(
          'd-nobackend',
          donorPlan,
          donorLines.map(({ backend: _b, ...l }) => l),
        ),
      miss: new RegExp(
        ': its line does not record the backend and worker count it trained on \\(a ledger written before lines did\\); ' +
          're-export it, which fills them from the run records: arlarena --data-dir <the data dir that holds its runs> ladder ' +
          '--study donor --export-ledger --out \\S+d-nobackend$',
      ),
    },
    { why: 'no donors (--no-reuse)', donor: async () => [], miss: null },
  ];
  for (const c of cases)
    it(`not reused, trained: ${c.why}`, async () => {
      const tag = c.why.replace(/\W+/g, '-');
      const r = await ladder(c.plan ?? onePlan, {
        dataDir: join(dir, `data-${tag}`),
        studies: join(dir, `studies-${tag}`),
        name: 'one',
        reuseFrom: await c.donor(),
        ...(c.here ? { here: c.here } : {}),
      });
      expect(r.spawned).toHaveLength(1);
      expect(r.complete).toBe(false);
      expect(r.lines.filter((l) => /reused run|runs reused/.test(l))).toEqual([]);
      const misses = r.lines.filter((l) => l.includes('is not reused'));
      if (c.miss) expect(misses).toEqual([expect.stringMatching(c.miss)]);
      else expect(misses).toEqual([]);
      expect((await readLedger(r.reportDir))!.records).toEqual([]);
    });
});

describe('the backend on a ledger line', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'arl-reuse-backend-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** The ledger --export-ledger writes (LedgerKeeper.addFinished) from a data dir whose run records have `backend`. */
  const exported = async (tag: string, backend: ComputeBackendInfo | null): Promise<LedgerRecord[]> => {
    const entries = await trainedDonor(join(dir, `${tag}-data`), backend);
    const keeper = new LedgerKeeper(join(dir, `${tag}-data`), join(dir, 'studies', tag), tag, donorPlan, null);
    await keeper.addFinished(LEVEL, { version: 1, name: `${tag}-p2`, createdAt: '', plan: {} as StudyPlan, entries });
    await keeper.save();
    return [...(await readLedger(join(dir, 'studies', tag)))!.records];
  };

  it('export fills it from the run record: training backend, rollout engine and K', async () => {
    const native: ComputeBackendInfo = { training: 'tensorflow', rollout: 'onnxruntime-cpu-int8', detail: 'x', available: [], workers: 1 };
    const lines = await exported('native', native);
    expect(lines).toHaveLength(6);
    expect(lines.map((l) => l.backend)).toEqual(lines.map(() => ({ training: 'tensorflow', rollout: 'onnxruntime-cpu-int8', workers: 1 })));
  });

  it('a record made before runs recorded K trained on one worker; a record that does not name its backend gives none', async () => {
    const old = await exported('old', { training: 'wasm', rollout: 'onnxruntime-cpu', detail: 'x', available: [] });
    expect(old[0].backend).toEqual({ training: 'wasm', rollout: 'onnxruntime-cpu', workers: 1 });
    const unknown = await exported('unknown', null);
    expect(unknown).toHaveLength(6);
    expect(unknown.map((l) => 'backend' in l)).toEqual(unknown.map(() => false));
  });

  it('plannedBackend names what the training job resolves: auto, the rollout engine and K', () => {
    const here = { training: 'tensorflow', workers: 8 };
    const run = (compute: Partial<RunConfig['compute']>, source?: string) =>
      plannedBackend(
        {
          compute: { backend: 'auto', rolloutEngine: 'onnxruntime', workers: 0, ...compute } as RunConfig['compute'],
          model: (source ? { source } : {}) as RunConfig['model'],
        },
        here,
      );
    // auto is the machine's choice; native TensorFlow takes K = 1 for K = 0 (its kernels use every core)
    expect(run({})).toEqual({ training: 'tensorflow', rollout: 'onnxruntime-cpu', workers: 1 });
    expect(run({ backend: 'wasm', rolloutPrecision: 'int8' })).toEqual({ training: 'wasm', rollout: 'onnxruntime-cpu-int8', workers: 8 });
    expect(run({ backend: 'wasm', rolloutEngine: 'tfjs', workers: 3 })).toEqual({ training: 'wasm', rollout: 'tfjs-wasm', workers: 3 });
    expect(run({ backend: 'tensorflow-gpu', rolloutEngine: 'tfjs' })).toEqual({
      training: 'tensorflow-gpu',
      rollout: 'tfjs-tensorflow',
      workers: 1,
    });
    // a Hugging Face model trains on one thread whatever K asks
    expect(run({ backend: 'wasm', workers: 4 }, 'hf:/models/qwen')).toEqual({ training: 'wasm', rollout: 'onnxruntime-cpu', workers: 1 });
  });
});

describe('a reused line whose origin took its line out', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'arl-reuse-withdrawn-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const plan: LadderPlan = { ...donorPlan, presets: ['grpo'], seeds: [1] };
  const want = { level: LEVEL, env: 'sokoban', preset: 'grpo', seed: 1, configHash: 'sha256:00000000000000aa', backend: HERE };
  /** A finished line of grpo seed 1 at LEVEL, run `runId`, optionally copied from study `from`. */
  const line = (runId: string, from?: string): LedgerRecord => ({
    level: LEVEL,
    env: 'sokoban',
    preset: 'grpo',
    seed: 1,
    runId,
    ...(from ? { reusedFrom: { study: from, runId } } : {}),
    status: 'completed',
    steps: 12,
    collapseStep: null,
    censoredAt: 12,
    collapseReason: null,
    heldOutGreedy: 0.5,
    heldOutSampled: 0.5,
    finalTrainSuccess: 0.5,
    bestTrainSuccess: 0.5,
    firstCriticalStep: null,
    stepsToThreshold: null,
    rolloutSecondsPerStep: 1,
    rolloutMismatch: null,
    wallSeconds: 10,
    appVersion: appVersion(),
    appCommit: 'c0ffee',
    backend: HERE,
    configHash: want.configHash,
  });
  const study = async (root: string, name: string, lines: LedgerRecord[]) => {
    await mkdir(join(root, name), { recursive: true });
    await writeLedger(join(root, name), ledgerHeader(name, plan, null), lines);
  };

  it('is not taken from the study that copied it once the study that trained it no longer holds it', async () => {
    const root = join(dir, 'origin');
    // 'z' trained run-x, 'b' copied its line (b sorts first, so is asked first); then 'z' took its line out (the run
    // was trained again as run-y)
    await study(root, 'z', [line('run-y')]);
    await study(root, 'b', [line('run-x', 'z')]);
    const donors = await readDonorLedgers([root], join(root, 'mine'), () => undefined);
    const found = findReusable(donors, want, plan, appVersion());
    // z's run-y is the one taken, never b's stale copy of run-x (whose refusal is not logged beside a line taken)
    expect(found.record?.runId).toBe('run-y');
    expect(found.misses).toEqual([]);
    // with z's line gone altogether, nothing is taken
    await study(root, 'z', []);
    const none = findReusable(await readDonorLedgers([root], join(root, 'mine'), () => undefined), want, plan, appVersion());
    expect(none.record).toBeNull();
    expect(none.misses).toEqual([expect.stringMatching(/run run-x of study b .*study z, which trained it, no longer holds its line/)]);
  });

  it('is taken from the study that trained it before a copy, and a copy refused beside it is not logged', async () => {
    const root = join(dir, 'both');
    // 'z' trained run-x; 'b' (asked first by name) holds a copy of its line, once without the backend (a ledger
    // written before lines recorded it, as ladder-parts-sokoban's copies of ladder-sokoban's runs were) and once with
    const { backend: _backend, ...bare } = line('run-x', 'z');
    await study(root, 'z', [line('run-x')]);
    for (const copy of [bare, line('run-x', 'z')]) {
      await study(root, 'b', [copy]);
      const found = findReusable(await readDonorLedgers([root], join(root, 'mine'), () => undefined), want, plan, appVersion());
      expect(found).toMatchObject({ study: 'z', misses: [] });
      expect(found.record?.reusedFrom).toBeUndefined();
    }
    // without the origin's line the copy's refusal is said: nothing is taken
    await study(root, 'z', []);
    await study(root, 'b', [bare]);
    const none = findReusable(await readDonorLedgers([root], join(root, 'mine'), () => undefined), want, plan, appVersion());
    expect(none.record).toBeNull();
    expect(none.misses).toEqual([
      expect.stringMatching(/^run run-x of study b has its config hash but is not reused: .*its line does not record the backend/),
    ]);
  });

  it("a study's copy of this ladder's own run is not taken back when this ladder took its line out", async () => {
    const root = join(dir, 'own');
    // 'mine' trained run-x, 'b' copied its line, 'mine' took its line out (to train it again): b is no source for it
    await study(root, 'b', [line('run-x', 'mine')]);
    const lines: string[] = [];
    const donors = await readDonorLedgers([root], join(root, 'mine'), (l) => lines.push(l));
    expect(findReusable(donors, want, plan, appVersion()).record).toBeNull();
    expect(lines).toEqual([
      expect.stringMatching(/study b's line of run run-x is this ladder's own run \(mine\), copied there: not taken back/),
    ]);
  });

  it("a Hugging Face model's run is not reused: the same hf:PATH may hold other weights here", async () => {
    const root = join(dir, 'hf');
    // the donor trained the run on the folder /models/tiny (model.source in its --set or in the arm's overrides);
    // its line does not record the folder's weight hashes (the run record does: resume and reproduce check them)
    const hf = { ...plan, sets: { 'model.source': 'hf:/models/tiny' } };
    await mkdir(join(root, 'd'), { recursive: true });
    await writeLedger(join(root, 'd'), ledgerHeader('d', hf, null), [line('run-hf')]);
    const arm: LadderPlan = { ...plan, arms: [{ name: 'grpo', preset: 'grpo', sets: { 'model.source': 'hf:/models/tiny' }, vs: null }] };
    await mkdir(join(root, 'e'), { recursive: true });
    await writeLedger(join(root, 'e'), ledgerHeader('e', arm, null), [{ ...line('run-hf-arm'), arm: 'grpo' }]);
    for (const study of ['d', 'e']) {
      const donors = (await readDonorLedgers([root], join(root, 'mine'), () => undefined)).filter((d) => d.study === study);
      const found = findReusable(donors, want, hf, appVersion());
      expect(found.record).toBeNull();
      expect(found.misses).toEqual([expect.stringMatching(/trained a Hugging Face model \(hf:\/models\/tiny\)/)]);
    }
  });
});
