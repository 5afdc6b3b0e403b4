/** studies.* — the arena studies stored in the data dir (`arlarena arena --study`, src/main/studies). */
import { ok } from '../../../shared/result';
import type { MainServices } from '../../services';
import { studyInfo } from '../../studies/info';
import { listStudies } from '../../studies/studyFiles';
import type { AreaMethods, Handlers } from '../types';

export function createStudiesHandlers(services: MainServices): Handlers<AreaMethods<'studies'>> {
  return {
    'studies.list': async () => ok((await listStudies(services.dataDir)).map(studyInfo)),
  };
}
