import { describe, expect, it } from 'vitest';
import {
  FILE_LIMIT_BYTES,
  FOLDER_LIMIT_BYTES,
  canForceFormat,
  dataUrlPayload,
  fmtSkipped,
  groupSends,
  isTensorBoardEventFile,
  planImport,
  sendName,
} from './imports';

const f = (name: string, size = 100, path = '') => ({ name, size, path });

describe('planImport', () => {
  it('sends every file picked on its own, whatever its name (the main side detects the format)', () => {
    const plan = planImport([f('train.log'), f('metrics.csv'), f('run.zip'), f('weird.bin')]);
    expect(plan.send.map((x) => x.name)).toEqual(['train.log', 'metrics.csv', 'run.zip', 'weird.bin']);
    expect(plan.refusal).toBeNull();
    expect(plan.ignored).toBe(0);
  });

  it('sends only TensorBoard event files from a folder, as TensorBoard reads it', () => {
    const plan = planImport([
      f('events.out.tfevents.1743501588.host', 100, 'runs/a/events.out.tfevents.1743501588.host'),
      f('events.out.tfevents.2.host.1.0', 100, 'runs/b/events.out.tfevents.2.host.1.0'),
      f('model.safetensors', 5_000, 'runs/checkpoint-10/model.safetensors'),
      f('trainer_state.json', 10, 'runs/checkpoint-10/trainer_state.json'),
    ]);
    expect(plan.send.map((x) => x.path)).toEqual(['runs/a/events.out.tfevents.1743501588.host', 'runs/b/events.out.tfevents.2.host.1.0']);
    expect(plan.ignored).toBe(2);
  });

  it('refuses a folder whose event files are over the limit and names the CLI command', () => {
    const half = FOLDER_LIMIT_BYTES / 2 + 1;
    const plan = planImport([
      f('events.out.tfevents.1', half, 'big/a/events.out.tfevents.1'),
      f('events.out.tfevents.2', half, 'big/b/events.out.tfevents.2'),
    ]);
    expect(plan.send).toEqual([]);
    expect(plan.refusal).toContain('arlarena import big');
    expect(plan.refusal).toContain('200 MB');
  });

  it('says so when a folder holds no event file', () => {
    const plan = planImport([f('a.txt', 10, 'logs/a.txt')]);
    expect(plan.send).toEqual([]);
    expect(plan.refusal).toMatch(/No TensorBoard event file/);
  });

  it('keeps a single file over the per-call limit out and lists it', () => {
    const plan = planImport([f('huge.log', FILE_LIMIT_BYTES + 1), f('small.log')]);
    expect(plan.send.map((x) => x.name)).toEqual(['small.log']);
    expect(plan.tooLarge.map((x) => x.name)).toEqual(['huge.log']);
  });
});

describe('helpers', () => {
  it('recognises event files by base name only', () => {
    expect(isTensorBoardEventFile('runs/x/events.out.tfevents.1.h')).toBe(true);
    expect(isTensorBoardEventFile('tfevents-notes/readme.md')).toBe(false);
  });
  it('formats skipped counts, leaving zeros out', () => {
    expect(fmtSkipped({ 'unparsable line': 3, 'bad crc': 1, other: 0 })).toBe('3 unparsable line, 1 bad crc');
    expect(fmtSkipped({})).toBe('');
  });
  it('takes the payload of a base64 data URL and refuses anything else', () => {
    expect(dataUrlPayload('data:application/octet-stream;base64,QUJD')).toBe('QUJD');
    expect(() => dataUrlPayload('data:text/plain,abc')).toThrow(/not a base64 data URL/);
  });
  it('sends a folder file under its relative path, cut to the API limit from the left', () => {
    expect(sendName(f('e.tfevents', 1, 'runs/a/e.tfevents'))).toBe('runs/a/e.tfevents');
    expect(sendName(f('x.log'))).toBe('x.log');
    expect(sendName(f('e', 1, `${'d/'.repeat(200)}e`)).length).toBe(255);
  });
});

describe('groupSends', () => {
  it("sends a folder's event files together, one group per directory (a restarted writer's two files are one run)", () => {
    const plan = planImport([
      f('events.out.tfevents.2.host', 100, 'runs/a/events.out.tfevents.2.host'),
      f('events.out.tfevents.1.host', 100, 'runs/a/events.out.tfevents.1.host'),
      f('events.out.tfevents.3.host', 50, 'runs/b/events.out.tfevents.3.host'),
      f('notes.md', 10, 'runs/notes.md'),
    ]);
    const g = groupSends(plan);
    expect(g.single).toEqual([]);
    expect(g.folders.map((x) => [x.folder, x.files.map((y) => y.path), x.bytes, x.tooLarge])).toEqual([
      ['runs/a', ['runs/a/events.out.tfevents.1.host', 'runs/a/events.out.tfevents.2.host'], 200, false],
      ['runs/b', ['runs/b/events.out.tfevents.3.host'], 50, false],
    ]);
  });

  it('keeps loose files one by one, and a folder with a file over the limit whole and too large', () => {
    const plan = planImport([
      f('train.log'),
      f('huge.log', FILE_LIMIT_BYTES + 1),
      f('events.out.tfevents.1', FILE_LIMIT_BYTES + 1, 'r/events.out.tfevents.1'),
      f('events.out.tfevents.2', 10, 'r/events.out.tfevents.2'),
    ]);
    const g = groupSends(plan);
    expect(g.single.map((x) => x.name)).toEqual(['train.log']);
    expect(g.tooLarge.map((x) => x.name)).toEqual(['huge.log']);
    expect(g.folders).toHaveLength(1);
    expect(g.folders[0]).toMatchObject({ folder: 'r', tooLarge: true, bytes: FILE_LIMIT_BYTES + 11 });
    expect(g.folders[0].files).toHaveLength(2);
  });
});

describe('canForceFormat', () => {
  it('offers "Import as <format>" only for content in no known format, not for a file that is not there', () => {
    expect(canForceFormat('VALIDATION')).toBe(true);
    expect(canForceFormat('NOT_FOUND')).toBe(false);
    expect(canForceFormat('UNREADABLE')).toBe(false);
    expect(canForceFormat('EMPTY')).toBe(false);
  });
});
