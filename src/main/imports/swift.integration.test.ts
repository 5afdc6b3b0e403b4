/**
 * ms-swift's importer against ms-swift's own writer. tests/peers/swift_peer.py, in the `swift`
 * venv (ms-swift 4.6.0 on torch 2.6.0, tests/peers/venvs/swift.txt), trains a tiny Qwen2 on the CPU, offline:
 * `swift sft` for 4 steps and `swift rlhf --rlhf_type grpo` for 4 steps with three reward functions, and ms-swift's
 * callback writes each run's logging.jsonl. The lab imports those files; every step and value must be what
 * ms-swift wrote, checked against two things it wrote: the logging records themselves and the Trainer's own
 * `log_history`, which ms-swift appends at the end (its step list and key set, independent of the lab's rules
 * about ms-swift's progress fields).
 *
 * Skipped, with the reason in its title, only when .venvs/swift is missing outside CI (5.2 GB, 3 minutes to
 * install); scripts/setup.sh, which .ci/run runs, makes it, and under CI (env CI set) a missing venv fails the test.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLineParser, detectFormat } from '../../core/formats';
import type { SourceStep } from '../../core/formats/types';
import { RunStore } from '../store/runStore';
import { importLogs } from './importLogs';

const ROOT = resolve(import.meta.dirname, '../../..');
const PYTHON = join(ROOT, '.venvs', 'swift', 'bin', 'python');
const PEER = join(ROOT, 'tests', 'peers', 'swift_peer.py');
const HAVE_VENV = existsSync(PYTHON);
const MUST_RUN = HAVE_VENV || Boolean(process.env.CI);
const SKIP_REASON = MUST_RUN ? '' : ` (SKIPPED: ${PYTHON} is missing; \`bash scripts/setup.sh\` makes it from tests/peers/venvs/swift.txt)`;

type Json = number | string | boolean | null | Json[] | { [k: string]: Json };
type SwiftRecord = Record<string, Json>;
interface SwiftLog {
  path: string;
  records: SwiftRecord[];
}
interface Expected {
  versions: Record<string, string>;
  sft: SwiftLog;
  grpo: SwiftLog;
}

let dir = '';
let expected: Expected;

beforeAll(() => {
  if (!MUST_RUN) return;
  if (!HAVE_VENV)
    throw new Error(`${PYTHON} is missing under CI: scripts/setup.sh (run by .ci/run) makes it from tests/peers/venvs/swift.txt`);
  dir = mkdtempSync(join(tmpdir(), 'arl-swift-'));
  // Two ms-swift trainings (~1 min of work on an idle machine, each process importing torch and Transformers).
  execFileSync(PYTHON, [PEER, dir], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 540_000 });
  expected = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')) as Expected;
}, 560_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Python's json writes non-finite floats as NaN / Infinity; the peer passes them on as these strings. */
function num(v: Json): number | undefined {
  if (typeof v === 'number') return v;
  if (v === 'NaN') return Number.NaN;
  if (v === 'Infinity') return Number.POSITIVE_INFINITY;
  if (v === '-Infinity') return Number.NEGATIVE_INFINITY;
  return undefined;
}

const isTrainEnd = (r: SwiftRecord): boolean => 'train_runtime' in r;

/** The Trainer's log_history as ms-swift appended it: step → that step's keys (the `step` field left out). */
function logHistory(log: SwiftLog): Map<number, string[]> {
  const summary = log.records.at(-1)!;
  expect(Array.isArray(summary.log_history), 'ms-swift ends logging.jsonl with its run summary').toBe(true);
  const out = new Map<number, string[]>();
  for (const e of summary.log_history as SwiftRecord[]) {
    if (isTrainEnd(e)) continue;
    out.set(
      e.step as number,
      Object.keys(e).filter((k) => k !== 'step'),
    );
  }
  return out;
}

/** What ms-swift logged at each step: the records with global_step/max_steps, less the end-of-training one. */
function loggedSteps(log: SwiftLog): Map<number, SwiftRecord> {
  const out = new Map<number, SwiftRecord>();
  for (const r of log.records) {
    if (typeof r['global_step/max_steps'] !== 'string' || isTrainEnd(r)) continue;
    out.set(Number(r['global_step/max_steps'].split('/')[0]), r);
  }
  return out;
}

function parse(path: string): { steps: SourceStep[]; p: ReturnType<typeof createLineParser> } {
  const bytes = readFileSync(path);
  const d = detectFormat(new Uint8Array(bytes));
  expect(d?.format).toBe('jsonl');
  const steps: SourceStep[] = [];
  const p = createLineParser('jsonl', (s) => steps.push(s));
  for (const line of bytes.toString('utf8').split('\n')) p.push(line);
  p.end();
  return { steps, p };
}

/**
 * Imports the file into a fresh store and checks it against what ms-swift wrote: the lab's steps are the Trainer's
 * logged steps, each stored value (under its catalog name or its own) is the logged value, and each step holds
 * exactly the Trainer's keys for it, so none of ms-swift's progress fields and nothing of its summaries.
 */
