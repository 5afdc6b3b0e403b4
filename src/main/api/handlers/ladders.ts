/** ladders.* — the pressure ladders stored in the data dir (`arlarena ladder --study`, src/main/app/studies/ladderInfo.ts). */
import { err, ok } from '../../../shared/result';
import type { LabServices } from '../../app/lab';
import { ladderInfo, ladderList } from '../../app/studies/ladderInfo';
import { listStudies } from '../../app/studies/studyFiles';
import type { AreaMethods, Handlers } from '../types';

export function createLaddersHandlers(services: LabServices): Handlers<AreaMethods<'ladders'>> {
  return {
    'ladders.list': async () => ok(ladderList(await listStudies(services.dataDir))),
    'ladders.get': async ({ name }) => {
      const states = await listStudies(services.dataDir);
      const { store } = await services.lab();
      const info = await ladderInfo(states, name, store);
      if (!info) {
        const known = ladderList(states).map((l) => l.name);
        return err('NOT_FOUND', `no ladder "${name}" in ${services.dataDir}`, {
          field: 'name',
          hint: known.length ? `ladders here: ${known.join(', ')}` : 'start one with arlarena ladder --study NAME',
        });
      }
      return ok(info);
    },
  };
}
