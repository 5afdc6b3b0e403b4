/**
 * Test helper process for killSoak.test.ts: a fixed, finite sequence of store writes (metrics and trajectory
 * appends, record updates, checkpoints with pruning, flushes) that a kill point (killPoints.ts) interrupts at an
 * exact write. Continues the run already in the data directory, if any, from its last complete metric line.
 * Usage: node killWriter.mjs <dataDir> <steps> [<killAt> [<label>]]   (exits 0 when no kill point fired)
 */
import { RunStore } from '../store/runStore';
import { armKillPoint } from './killPoints';

const [dataDir, stepsArg, killAtArg, labelArg] = process.argv.slice(2);
if (killAtArg) armKillPoint(Number(killAtArg), labelArg ?? '');
const steps = Number(stepsArg);
const store = await RunStore.open(dataDir);
let runId = (await store.listRuns())[0]?.id;
if (!runId)
  runId = (
    await store.createRun({
      id: 'soak',
      preset: 'soak',
      env: 'sokoban',
      seed: 1,
      totalSteps: 1_000,
      config: { soak: true },
      status: 'running',
      appVersion: 'test',
      appCommit: 'test',
    })
  ).id;
else await store.updateRun(runId, { status: 'running' });
const from = ((await store.readMetrics(runId)).at(-1)?.step ?? 0) + 1;
for (let step = from; step < from + steps; step++) {
  await store.appendMetrics(runId, [
    { step, values: { 'actor/grad_norm': step / 10, 'episode/success_rate': (step % 10) / 10, 'perf/wall_s': step } },
  ]);
  if (step % 2 === 0) {
    await store.appendTrajectories(runId, [
      {
        step,
        split: 'train',
        env: 'sokoban',
        taskId: `task-${step}`,
        uid: 'u',
        trajUid: `t${step}`,
        won: step % 4 === 0,
        episodeReturn: step,
        turns: [],
      },
    ]);
  }
  if (step % 5 === 0) await store.updateRun(runId, { name: `soak at ${step}`, tags: [`s${step % 3}`] });
  if (step % 3 === 0) await store.saveCheckpoint(runId, { step, files: { 'w.bin': new Uint8Array(512).fill(step % 256) }, meta: { step } });
  if (step % 4 === 0) await store.flush(runId);
}
await store.updateRun(runId, { status: 'completed' });
await store.close();
