/**
 * A ladder run taken from another study's ledger instead of training it again: when a plan entry has no run yet and
 * another study's committed ledger holds a finished line of the same run — the same config hash, seed and app major
 * version, and the same held-out evaluation and collapse rule — the ladder copies that line (its outcome fields
 * unchanged, marked `reusedFrom`). The rollout-mismatch study's fp32 arms train exactly the runs of the pressure
 * ladder's level-1 cells, for instance (~40 min of a 2-core machine each cell).
 *
 * What makes a run's line, and what checks it here:
 * - the resolved run config (preset, env and its settings, seed, model, steps, pressure level, rollout and compute
 *   settings, every algorithm knob): the config hash (ledger.ts configHash), computed by this checkout for the entry
 *   and compared with the one the donor's run record stored;
 * - the seed and the lab's major version, compared on their own as well (the seed is in the hash; the version is not);
 * - what the study adds outside the config — the held-out episodes of the final evaluation, the collapse fraction and
 *   whether a run stops at its collapse (the stepsToThreshold threshold is 0.5 in every ladder, levelPlan): compared
 *   with the donor ledger's header plan. A field that differs there refuses the reuse, and the ladder says which.
 * - the backend and worker count — a run is a function of its config, seed, app version, backend and K, and
 *   `compute.backend = auto` and `compute.workers = 0` resolve on the machine that trains: the donor line's `backend`
 *   (its run record's training backend, rollout engine and K) must equal what this ladder would train the run on
 *   (plannedBackend). A donor line without it (a ledger written before lines recorded it) is not reused; the log says
 *   to re-export that study's ledger from the data dir that holds its runs (--export-ledger fills it from the run
 *   records). A ledger run taken on --resume is not checked so: it is this ladder's own run.
 * - a run of a Hugging Face model (model.source = hf:PATH) is not reused: the config hash holds the folder's path, not
 *   its files, and a ledger line does not record the weight hashes its run record keeps.
 * - a line a donor itself copied (reusedFrom) stands only while the study that trained the run holds it: a copy of a
 *   line that study took out is refused, and so is a copy of this ladder's own run (its ledger not holding it means
 *   the ladder took it out).
 */
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { RunConfig } from '../../../core/config/index';
import { projectRoot } from '../../platform/appInfo';
import type { LadderPlan } from './ladder';
import { LEDGER_FILE, majorOf, readLedger, type LedgerBackend, type LedgerPlan, type LedgerRecord } from './ledger';

/** Another study's ledger, as a source of finished runs. */
export interface DonorLedger {
  /** The study's folder name (resources/studies/NAME): what `reusedFrom.study` names. */
  readonly study: string;
  /** The folder of study folders it was found in (its ledger is root/study/ledger.jsonl). */
  readonly root: string;
  readonly plan: LedgerPlan;
  readonly records: readonly LedgerRecord[];
}

/**
 * The ledgers of the studies in `roots` (folders of study folders, e.g. resources/studies), less the study in
 * `own` and any other of its name (a copy of it: its runs are this ladder's, which --resume takes); sorted by study
 * name, so the same donor is chosen on every machine. A ledger that cannot be read or parsed is left out with a line
 * to `log` (it is another study's problem; its runs train here instead).
 */
export async function readDonorLedgers(roots: readonly string[], own: string, log: (line: string) => void): Promise<DonorLedger[]> {
  const seen = new Set<string>([resolve(own)]);
  const name = basename(resolve(own));
  const out: DonorLedger[] = [];
  for (const root of [...new Set(roots.map((r) => resolve(r)))]) {
    if (!existsSync(root)) continue;
    for (const entry of (await readdir(root, { withFileTypes: true })).filter((d) => d.isDirectory())) {
      const dir = join(root, entry.name);
      if (seen.has(dir) || entry.name === name || !existsSync(join(dir, LEDGER_FILE))) continue;
      seen.add(dir);
      try {
        const ledger = await readLedger(dir);
        if (!ledger) continue;
        // A line this study copied from the ladder being trained is that ladder's own run: its ledger no longer
        // holding it means the ladder took it out (to train it again), and a copy must not bring it back.
        const own = ledger.records.filter((r) => r.reusedFrom?.study === name);
        for (const r of own)
          log(
            `reuse: study ${entry.name}'s line of run ${r.runId} is this ladder's own run (${name}), copied there: not taken back ` +
              '(this ladder keeps only the runs its own ledger holds)',
          );
        out.push({ study: entry.name, root, plan: ledger.header.plan, records: ledger.records.filter((r) => !own.includes(r)) });
      } catch (e) {
        log(`reuse: ${(e as Error).message}; its runs are not reused`);
      }
    }
  }
  return out.sort((a, b) => (a.study < b.study ? -1 : a.study > b.study ? 1 : 0));
}

