import { describe, expect, it } from 'vitest';
import { addTrackers, groupSends, planImport, sniffTracker, trackerFiles, trackerSummary, type TrackerSniff } from './imports';

const enc = (s: string) => new TextEncoder().encode(s);

describe("trackers' runs in the import panel", () => {
  it('says how many runs of which tracker were found, W&B’s two layouts as W&B and MLflow’s two stores as MLflow', () => {
    expect(trackerSummary({ wandb: 3, 'mlflow-sqlite': 1 })).toBe('3 W&B runs, 1 MLflow run');
    // Always W&B, MLflow, Trackio, then any other, whatever order the counts came in.
    expect(trackerSummary({ trackio: 2, 'mlflow-file': 6, swift: 1, 'wandb-files': 1, wandb: 3 })).toBe(
      '4 W&B runs, 6 MLflow runs, 2 Trackio runs, 1 swift run',
    );
    expect(trackerSummary({ wandb: 1, 'wandb-files': 1, 'mlflow-file': 2, 'mlflow-sqlite': 1, trackio: 1 })).toBe(
      '2 W&B runs, 3 MLflow runs, 1 Trackio run',
    );
    expect(trackerSummary({})).toBe('');
    expect(trackerSummary(undefined)).toBe('');
    expect(trackerSummary({ wandb: 0 })).toBe('');
    expect(addTrackers([{ wandb: 2 }, undefined, { wandb: 1, trackio: 1 }])).toEqual({ wandb: 3, trackio: 1 });
  });

  it('recognises trackers’ files by their first bytes, never their names', () => {
    expect(sniffTracker(new Uint8Array([0x3a, 0x57, 0x26, 0x42, 0xe1, 0xbe, 0x00, 0x12]))).toBe('wandb-log');
    expect(sniffTracker(enc('SQLite format 3\0\x10\x00'))).toBe('database');
    expect(sniffTracker(enc("artifact_uri: file:///x\nend_time: 1\nexperiment_id: '0'\nlifecycle_stage: active\nrun_id: abc\n"))).toBe(
      'mlflow-run',
    );
    expect(sniffTracker(enc('{"loss": 0.5, "_runtime": 3.2, "_timestamp": 1577836800.5, "_step": 0}\n'))).toBe('wandb-history');
    // A flat JSONL stream, a W&B file's header cut short, an experiment's meta.yaml, a text file: none.
    expect(sniffTracker(enc('{"step": 0, "loss": 0.5}\n'))).toBeNull();
    expect(sniffTracker(new Uint8Array([0x3a, 0x57, 0x26, 0x42]))).toBeNull();
    expect(sniffTracker(enc("artifact_location: file:///x\nexperiment_id: '0'\nlifecycle_stage: active\nname: Default\n"))).toBeNull();
    expect(sniffTracker(enc('# my runs\n'))).toBeNull();
  });

  it('sends a folder’s tracker files together (logs alone, an MLflow run’s whole folder and its experiment’s meta.yaml, an older W&B run’s folder) and leaves the rest', () => {
    const f = (path: string, size = 10) => ({ name: path.slice(path.lastIndexOf('/') + 1), size, path });
    const files = [
      f('runs/wandb/offline-run-20261204_231637-a1/run-a1.wandb'),
      f('runs/wandb/offline-run-20261204_231637-a1/files/output.log'),
      f('runs/wandb/offline-run-20261204_231637-a1/files/wandb-summary.json'),
      f('runs/wandb/offline-run-20261205_000000-a1/run-a1.wandb'),
      f('runs/mlflow.db'),
      f('runs/mlruns/1/meta.yaml'),
      f('runs/mlruns/1/r1/meta.yaml'),
      f('runs/mlruns/1/r1/metrics/actor/pg_loss'),
      f('runs/mlruns/1/r1/params/data/train_batch_size'),
      f('runs/old/run-20200101_120000-b2/wandb-history.jsonl'),
      f('runs/old/run-20200101_120000-b2/config.yaml'),
      f('runs/old/run-20200101_120000-b2/wandb-summary.json'),
      // wandb 0.9 leaves an empty output.log when the run printed nothing: an upload cannot carry an empty file.
      f('runs/old/run-20200101_120000-b2/output.log', 0),
      f('runs/tb/seed1/events.out.tfevents.1'),
      f('runs/README.md'),
    ];
    const sniff = new Map<(typeof files)[number], TrackerSniff>([
      [files[0], 'wandb-log'],
      // Today's SDK keeps a summary that looks like a history row in files/ below the log: not an older run.
      [files[2], 'wandb-history'],
      [files[3], 'wandb-log'],
      [files[4], 'database'],
      [files[6], 'mlflow-run'],
      [files[9], 'wandb-history'],
    ]);
    const tracked = trackerFiles(files, (x) => sniff.get(x) ?? null);
    expect([...tracked].map((x) => x.path).sort()).toEqual(
      [
        'runs/wandb/offline-run-20261204_231637-a1/run-a1.wandb',
        'runs/wandb/offline-run-20261205_000000-a1/run-a1.wandb',
        'runs/mlflow.db',
        'runs/mlruns/1/meta.yaml',
        'runs/mlruns/1/r1/meta.yaml',
        'runs/mlruns/1/r1/metrics/actor/pg_loss',
        'runs/mlruns/1/r1/params/data/train_batch_size',
        'runs/old/run-20200101_120000-b2/wandb-history.jsonl',
        'runs/old/run-20200101_120000-b2/config.yaml',
        'runs/old/run-20200101_120000-b2/wandb-summary.json',
      ].sort(),
    );
    const plan = planImport(files.map((x) => (tracked.has(x) ? { ...x, tracker: true } : x)));
    // Left out: W&B's output.log and summary, the older run's empty output.log, and the README.
    expect(plan.ignored).toBe(4);
    expect(plan.refusal).toBeNull();
    const groups = groupSends(plan);
    expect(groups.folders.map((g) => g.folder)).toEqual(['runs/tb/seed1']);
    expect(groups.trackers?.folder).toBe('runs');
    expect(groups.trackers?.files).toHaveLength(10);
    expect(groups.trackers?.tooLarge).toBe(false);
  });

  it('a folder with neither event files nor trackers’ files is refused, naming both', () => {
    const plan = planImport([{ name: 'a.txt', size: 3, path: 'x/a.txt' }]);
    expect(plan.refusal).toMatch(/No TensorBoard event file .* and no tracker's run \(W&B, MLflow, Trackio/);
  });
});
