/**
 * Training-worker entry for crash tests: the real trainer, with the store's kill point armed in this worker (the
 * worker is the single writer of its run's streams and checkpoints, so that is where the write to interrupt
 * happens). The kill point comes from the test helper process's environment (cliKilled.mjs sets it).
 */
import { serveJob } from '../../sessions/workerMain';
import { armKillPoint } from '../killPoints';

armKillPoint(Number(process.env.ARL_KIT_KILL_AT), process.env.ARL_KIT_KILL_LABEL ?? '');
serveJob(async () => (await import('../../sessions/jobs/training')).trainingJob);