/**
 * What a study adds to a run's line outside its config, where the donor's plan and this one differ (one phrase
 * each): the held-out episodes, the collapse fraction and stop-on-collapse.
 */
export function reuseBlockers(donor: Pick<LedgerPlan, 'episodes' | 'fraction' | 'stopOnCollapse'>, plan: LadderPlan): string[] {
  const out: string[] = [];
  if (donor.episodes !== plan.episodes) out.push(`held-out episodes ${donor.episodes} there, ${plan.episodes} here`);
  if (donor.fraction !== plan.fraction) out.push(`collapse fraction ${donor.fraction} there, ${plan.fraction} here`);
  if (donor.stopOnCollapse !== plan.stopOnCollapse)
    out.push(`on collapse ${donor.stopOnCollapse ? 'stop' : 'continue'} there, ${plan.stopOnCollapse ? 'stop' : 'continue'} here`);
  return out;
}

/** A plan entry looking for a run to reuse: its place in this ladder and the hash of the config it would train. */
export interface ReuseWanted {
  readonly level: number;
  readonly env: string;
  readonly preset: string;
  readonly arm?: string;
  readonly seed: number;
  readonly configHash: string;
  /** What this ladder would train it on (plannedBackend). */
  readonly backend: LedgerBackend;
}

/** What a study's runs resolve `auto` and K = 0 to where they would train: the machine's or the Ray job's choice. */
export interface BackendHere {
  /** The tfjs backend `compute.backend = auto` selects (`tensorflow-gpu`, `tensorflow`, `wasm`, `cpu`). */
  readonly training: string;
  /** K for `compute.workers = 0` on a tfjs backend other than native TensorFlow (one per core). */
  readonly workers: number;
}

/**
 * The backend a run of `config` trains on `here`, named as its run record will name it — the resolution the
 * training job makes (compute/index.ts setupCompute: the rollout engine's name; trainer.ts workersOf: K = 1 on
 * native TensorFlow, whose kernels already use every core, and for a Hugging Face model, whose trainer has no
 * gradient workers).
 */
export function plannedBackend(config: Pick<RunConfig, 'compute' | 'model'>, here: BackendHere): LedgerBackend {
  const c = config.compute;
  const training = c.backend === 'auto' ? here.training : c.backend;
  const precision = c.rolloutPrecision ?? 'fp32';
  const rollout =
    c.rolloutEngine === 'onnxruntime'
      ? precision === 'fp32'
        ? 'onnxruntime-cpu'
        : `onnxruntime-cpu-${precision}`
      : `tfjs-${training === 'tensorflow-gpu' ? 'tensorflow' : training}`;
  const hf = (config.model.source ?? 'lab').startsWith('hf:');
  const native = training === 'tensorflow' || training === 'tensorflow-gpu';
  const workers = hf ? 1 : c.workers > 0 ? c.workers : native ? 1 : Math.max(1, here.workers);
  return { training, rollout, workers };
}

/** What differs between the backend a donor line records and the one this ladder would train on (one phrase each). */
function backendBlockers(there: LedgerBackend, here: LedgerBackend): string[] {
  const out: string[] = [];
  if (there.training !== here.training) out.push(`trained on ${there.training} there, ${here.training} here`);
  if (there.rollout !== here.rollout) out.push(`rollouts on ${there.rollout} there, ${here.rollout} here`);
  if (there.workers !== here.workers) out.push(`${there.workers} gradient workers there, ${here.workers} here`);
  return out;
}

/**
 * The hf:PATH a donor line's run trained, from its study's plan (the ladder's --set, or its arm's overrides); null
 * for the lab's own models. A run of such a model is a function of the folder's files too, which the config hash
 * does not cover (it holds the path only).
 */
