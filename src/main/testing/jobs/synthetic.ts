/**
 * Test job: a deterministic stand-in for the trainer (sessions tests, reproduce tests). It emits the synthetic
 * metric stream of src/core/stability/synthetic.ts for `config.steps` steps, a trajectory every step, and a
 * checkpoint every `config.checkpointEvery` steps; honours pause/stop and resumes from a checkpoint.
 * Config: { steps, shape?, stepMs?, checkpointEvery?, crashAtStep?, crashKind?: 'throw' | 'exit', bcUpdates?, busyMs?, busyChunks?,
 * reportModel? } (reportModel: a Hugging Face model record the job reports before its first step, as the real job
 * does once it has read the folder; bcUpdates: warm-start status reports before RL, as the trainer's behaviour cloning sends them; busyMs: each
 * step also blocks its thread that long, in busyChunks pieces with `hooks.interrupted` asked before each, as the
 * trainer's synchronous tensor work does — a stop then drops the step, as the trainer does).
 */
import { syntheticStream, type SyntheticShape } from '../../../core/stability/synthetic';
import type { JobInput, JobReport, JobResult, TrainingJob } from '../../sessions/job';
import type { HfModelRecord } from '../../../shared/api';
import type { TrainerCheckpoint, TrainerHooks } from '../../../core/training/types';

interface SynthConfig {
  steps: number;
  shape?: SyntheticShape;
  stepMs?: number;
  checkpointEvery?: number;
  crashAtStep?: number;
  crashKind?: 'throw' | 'exit';
  bcUpdates?: number;
  busyMs?: number;
  busyChunks?: number;
  reportModel?: HfModelRecord;
}

/** Blocks the thread for `ms` (no event-loop turn), as a tfjs forward/backward pass does. */
function blockFor(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // busy on purpose
  }
}

async function run(input: JobInput, hooks: TrainerHooks, resume?: TrainerCheckpoint, report?: JobReport): Promise<JobResult> {
  const raw = input.config as unknown as SynthConfig & { training?: { steps?: number } };
  // Accepts a real RunConfig too (training.steps), so API tests can start sessions from presets.
  const c: SynthConfig = { ...raw, steps: raw.steps ?? raw.training?.steps ?? 10 };
  const stream = syntheticStream({ steps: c.steps, seed: input.seed, shape: c.shape ?? 'calm' });
  const from = resume ? resume.step : 0;
  if (resume && new TextDecoder().decode(resume.files['state.txt']) !== `step ${resume.step} seed ${input.seed}`) {
    throw new Error('synthetic job: checkpoint state does not match');
  }
  if (c.reportModel) report?.model(c.reportModel);
  let step = from;
  for (let u = 1; u <= (resume ? 0 : (c.bcUpdates ?? 0)); u++) {
    if (c.stepMs) await new Promise((r) => setTimeout(r, c.stepMs));
    hooks.onStatus({ phase: 'warmstart', step: u, totalSteps: c.bcUpdates!, message: `BC loss ${(1 / u).toFixed(4)}` });
  }
  for (let i = from; i < c.steps; i++) {
    if ((await hooks.checkControl()) === 'stop') {
      await hooks.onCheckpoint(checkpoint(step, input.seed));
      return { status: 'stopped', step };
    }
    step = i + 1;
    if (c.crashAtStep !== undefined && step === c.crashAtStep) {
      if (c.crashKind === 'exit') process.exit(3);
      // An uncaught exception outside the job's promise chain: the worker thread dies.
      setTimeout(() => {
        throw new Error(`synthetic crash at step ${step}`);
      }, 0);
      await new Promise(() => undefined);
    }
    if (c.stepMs) await new Promise((r) => setTimeout(r, c.stepMs));
    if (c.busyMs) {
      const chunks = c.busyChunks ?? 1;
      for (let k = 0; k < chunks; k++) {
        if (hooks.interrupted && (await hooks.interrupted('update'))) {
          step = i;
          await hooks.onCheckpoint(checkpoint(step, input.seed));
          return { status: 'stopped', step };
        }
        blockFor(c.busyMs / chunks);
      }
    }
    hooks.onMetrics(stream[i]);
    hooks.onTrajectory({
      step,
      split: 'train',
      env: 'sokoban',
      taskId: `task-${step}`,
      uid: `u${step}`,
      trajUid: `t${step}`,
      won: stream[i].values['episode/success_rate'] > 0.5,
      episodeReturn: stream[i].values['episode/reward_mean'],
      turns: [
        {
          turn: 0,
          observation: 'obs',
          response: '<think>x</think><action>up</action>',
          think: 'x',
          action: 'up',
          formatValid: true,
          actionValid: true,
          reward: 0,
        },
      ],
    });
    hooks.onStatus({ phase: 'rl', step, totalSteps: c.steps });
    if (c.checkpointEvery && step % c.checkpointEvery === 0) await hooks.onCheckpoint(checkpoint(step, input.seed));
  }
  await hooks.onCheckpoint(checkpoint(step, input.seed));
  hooks.onStatus({ phase: 'done', step, totalSteps: c.steps });
  return { status: 'completed', step, backend: { training: 'synthetic', rollout: 'synthetic', detail: 'deterministic test job' } };
}

function checkpoint(step: number, seed: number): TrainerCheckpoint {
  return { step, files: { 'state.txt': new TextEncoder().encode(`step ${step} seed ${seed}`) }, meta: { format: 'synthetic-v1' } };
}

export const syntheticJob: TrainingJob = { run };
