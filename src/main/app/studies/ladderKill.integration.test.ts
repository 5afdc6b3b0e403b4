/**
 * A pressure ladder's report written while a session's end SIGKILLs it: `arlarena ladder --resume` from a committed
 * ledger (nothing to train: it writes each level's study.json, then the ledger, summary.json and README.md) and
 * `--export-ledger`, each killed at every one of its atomic writes in turn (the CLI with a kill point in its own
 * process, testing/cliKillPoint.mjs), then run again whole. Every write is atomic, so the files are the old or
 * the new ones; but the killed write's temp file stayed beside them for good — in the report folder, which is
 * committed (resources/studies/NAME: an untracked `.ledger.jsonl.<pid>-0-1.tmp` that `git add` of the folder takes
 * along), and in the data dir's study folders: nothing but the run store's own folders was ever cleaned. After the
 * rerun (in a later session, minutes on): no temp file, and the report equals one never killed.
 */
import { mkdir, readFile, readdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { CLI, KILL_POINT_CLI, runNode, tempDirForFile, type NodeExit } from '../../testing/cliKill';
import { smallLadder, smallLadderRecords } from '../../testing/ladderPlan';
import { ledgerHeader, ledgerText } from './ledger';

const { args: ARGS, plan } = smallLadder('lk');
const records = () => smallLadderRecords(plan, (_preset, seed) => seed === 2);

const tmp = tempDirForFile('arl-ladder-kill-');

function cli(killAt: number | null, args: readonly string[]): Promise<NodeExit> {
  return runNode(killAt === null ? [CLI, ...args] : [KILL_POINT_CLI, String(killAt), 'atomic-before-rename', ...args]);
}

/** Every temp file under `root` (the writers' `.NAME.<pid>-<thread>-<n>.tmp`), as paths relative to it. */
async function temps(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(root, { recursive: true, withFileTypes: true }).catch(() => [])) {
    if (e.name.startsWith('.') && e.name.endsWith('.tmp')) out.push(join(e.parentPath, e.name).slice(root.length + 1));
  }
  return out.sort();
}

/**
 * The next session comes minutes later: the temps under `roots` are dated two minutes back. Each names its writer's
 * pid, and is removed once that writer is gone (removeDeadTempsIn), whatever its age; a live writer's is kept.
 */
async function later(...roots: string[]): Promise<void> {
  const t = (Date.now() - 120_000) / 1000;
  for (const root of roots) for (const f of await temps(root)) await utimes(join(root, f), t, t);
}

async function report(out: string): Promise<string[]> {
  return Promise.all(['ledger.jsonl', 'summary.json', 'README.md'].map((f) => readFile(join(out, 'lk', f), 'utf8')));
}

it('a ladder killed at each write of its report leaves no temp file once run again, and the same report', async () => {
  const committed = ledgerText(ledgerHeader('lk', plan, null), records());
  const fresh = async (name: string) => {
    await mkdir(join(tmp.path, name, 'lk'), { recursive: true });
    await writeFile(join(tmp.path, name, 'lk', 'ledger.jsonl'), committed);
    return join(tmp.path, name);
  };
  // The report of a run never killed, to compare with.
  const cleanOut = await fresh('clean');
  const clean = await cli(null, ['--data-dir', join(tmp.path, 'clean-data'), 'ladder', ...ARGS, '--resume', '--out', cleanOut]);
  expect(clean.code, clean.err).toBe(0);
  const want = await report(cleanOut);

  let kills = 0;
  for (let at = 1; at <= 30; at++) {
    const out = await fresh(`out-${at}`);
    const data = join(tmp.path, `data-${at}`);
    const killed = await cli(at, ['--data-dir', data, 'ladder', ...ARGS, '--resume', '--out', out]);
    if (killed.signal !== 'SIGKILL') {
      expect(killed.code, killed.err).toBe(0);
      break;
    }
    kills++;
    await later(out, data);
    const again = await cli(null, ['--data-dir', data, 'ladder', ...ARGS, '--resume', '--out', out]);
    expect(again.code, `killed at write ${at}, then: ${again.err}`).toBe(0);
    expect(await temps(out), `report folder after a kill at write ${at}`).toEqual([]);
    expect(await temps(join(data, 'studies')), `study folders after a kill at write ${at}`).toEqual([]);
    expect(await report(out), `report after a kill at write ${at}`).toEqual(want);

    // --export-ledger of that data dir, killed at the same write, then run again.
    const exported = await cli(at, ['--data-dir', data, 'ladder', '--study', 'lk', '--export-ledger', '--out', out]);
    if (exported.signal === 'SIGKILL') {
      await later(out, data);
      const whole = await cli(null, ['--data-dir', data, 'ladder', '--study', 'lk', '--export-ledger', '--out', out]);
      expect(whole.code, whole.err).toBe(0);
      expect(await temps(out), `report folder after --export-ledger killed at write ${at}`).toEqual([]);
    }
  }
  expect(kills).toBeGreaterThan(2);
}, 300_000);