function hfSourceOf(plan: Pick<LedgerPlan, 'sets' | 'arms'>, r: Pick<LedgerRecord, 'arm'>): string | null {
  const arm = r.arm !== undefined ? plan.arms?.find((a) => a.name === r.arm) : undefined;
  const source = arm?.sets['model.source'] ?? plan.sets['model.source'];
  return typeof source === 'string' && source.startsWith('hf:') ? source : null;
}

/** The command that re-exports donor `d`'s ledger from its runs (its lines then record their backend). */
function reexport(d: Pick<DonorLedger, 'study' | 'root'>): string {
  const committed = resolve(d.root) === resolve(projectRoot(), 'resources', 'studies');
  return `arlarena --data-dir <the data dir that holds its runs> ladder --study ${d.study} --export-ledger${committed ? '' : ` --out ${d.root}`}`;
}

export type ReuseFound =
  | { readonly record: LedgerRecord; readonly study: string; readonly misses: readonly string[] }
  | { readonly record: null; readonly misses: readonly string[] };

/**
 * The first donor line of the same run as `want` for a lab of version `version`: the lines of the study that trained
 * their run (no reusedFrom) before the copies other studies made (each group in study order, then ledger order), so a
 * run found both where it was trained and in a study that reused it is taken from its origin. With no line taken,
 * the lines that had the same config hash and seed, each said with why it was refused; with one taken, none (a copy's
 * refusal beside its origin's line taken was noise in the ladder's log).
 */
export function findReusable(donors: readonly DonorLedger[], want: ReuseWanted, plan: LadderPlan, version: string): ReuseFound {
  const misses: string[] = [];
  const same = donors.flatMap((d) =>
    d.records.filter((r) => r.configHash === want.configHash && r.seed === want.seed).map((r) => ({ d, r })),
  );
  const candidates = [...same.filter((c) => !c.r.reusedFrom), ...same.filter((c) => c.r.reusedFrom)];
  for (const { d, r } of candidates) {
    const why = [...reuseBlockers(d.plan, plan)];
    if (r.level !== want.level) why.push(`level ${r.level} there`);
    if (r.env !== want.env) why.push(`env ${r.env} there`);
    // NaN (a version without a major) equals nothing: not reused.
    if (!(majorOf(r.appVersion) === majorOf(version))) why.push(`trained by ARLArena Lab ${r.appVersion}, this is ${version}`);
    // A copied line stands for the run of the study that trained it only while that study's ledger holds it
    // (where it is read): one taken out there (a bad run, trained again) must not come back through a copy.
    const origin = r.reusedFrom ? donors.filter((o) => o.study === r.reusedFrom!.study) : [];
    if (origin.length > 0 && !origin.some((o) => o.records.some((x) => x.runId === r.reusedFrom!.runId && !x.reusedFrom)))
      why.push(
        `study ${r.reusedFrom!.study}, which trained it, no longer holds its line (${origin[0].root}/${r.reusedFrom!.study}/${LEDGER_FILE})`,
      );
    const hf = hfSourceOf(d.plan, r);
    if (hf !== null)
      why.push(
        `it trained a Hugging Face model (${hf}): its line does not record that folder's weight and tokenizer hashes, and the ` +
          'same path may hold other weights here (its run record has them; resume and reproduce check them)',
      );
    if (r.backend) why.push(...backendBlockers(r.backend, want.backend));
    else
      why.push(
        'its line does not record the backend and worker count it trained on (a ledger written before lines did); ' +
          `re-export it, which fills them from the run records: ${reexport(d)}`,
      );
    if (why.length === 0) return { record: r, study: d.study, misses: [] };
    misses.push(`run ${r.runId} of study ${d.study} has its config hash but is not reused: ${why.join('; ')}`);
  }
  return { record: null, misses };
}

/**
 * The line of `want` made from a donor's line: its run, outcome, provenance and config hash copied unchanged, placed
 * at this ladder's level, env and cell (a donor's preset may be an arm here, or an arm a preset), and marked with
 * the study that trained it (a donor line that was itself reused keeps naming the study that trained it).
 */
