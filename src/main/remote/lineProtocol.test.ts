import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeLine, encodeLine, LineSplitter } from './lineProtocol';
import { normalizeUrl, RemoteTargets } from './targets';

describe('line protocol', () => {
  it('a metric record with NaN and ±Infinity survives the round trip exactly, behind a Ray log prefix', () => {
    const rec = { step: 3, values: { a: 0.1, b: NaN, c: Infinity, d: -Infinity, e: 0 } };
    const back = decodeLine(`(pid=123) ${encodeLine('metric', rec)}`);
    expect(back?.type).toBe('metric');
    expect(back?.body).toEqual(rec);
    expect(Number.isNaN((back!.body as typeof rec).values.b)).toBe(true);
  });

  it('ordinary log lines are not messages; a torn message line is an error, not a silent skip', () => {
    expect(decodeLine('step:3 - actor/entropy:0.5')).toBeNull();
    expect(decodeLine('@arlarena:unknown {}')).toBeNull();
    expect(() => decodeLine('@arlarena:metric {"step":3,"val')).toThrow(/not valid JSON.*lost data/);
  });

  it('the splitter joins lines cut across chunks and drops the CR of CRLF', () => {
    const lines: string[] = [];
    const s = new LineSplitter((l) => lines.push(l));
    s.push('ab');
    s.push('c\r\nde');
    s.push('f\ng');
    s.end();
    expect(lines).toEqual(['abc', 'def', 'g']);
  });

  it("takeRest hands back the unfinished last line without passing it on (a line the job's end cut off), then forgets it", () => {
    const lines: string[] = [];
    const s = new LineSplitter((l) => lines.push(l));
    s.push('whole\n@arlarena:metric {"st');
    expect(s.takeRest()).toBe('@arlarena:metric {"st');
    expect(lines).toEqual(['whole']);
    expect(s.takeRest()).toBe('');
    s.end();
    expect(lines).toEqual(['whole']);
  });
});

describe('remote targets (no cluster needed)', () => {
  it('refuses bad names and URLs with the fix, and a URL with credentials in it', async () => {
    expect(() => normalizeUrl('head:8265')).toThrow(/http:\/\/ or https:\/\//);
    expect(() => normalizeUrl('not a url')).toThrow(/give the Ray dashboard's address/);
    expect(() => normalizeUrl('http://u:p@head:8265')).toThrow(/--token-file/);
    expect(normalizeUrl('http://head:8265/')).toBe('http://head:8265');
    const dir = await mkdtemp(join(tmpdir(), 'arl-remotes-'));
    try {
      const t = new RemoteTargets(dir);
      await expect(t.add('bad name', 'http://h:1')).rejects.toThrow(/letters, digits/);
      await expect(t.add('x', 'http://h:1', join(dir, 'missing'))).rejects.toThrow(/no such file/);
      await t.add('x', 'http://h:1');
      await expect(t.add('x', 'http://h:2')).rejects.toThrow(/exists already/);
      await expect(t.resolve('y')).rejects.toThrow(/no remote named "y"; known: x/);
      expect(await t.resolve('http://other:8265')).toEqual({ name: null, url: 'http://other:8265', token: null });
      expect((await stat(join(dir, 'remotes.json'))).isFile()).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
