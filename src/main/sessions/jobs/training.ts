/** The production training job: the real trainer (`runTraining`, src/core/training). */
import type { TrainingJob } from '../job';

export const trainingJob: TrainingJob = {
  async run() {
    throw new Error('the trainer (src/core/training runTraining) is not available in this build yet');
  },
};
