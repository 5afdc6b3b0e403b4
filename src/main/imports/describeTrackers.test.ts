import { describe, expect, it } from 'vitest';
import { describeTrackers } from './importSources';

describe('describeTrackers (the CLI\u2019s "found …" line)', () => {
  it('counts runs per tracker as the app\u2019s import panel does, naming the layouts when there are several or W&B\u2019s older one', () => {
    expect(describeTrackers({ wandb: 4 })).toBe('4 W&B runs');
    expect(describeTrackers({ trackio: 2, 'mlflow-sqlite': 3, wandb: 4, 'mlflow-file': 3 })).toBe(
      '4 W&B runs, 6 MLflow runs (3 file store, 3 SQLite store), 2 Trackio runs',
    );
    expect(describeTrackers({ 'wandb-files': 1 })).toBe('1 W&B run (from older run folders)');
    expect(describeTrackers({ 'wandb-files': 3, wandb: 1 })).toBe('4 W&B runs (1 from .wandb logs, 3 from older run folders)');
    expect(describeTrackers({ wandb: 0, 'mlflow-sqlite': 1 })).toBe('1 MLflow run');
    expect(describeTrackers(undefined)).toBe('');
  });
});
