import { describe, expect, it } from 'vitest';
import { filesFromDirectory, type DirectoryHandle, type FileHandle } from './dropFiles';

/** A folder handle over a plain tree (what showDirectoryPicker answers, reduced to what the walk reads). */
function dir(name: string, children: (DirectoryHandle | FileHandle)[]): DirectoryHandle {
  return {
    kind: 'directory',
    name,
    async *values() {
      yield* children;
    },
  };
}

function file(name: string, text = name): FileHandle {
  return { kind: 'file', name, getFile: async () => new File([text], name) };
}

describe('filesFromDirectory (Import folder… through the browser folder picker)', () => {
  it('gives every file below the picked folder once, with its path as a folder upload names it', async () => {
    const picked = dir('cluster-job', [
      dir('wandb', [
        dir('offline-run-1-a', [file('run-a.wandb'), dir('files', [file('config.yaml')])]),
        dir('offline-run-2-b', [file('run-b.wandb')]),
      ]),
      file('mlflow.db', 'SQLite format 3'),
    ]);
    const picks = await filesFromDirectory(picked);
    expect(picks.map((p) => p.path)).toEqual([
      'cluster-job/wandb/offline-run-1-a/run-a.wandb',
      'cluster-job/wandb/offline-run-1-a/files/config.yaml',
      'cluster-job/wandb/offline-run-2-b/run-b.wandb',
      'cluster-job/mlflow.db',
    ]);
    expect(picks.map((p) => p.file.name)).toEqual(['run-a.wandb', 'config.yaml', 'run-b.wandb', 'mlflow.db']);
    expect(await picks[3].file.text()).toBe('SQLite format 3');
  });

  it('an empty folder gives nothing', async () => {
    expect(await filesFromDirectory(dir('empty', []))).toEqual([]);
  });
});
