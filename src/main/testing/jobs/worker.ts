/** Training-worker entry for tests: the synthetic stand-in job (synthetic.ts) served like the real trainer. */
import { serveJob } from '../../sessions/workerMain';
import { syntheticJob } from './synthetic';

serveJob(async () => syntheticJob);