export function reusedRecord(
  donor: LedgerRecord,
  study: string,
  want: Pick<ReuseWanted, 'level' | 'env' | 'preset' | 'arm' | 'seed'>,
): LedgerRecord {
  const { arm: _arm, reusedFrom, ...rest } = donor;
  return {
    ...rest,
    level: want.level,
    env: want.env,
    preset: want.preset,
    ...(want.arm !== undefined ? { arm: want.arm } : {}),
    seed: want.seed,
    reusedFrom: reusedFrom ?? { study, runId: donor.runId },
  };
}

/**
 * The donor line of a run this ladder reused (its study entry's reusedFrom; an entry stored before entries kept it
 * names only the run): the line of run `from.runId` in the ledger of the study that trained it (`from.study`, or
 * whichever holds it as its own run); where that ledger is not among `donors`, a line another study copied from it
 * (marked so). Null, with why in words, when none is: the study took the line out, or its ledger is not where donors
 * are read. A copy does not stand for a line its study took out (as findReusable). A run id is unique (a time and a
 * random suffix), and the seed is checked too.
 */
export function donorLine(
  donors: readonly DonorLedger[],
  from: { readonly study?: string; readonly runId: string },
  seed: number,
): { readonly record: LedgerRecord; readonly study: string } | { readonly record: null; readonly why: string } {
  const same = (r: LedgerRecord) => r.runId === from.runId && r.seed === seed;
  const origin = from.study === undefined ? donors : donors.filter((d) => d.study === from.study);
  for (const d of origin) {
    const r = d.records.find((x) => same(x) && !x.reusedFrom);
    if (r) return { record: r, study: d.study };
  }
  if (from.study !== undefined && origin.length > 0)
    return {
      record: null,
      why: `study ${from.study}'s ledger (${origin.map((d) => join(d.root, d.study, LEDGER_FILE)).join(', ')}) no longer holds the line of run ${from.runId} (seed ${seed})`,
    };
  for (const d of donors) {
    const r = d.records.find(
      (x) => same(x) && x.reusedFrom?.runId === from.runId && (from.study === undefined || x.reusedFrom.study === from.study),
    );
    if (r && !donors.some((o) => o.study === r.reusedFrom!.study)) return { record: r, study: d.study };
  }
  return {
    record: null,
    why:
      from.study !== undefined
        ? `no ledger of study ${from.study} (nor a copy of run ${from.runId}'s line) is where donors are read: resources/studies, or beside this ladder's folder`
        : `no other study's ledger where donors are read (resources/studies, or beside this ladder's folder) holds the line of run ${from.runId} (seed ${seed})`,
  };
}

/** The reused lines of a ledger, counted per study they come from (study order), with their cells. */
export interface ReusedFrom {
  readonly study: string;
  readonly runs: number;
  /** `level L CELL · ENV seeds …` per cell, in the ledger's order. */
  readonly cells: readonly string[];
}

const seedList = (s: readonly number[]) => {
  const contiguous = s.length > 2 && s.every((x, i) => i === 0 || x === s[i - 1] + 1);
  return contiguous ? `${s[0]}..${s[s.length - 1]}` : s.join(',');
};

/** The summary's account of reused runs (records in the ledger's order); empty when none was reused. */
export function reusedSummary(
  records: ReadonlyArray<Pick<LedgerRecord, 'level' | 'env' | 'preset' | 'arm' | 'seed' | 'reusedFrom'>>,
): ReusedFrom[] {
  const by = new Map<string, Map<string, number[]>>();
  for (const r of records) {
    if (!r.reusedFrom) continue;
    const cells = by.get(r.reusedFrom.study) ?? new Map<string, number[]>();
    by.set(r.reusedFrom.study, cells);
    const cell = `level ${r.level} ${r.arm ?? r.preset} · ${r.env}`;
    cells.set(cell, [...(cells.get(cell) ?? []), r.seed]);
  }
  return [...by.keys()].sort().map((study) => {
    const cells = [...by.get(study)!.entries()];
    return {
      study,
      runs: cells.reduce((n, [, s]) => n + s.length, 0),
      cells: cells.map(([cell, s]) => `${cell} seeds ${seedList(s)}`),
    };
  });
}
