/**
 * ladders.* — the pressure ladders the Ladder view shows: those in the data dir (`arlarena ladder --study`, their
 * level studies and runs: src/main/app/studies/ladderInfo.ts) and those committed in the checkout
 * (`resources/studies/NAME/summary.json` and the ledger beside it: committedLadders.ts), so a fresh clone shows the
 * committed studies and their runs' ledger lines; a run links only where this data dir's run store has it.
 */
import { join } from 'node:path';
import type { LadderListItem } from '../../../shared/ladders';
import { err, ok } from '../../../shared/result';
import type { LabServices } from '../../app/lab';
import { ladderListItem, readCommittedLadders, withStored } from '../../app/studies/committedLadders';
import { ladderInfo, ladderList } from '../../app/studies/ladderInfo';
import { listStudies } from '../../app/studies/studyFiles';
import { projectRoot } from '../../platform/appInfo';
import type { AreaMethods, Handlers } from '../types';

export interface LaddersOptions {
  /** Where committed ladder summaries are (default: the checkout's resources/studies), and how to show that path. */
  readonly committed?: { readonly dir: string; readonly shownAs: string };
}

export function createLaddersHandlers(services: LabServices, options: LaddersOptions = {}): Handlers<AreaMethods<'ladders'>> {
  const committedAt = options.committed ?? { dir: join(projectRoot(), 'resources', 'studies'), shownAs: 'resources/studies' };
  const committed = () => readCommittedLadders(committedAt.dir, committedAt.shownAs);
  return {
    'ladders.list': async () => {
      const data = ladderList(await listStudies(services.dataDir));
      const { ladders, problems } = await committed();
      const unreadable: LadderListItem[] = problems.map((p) => ({
        name: p.name,
        source: 'committed',
        command: '',
        createdAt: null,
        levels: [],
        envs: [],
        cells: [],
        seeds: 0,
        done: 0,
        planned: 0,
        complete: false,
        problem: p.problem,
      }));
      return ok([...data, ...[...ladders.map(ladderListItem), ...unreadable].sort((a, b) => a.name.localeCompare(b.name))]);
    },
    'ladders.get': async ({ name, source }) => {
      // Without a source, the data dir's ladder of that name (runs and progress) before a committed summary.
      if (source !== 'committed') {
        const states = await listStudies(services.dataDir);
        const { store } = await services.lab();
        const info = await ladderInfo(states, name, store);
        if (info) return ok(info);
      }
      const { ladders, problems } = source === 'data' ? { ladders: [], problems: [] } : await committed();
      const found = ladders.find((l) => l.name === name);
      if (found) {
        // The ledger's runs that this data dir holds (the machine that trained them) open; the others show their line.
        const { store } = await services.lab();
        return ok(await withStored(found, async (id) => (await store.getRun(id)) !== undefined));
      }
      const problem = problems.find((p) => p.name === name);
      if (problem)
        return err('INTERNAL', problem.problem, {
          hint: `write it again with the command that made it (arlarena ladder … --study ${name})`,
        });
      const known = [...ladderList(await listStudies(services.dataDir)).map((l) => l.name), ...ladders.map((l) => `${l.name} (committed)`)];
      const where =
        source === 'committed'
          ? committedAt.shownAs
          : source === 'data'
            ? services.dataDir
            : `${services.dataDir} or ${committedAt.shownAs}`;
      return err('NOT_FOUND', `no ladder "${name}" in ${where}`, {
        field: 'name',
        hint: known.length ? `ladders here: ${known.join(', ')}` : 'start one with arlarena ladder --study NAME',
      });
    },
  };
}