async function importAndCheck(
  log: SwiftLog,
  name: string,
): Promise<{ keyMap: Record<string, string>; byStep: Map<number, Record<string, number>> }> {
  const store = await RunStore.open(join(dir, `store-${name}`));
  try {
    const out = await importLogs(store, [log.path]);
    expect(out.runIds.length).toBe(1);
    const rec = (await store.getRun(out.runIds[0]))!;
    expect(rec.source?.framework).toBe('ms-swift');
    expect(rec.source?.format).toBe('jsonl');
    expect(rec.source?.skipped).toEqual({});
    const history = logHistory(log);
    const logged = loggedSteps(log);
    expect([...logged.keys()]).toEqual([...history.keys()]);
    const rows = await store.readMetrics(rec.id);
    expect(rows.map((r) => r.step)).toEqual([...history.keys()]);
    expect(rec.step).toBe(Math.max(...history.keys()));
    const keyMap = rec.source!.keyMap;
    const sourceOf = (k: string): string => keyMap[k] ?? k;
    const byStep = new Map<number, Record<string, number>>();
    for (const row of rows) {
      const wrote = logged.get(row.step)!;
      const bySource: Record<string, number> = {};
      for (const [k, v] of Object.entries(row.values)) bySource[sourceOf(k)] = v;
      byStep.set(row.step, bySource);
      expect(Object.keys(bySource).sort(), `step ${row.step}: the Trainer's keys`).toEqual([...history.get(row.step)!].sort());
      for (const [k, v] of Object.entries(bySource)) {
        const want = num(wrote[k]);
        expect(want, `step ${row.step} ${k} is a number ms-swift wrote`).toBeDefined();
        if (Number.isNaN(want)) expect(v).toBeNaN();
        else expect(v, `step ${row.step} ${k}`).toBe(want);
      }
    }
    // The end-of-training log is named in a note with its values, not stored as a step.
    const end = log.records.find(isTrainEnd)!;
    const notes = rec.source!.notes.join('\n');
    expect(notes).toContain(`train_runtime=${end.train_runtime as number}`);
    expect(notes).toContain("ms-swift's run summary after training");
    return { keyMap, byStep };
  } finally {
    await store.close();
  }
}

describe.skipIf(!MUST_RUN)(`ms-swift's own logging.jsonl (ms-swift 4.6.0, swift sft / swift rlhf on the CPU)${SKIP_REASON}`, () => {
  it('was written by the pinned ms-swift, with the records the test relies on', () => {
    expect(expected.versions['ms-swift']).toBe('4.6.0');
    for (const log of [expected.sft, expected.grpo]) {
      expect(loggedSteps(log).size).toBe(4);
      expect(log.records.filter(isTrainEnd).length).toBe(1);
      // ms-swift 4 writes train_speed(s/it) into every record (ms-swift 3 wrote train_speed(iter/s)).
      expect(log.records.filter((r) => 'global_step/max_steps' in r).every((r) => 'train_speed(s/it)' in r)).toBe(true);
    }
  });

  it('swift sft: 4 steps with the values ms-swift wrote; progress fields and summaries are not metrics', async () => {
    const { keyMap, byStep } = await importAndCheck(expected.sft, 'sft');
    expect(keyMap).toMatchObject({ 'actor/pg_loss': 'loss', 'actor/grad_norm': 'grad_norm', 'actor/lr': 'learning_rate' });
    expect(Object.keys(byStep.get(4)!).sort()).toEqual(['epoch', 'grad_norm', 'learning_rate', 'loss', 'token_acc']);
  });

  it('swift sft, parsed: the end-of-training log is the run’s final metrics, value for value', () => {
    const { steps, p } = parse(expected.sft.path);
    expect(steps.map((s) => s.step)).toEqual([1, 2, 3, 4]);
    const end = expected.sft.records.find(isTrainEnd)!;
    const want: Record<string, number> = {};
    for (const [k, v] of Object.entries(end)) if (typeof v === 'number' && !k.startsWith('train_speed')) want[k] = v;
    expect(p.meta.finalMetrics).toEqual(want);
    expect(p.skipped).toEqual({});
  });

  it('swift rlhf --rlhf_type grpo: steps and values as written, and its GRPO keys mapped onto the catalog', async () => {
    const { keyMap, byStep } = await importAndCheck(expected.grpo, 'grpo');
    expect(keyMap).toMatchObject({
      'actor/pg_loss': 'loss',
      'actor/kl_loss': 'kl',
      'actor/pg_clipfrac': 'clip_ratio/region_mean',
      'episode/reward_mean': 'reward',
      'episode/success_rate': 'rewards/MathAccuracy/mean',
      'episode/valid_format_ratio': 'rewards/Format/mean',
      'response_length/mean': 'completions/mean_length',
      'response_length/clip_ratio': 'completions/clipped_ratio',
      'filter/zero_variance_share': 'frac_reward_zero_std',
    });
    // Kept under their own names: the reward's spread, the plugin reward (rewards/<fn>/mean), the other clip ratios.
    for (const k of ['reward_std', 'rewards/DigitShare/mean', 'rewards/DigitShare/std', 'clip_ratio/low_mean', 'clip_ratio/high_max'])
      expect(Object.values(keyMap)).not.toContain(k);
    const first = byStep.get(1)!;
    for (const k of ['reward_std', 'rewards/DigitShare/mean', 'rewards/Format/mean', 'completions/min_length'])
      expect(first).toHaveProperty(k);
    // The input exercises what it claims: a graded reward with spread, and (on each batch's second update) KL
    // and clipping away from zero.
    expect(first.reward_std).toBeGreaterThan(0);
    expect(Math.max(...[...byStep.values()].map((v) => v.kl ?? 0))).toBeGreaterThan(0);
    expect(Math.max(...[...byStep.values()].map((v) => v['clip_ratio/region_mean'] ?? 0))).toBeGreaterThan(0);
  });
});
