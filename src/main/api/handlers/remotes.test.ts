/**
 * remotes.* and sessions.start `on` through the real router, without a Ray cluster: what is stored for a pasted
 * token (owner-only, never in a reply), each bad input named by its field, and a cluster nobody answers at (a
 * port closed here) refused before a run exists. The real-Ray side is remotes.ray.test.ts.
 */
import { readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../../tests/support/ray';
import { openHandlerTestLab, type HandlerTestLab } from '../../testing/testLab';
import { createRemotesHandlers } from './remotes';
import { createSessionsHandlers } from './sessions';
import { createRunsHandlers } from './runs';

let lab: HandlerTestLab;
const call = async (m: string, input?: unknown): Promise<any> => lab.call(m, input);
const TOKEN = 'c0ffee'.repeat(10);

beforeAll(async () => {
  lab = await openHandlerTestLab('arl-remotes-', (s) => ({
    ...createRemotesHandlers(s),
    ...createSessionsHandlers(s),
    ...createRunsHandlers(s),
  }));
});
afterAll(() => lab.close());

describe('remotes API (no cluster)', () => {
  it('a pasted token is stored 0600 and only hasToken comes back; remove forgets it', async () => {
    const port = await freePort();
    const added = await call('remotes.add', { name: 'gpu', url: `http://127.0.0.1:${port}/`, token: ` ${TOKEN}\n` });
    expect(added).toEqual({
      ok: true,
      value: { name: 'gpu', url: `http://127.0.0.1:${port}`, hasToken: true, addedAt: expect.any(String) },
    });
    const file = join(lab.dir, 'remote-tokens', 'gpu.token');
    expect(await readFile(file, 'utf8')).toBe(TOKEN);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const list = await call('remotes.list');
    expect(list.value).toEqual([added.value]);
    expect(JSON.stringify(list)).not.toContain(TOKEN);
    expect(await readFile(join(lab.dir, 'remotes.json'), 'utf8')).not.toContain(TOKEN);

    expect(await call('remotes.remove', { name: 'gpu' })).toEqual({ ok: true, value: { removed: true } });
    expect(await readdir(join(lab.dir, 'remote-tokens'))).toEqual([]);
    expect((await call('remotes.remove', { name: 'gpu' })).value).toEqual({ removed: false });
  });

  it('bad input names its field and says the fix', async () => {
    const bad = async (input: unknown) => (await call('remotes.add', input)).error;
    expect(await bad({ name: 'a b', url: 'http://x:8265' })).toMatchObject({ code: 'VALIDATION', field: 'name' });
    expect(await bad({ name: 'local', url: 'http://x:8265' })).toMatchObject({
      code: 'VALIDATION',
      field: 'name',
      message: expect.stringContaining('means this machine'),
    });
    expect(await bad({ name: 'c', url: 'head:8265' })).toMatchObject({ code: 'VALIDATION', field: 'url' });
    expect(await bad({ name: 'c', url: 'http://x:8265', token: 'two words' })).toMatchObject({
      code: 'VALIDATION',
      field: 'token',
      message: expect.stringContaining('only the token'),
    });
    expect(await bad({ name: 'c', url: 'http://x:8265', token: '  ' })).toMatchObject({ code: 'VALIDATION', field: 'token' });
    expect(await bad({ name: 'c', url: 'http://x:8265', token: 'a', tokenFile: '/x' })).toMatchObject({
      code: 'VALIDATION',
      field: 'tokenFile',
    });
    expect(await bad({ name: 'c', url: 'http://x:8265', tokenFile: join(lab.dir, 'nope') })).toMatchObject({
      code: 'VALIDATION',
      field: 'tokenFile',
    });
    expect((await call('remotes.list')).value).toEqual([]);
    expect((await call('remotes.add', { name: 'c', url: 'http://x:8265' })).ok).toBe(true);
    expect(await bad({ name: 'c', url: 'http://y:8265' })).toMatchObject({ code: 'CONFLICT', field: 'name' });
    expect((await call('remotes.test', { name: 'nope' })).error).toMatchObject({
      code: 'NOT_FOUND',
      message: expect.stringContaining('known: c'),
    });
    await call('remotes.remove', { name: 'c' });
  });

  it('a token file named by the page is never read: a 0600 one-word file and a missing one get the same refusal, nothing is stored', async () => {
    const secret = join(lab.dir, 'secret-token');
    await writeFile(secret, 'hunter2hunter2\n', { mode: 0o600 });
    const a = await call('remotes.add', { name: 'exfil', url: 'http://127.0.0.1:9/', tokenFile: secret });
    const b = await call('remotes.add', { name: 'exfil', url: 'http://127.0.0.1:9/', tokenFile: join(lab.dir, 'missing') });
    expect(a.error).toMatchObject({
      code: 'VALIDATION',
      field: 'tokenFile',
      message: 'the app takes a cluster token pasted, not a file on this machine',
    });
    expect(b.error).toEqual(a.error);
    expect(a.error.hint).toContain('--token-file');
    expect((await call('remotes.list')).value).toEqual([]);
    expect(await readdir(join(lab.dir, 'remote-tokens')).catch(() => [])).toEqual([]);
  });

  it('an unreachable cluster: test, jobs and a run on it all say so, and no run is created', async () => {
    const port = await freePort();
    await call('remotes.add', { name: 'down', url: `http://127.0.0.1:${port}`, token: TOKEN });
    const t = await call('remotes.test', { name: 'down' });
    expect(t.error).toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringMatching(/cannot reach the Ray dashboard at remote "down".*ECONNREFUSED/),
    });
    expect((await call('remotes.jobs', { name: 'down' })).error.code).toBe('UNAVAILABLE');
    const before = (await call('runs.list')).value.length;
    const s = await call('sessions.start', { preset: 'grpo', env: 'sokoban', on: 'down' });
    expect(s.error).toMatchObject({ code: 'UNAVAILABLE', field: 'on', message: expect.stringContaining('no run was created') });
    const unknown = await call('sessions.start', { preset: 'grpo', env: 'sokoban', on: 'nowhere' });
    expect(unknown.error).toMatchObject({ code: 'VALIDATION', field: 'on', message: expect.stringContaining('no remote named "nowhere"') });
    expect((await call('runs.list')).value.length).toBe(before);
    expect(JSON.stringify([t, s])).not.toContain(TOKEN);
    await call('remotes.remove', { name: 'down' });
  });
});
