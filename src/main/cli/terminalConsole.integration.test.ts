/**
 * What the CLI's processes log with console.* (the store's warnings, the server's and the API's failures, the
 * session manager's) is escaped like every other line the CLI prints (hardening round three, 4): `arlarena serve`
 * printed a run record's bytes raw in its `[store]` warning, escape codes included.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const ESC = '\x1b';
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-terminal-console-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Control characters other than newline and tab in `text`. */
const controls = (text: string) => [...text].filter((c) => (c < ' ' && c !== '\n' && c !== '\t') || (c >= '\u007f' && c <= '\u009f'));

it("serve's [store] warning quoting a damaged run record shows its escape codes escaped", async () => {
  const data = join(dir, 'data');
  const bin = join(ROOT, 'bin', 'arlarena.mjs');
  expect(spawnSync(process.execPath, [bin, '--data-dir', data, 'runs', 'synth', '--steps', '3'], { cwd: ROOT }).status).toBe(0);
  const [id] = await readdir(join(data, 'runs'));
  // JSON.parse's message quotes the start of the text it could not read: the escape code reaches the warning.
  await writeFile(join(data, 'runs', id, 'run.json'), `${ESC}[31m${ESC}]0;pwned\x07not json`);
  const child = spawn(process.execPath, [bin, '--data-dir', data, 'serve', '--no-build', '--port', '0', '--json'], { cwd: ROOT });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    const deadline = Date.now() + 90_000;
    while (!out.includes('"url"') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(out, err).toContain('"url"');
  } finally {
    child.kill('SIGTERM');
  }
  expect(await exited).toBe(0);
  expect(err).toContain(`Run ${id}: its record run.json was unreadable`);
  expect(err).toContain('"\\u001b[31m\\u001b]0;p"');
  expect(controls(err)).toEqual([]);
  expect(controls(out)).toEqual([]);
}, 120_000);
