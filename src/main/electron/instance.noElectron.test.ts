/**
 * The desktop app's single-instance logic (instance.ts), as its Electron adapter (src/main/index.ts) calls it, with
 * the electron module NOT loaded: the binary cannot run here, so app.requestSingleInstanceLock itself, the
 * 'second-instance' event and the dialog are not exercised — what the lock hands over and what each side says are.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it, vi } from 'vitest';

vi.mock('electron', () => {
  throw new Error('the electron module was loaded: the single-instance logic must not need it');
});

import { alreadyOpenMessage, launchRequest, secondLaunchNote } from './instance';

const own = join('/home', 'ada', '.config', 'ARLArena Lab');

it('a second launch on the same data dir is only brought to the front; one on another folder is told which is open and how to use its own', () => {
  // what the lock hands over survives Electron's structured clone
  const same = structuredClone(launchRequest(join(own, '.', 'runs', '..')));
  expect(same).toEqual({ dataDir: own });
  expect(secondLaunchNote(own, same)).toBeNull();

  const other = structuredClone(launchRequest('/data/lab-b'));
  const note = secondLaunchNote(own, other);
  expect(note).toContain('/data/lab-b');
  expect(note).toContain(`already open on ${own}`);
  expect(note).toContain('arlarena serve --data-dir "/data/lab-b"');
});

it("says nothing for a launch that handed over no data dir (an older version's) or a malformed one", () => {
  for (const request of [undefined, null, {}, { dataDir: 42 }, { dataDir: '' }, 'x']) expect(secondLaunchNote(own, request)).toBeNull();
});

it('the launch that quits says why on stderr, naming the folder it asked for', () => {
  const m = alreadyOpenMessage('/data/lab-b');
  expect(m).toMatch(/^ARLArena Lab is already open for this user/);
  expect(m).toContain('/data/lab-b');
  expect(m).toContain('arlarena serve --data-dir DIR');
});

it('a launch that asked for the open folder by another name (a symlink to it) is only brought to the front', () => {
  const root = mkdtempSync(join(tmpdir(), 'arl-instance-'));
  try {
    const real = join(root, 'data');
    mkdirSync(real);
    symlinkSync(real, join(root, 'lab'));
    expect(secondLaunchNote(real, structuredClone(launchRequest(join(root, 'lab'))))).toBeNull();
    expect(secondLaunchNote(real, structuredClone(launchRequest(join(root, 'other'))))).toContain(join(root, 'other'));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
