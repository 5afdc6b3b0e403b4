/**
 * HashAside hashes source files on a worker thread while the import reads them: the digest must be the one
 * files.ts sha256File gives (the duplicate check compares records made by either), each file is hashed once per
 * import, and a file that cannot be read fails its own digest (with the errno code) without stopping the others.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sha256File } from './files';
import { HashAside } from './hashAside';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-hash-aside-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('HashAside', () => {
  it('gives the digests sha256File gives, each file hashed once, and a missing file fails alone', async () => {
    // 3 MB: several of the worker's 1 MB reads.
    const big = Buffer.alloc(3 * 1024 * 1024 + 17);
    for (let i = 0; i < big.length; i++) big[i] = (i * 31 + (i >> 11)) & 0xff;
    await writeFile(join(dir, 'big.bin'), big);
    await writeFile(join(dir, 'empty'), '');
    await writeFile(join(dir, 'small.txt'), 'step 1 loss 0.5\n');
    const h = new HashAside();
    try {
      const first = h.sha256(join(dir, 'big.bin'));
      expect(h.sha256(join(dir, 'big.bin'))).toBe(first);
      const missing = h.sha256(join(dir, 'nope'));
      const [b, e, s] = await Promise.all([first, h.sha256(join(dir, 'empty')), h.sha256(join(dir, 'small.txt'))]);
      expect(b).toBe(createHash('sha256').update(big).digest('hex'));
      expect(b).toBe(await sha256File(join(dir, 'big.bin')));
      expect(e).toBe(await sha256File(join(dir, 'empty')));
      expect(s).toBe(await sha256File(join(dir, 'small.txt')));
      await expect(missing).rejects.toMatchObject({ code: 'ENOENT' });
      // The worker is still there after a failure.
      expect(await h.sha256(join(dir, 'small.txt'))).toBe(s);
    } finally {
      await h.close();
    }
  });

  it('close ends the worker: a digest still pending fails instead of hanging', async () => {
    await writeFile(join(dir, 'a'), Buffer.alloc(8 * 1024 * 1024, 7));
    const h = new HashAside();
    const pending = h.sha256(join(dir, 'a'));
    await h.close();
    await expect(pending).rejects.toThrow(/hashing worker stopped/);
  });
});
