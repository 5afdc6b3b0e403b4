/** studies.* — the arena studies stored in the data dir (`arlarena arena --study`, src/main/studies). */
import { ok } from '../../../shared/result';
import type { LabServices } from '../../app/lab';
import { studyInfo } from '../../app/studies/info';
import { listStudies } from '../../app/studies/studyFiles';
import type { AreaMethods, Handlers } from '../types';

export function createStudiesHandlers(services: LabServices): Handlers<AreaMethods<'studies'>> {
  return {
    'studies.list': async () => ok((await listStudies(services.dataDir)).map(studyInfo)),
  };
}
