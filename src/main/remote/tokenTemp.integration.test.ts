/**
 * A cluster's token is written to <dataDir>/remote-tokens/NAME.token through a temp file beside it (0600, synced,
 * renamed in). `arlarena remote add` killed before the rename (a session's end SIGKILLing it) left the temp — the
 * token in clear — for good: `arlarena remote remove NAME` removed the token file and not it, and every later
 * add left another. The kill here is real: the CLI with a kill point in its own process (testing/cliKillPoint.mjs).
 */
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { CLI, KILL_POINT_CLI, runNode as cli, tempDirForFile } from '../testing/cliKill';

const TOKEN = 'arl-test-token-5f2c9e';
const tmp = tempDirForFile('arl-token-temp-');

/** The files under remote-tokens/ that hold the token. */
async function holding(data: string): Promise<string[]> {
  const d = join(data, 'remote-tokens');
  const out: string[] = [];
  for (const n of await readdir(d).catch(() => [] as string[])) if ((await readFile(join(d, n), 'utf8')).includes(TOKEN)) out.push(n);
  return out.sort();
}

it('a remote add killed before its token is renamed in leaves no copy of the token once the remote is added again and removed', async () => {
  const data = join(tmp.path, 'data');
  const tokenFile = join(tmp.path, 'token');
  await writeFile(tokenFile, `${TOKEN}\n`);
  const add = ['--data-dir', data, 'remote', 'add', 'c1', 'http://127.0.0.1:9', '--token-file', tokenFile];
  const killed = await cli([KILL_POINT_CLI, '1', 'secret-before-rename', ...add]);
  expect(killed.signal, killed.err).toBe('SIGKILL');
  expect(await holding(data)).toEqual([expect.stringMatching(/^c1\.token\.p\d+(?:s\d+)?h[0-9a-f]{8}\.tmp$/)]);

  const again = await cli([CLI, ...add]);
  expect(again.code, again.err).toBe(0);
  expect(await holding(data)).toEqual(['c1.token']);
  const removed = await cli([CLI, '--data-dir', data, 'remote', 'remove', 'c1']);
  expect(removed.code, removed.err).toBe(0);
  expect(await holding(data)).toEqual([]);
}, 60_000);
