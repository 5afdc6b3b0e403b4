/**
 * Terminal escape codes from outside never reach the terminal raw: the helper every CLI write goes through, and
 * the binary itself printing a run named after a file whose name carries escape codes (`arlarena import`, `runs`).
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { escapeControls, terminalChunk } from './terminalText';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const ESC = '\x1b';
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-terminal-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('escapeControls / terminalChunk', () => {
  it('escapes C0, DEL, C1 and bidi overrides; keeps newline, tab and the CLI progress line', () => {
    expect(escapeControls(`Ray 2.60.0${ESC}[31m\x07\x7f\u009b\u202e\tok\n`)).toBe(
      'Ray 2.60.0\\u001b[31m\\u0007\\u007f\\u009b\\u202e\tok\n',
    );
    expect(terminalChunk(`\rrun-1: step 3 / 9${ESC}[K`)).toBe(`\rrun-1: step 3 / 9${ESC}[K`);
    expect(terminalChunk(`a\rb${ESC}]0;title\x07 ${ESC}[Kc`)).toBe('a\\u000db\\u001b]0;title\\u0007 \\u001b[Kc');
    // In a --json line the escape is the same JSON string.
    const json = JSON.stringify({ name: `x${ESC}[2Jy\u0085` });
    expect(JSON.parse(terminalChunk(json))).toEqual({ name: `x${ESC}[2Jy\u0085` });
  });
});

describe('the binary', () => {
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, [join(ROOT, 'bin', 'arlarena.mjs'), '--data-dir', join(dir, 'data'), ...args], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    });

  it('prints a run named after a file with escape codes in its name escaped (import, runs)', async () => {
    const p = join(dir, `evil${ESC}]0;pwned\x07${ESC}[31mred.log`);
    let text = '';
    for (let i = 1; i <= 4; i++) text += `step:${i} - actor/entropy:0.5 - critic/score/mean:0.${i}\n`;
    await writeFile(p, text);
    const imp = cli('import', p);
    expect(imp.status).toBe(0);
    const runs = cli('runs');
    expect(runs.status).toBe(0);
    for (const out of [imp.stdout, imp.stderr, runs.stdout, runs.stderr])
      expect([...out].filter((c) => (c < ' ' && c !== '\n' && c !== '\t') || (c >= '\u007f' && c <= '\u009f'))).toEqual([]);
    expect(runs.stdout).toContain('evil\\u001b]0;pwned\\u0007\\u001b[31mred.log');
    const bad = cli('import', join(dir, `missing${ESC}[5m.log`));
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('missing\\u001b[5m.log');
    expect(bad.stderr).not.toContain(ESC);
  });
});
