/** `serve --allow-dir` / `start --allow-dir`: each an existing folder, kept absolute; anything else a usage error. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { UsageError } from '../types';
import { parseAllowDirs } from './serve';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-allow-dir-'));
  await writeFile(join(dir, 'file.log'), 'x');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('keeps folders absolute, refuses a missing folder and a file with the fix', () => {
  expect(parseAllowDirs(undefined)).toEqual([]);
  expect(parseAllowDirs([dir, relative(process.cwd(), dir)])).toEqual([dir, dir]);
  expect(() => parseAllowDirs([join(dir, 'nope')])).toThrow(UsageError);
  expect(() => parseAllowDirs([join(dir, 'nope')])).toThrow(/--allow-dir .*nope: no such folder/);
  expect(() => parseAllowDirs([join(dir, 'file.log')])).toThrow(/not a folder; name the folder that holds the file/);
});
