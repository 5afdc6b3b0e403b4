import { crc32 as zlibCrc32 } from 'node:zlib';
import CRC32 from 'crc-32';
import { describe, expect, it } from 'vitest';
import { createWandbParser } from './wandb';
import { encodeWandbRecord } from './wandbProto';
import { SKIP_BAD_CRC, SKIP_TORN, WANDB_BLOCK, WandbLogReader, WandbLogWriter, type Crc32 } from './wandbLog';
import type { SourceStep } from './types';

function payload(n: number, seed: number): Uint8Array {
  const p = new Uint8Array(n);
  for (let i = 0; i < n; i++) p[i] = (i * 31 + seed) & 0xff;
  return p;
}

/** Byte equality without vitest's element-by-element diffing of large typed arrays. */
function same(a: Uint8Array | undefined, b: Uint8Array): boolean {
  if (!a || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function readAll(bytes: Uint8Array, chunk: number, crc32?: Crc32): { got: Uint8Array[]; skipped: Record<string, number> } {
  const got: Uint8Array[] = [];
  const skipped: Record<string, number> = {};
  const r = new WandbLogReader((p) => got.push(p.slice()), skipped, crc32);
  for (let i = 0; i < bytes.length; i += chunk) r.push(bytes.subarray(i, i + chunk));
  r.end();
  return { got, skipped };
}

describe('.wandb framing (LevelDB log after the :W&B header)', () => {
  // Sizes chosen to hit FULL records, FIRST/MIDDLE/LAST across two and three blocks, and a block tail < 7 bytes.
  const sizes = [10, 32_000, 70_000, 1, WANDB_BLOCK - 7 - 7 - 5, 0, 300];
  const w = new WandbLogWriter();
  sizes.forEach((n, i) => w.write(payload(n, i)));
  const bytes = w.take();

  it('gives back every payload, whatever the chunking', () => {
    for (const chunk of [1 << 20, 4096, 7]) {
      const { got, skipped } = readAll(bytes, chunk);
      expect(skipped).toEqual({});
      expect(got.map((g) => g.length)).toEqual(sizes);
      got.forEach((g, i) => expect(same(g, payload(sizes[i], i))).toBe(true));
    }
  });

  it('skips a chunk with a bad CRC (and the rest of its block) and counts it', () => {
    const bad = bytes.slice();
    bad[7 + 7 + 3] ^= 0xff; // inside the first record's payload
    const { got, skipped } = readAll(bad, 1 << 20);
    expect(skipped[SKIP_BAD_CRC]).toBe(1);
    // Block 0 held record 0 and the FIRST part of record 1: both are lost (record 1's later parts are orphans);
    // the records that start in later blocks are all read.
    expect(got.length).toBeLessThan(sizes.length);
    expect(got.length).toBeGreaterThan(0);
    expect(same(got.at(-1), payload(300, sizes.length - 1))).toBe(true);
    // node:zlib's native CRC-32 (what main hands in) reads and refuses the same chunks.
    const native = readAll(bad, 1 << 20, zlibCrc32);
    expect(native.skipped).toEqual(skipped);
    expect(native.got.map((g) => g.length)).toEqual(got.map((g) => g.length));
    expect(readAll(bytes, 4096, zlibCrc32).got.map((g) => g.length)).toEqual(sizes);
  });

  it('node:zlib crc32 continues a CRC as the crc-32 package does (seeds from the type byte, any length)', () => {
    for (const n of [0, 1, 7, 100, 4095, 70_000]) {
      const p = payload(n, n);
      for (const t of [1, 2, 3, 4]) {
        const seed = CRC32.buf(new Uint8Array([t])) >>> 0;
        expect(zlibCrc32(p, seed) >>> 0).toBe(CRC32.buf(p, seed) >>> 0);
      }
    }
  });

  it('counts a torn last record at end() and keeps everything before it', () => {
    const { got, skipped } = readAll(bytes.subarray(0, bytes.length - 100), 1 << 20);
    expect(skipped[SKIP_TORN]).toBe(1);
    expect(got.length).toBe(sizes.length - 1);
  });
});

describe('.wandb records → steps', () => {
  it('reads history rows, nested keys, NaN / ±inf, config, summary, the run record and the exit code', () => {
    const w = new WandbLogWriter();
    w.write(
      encodeWandbRecord({
        run: {
          runId: 'abc',
          displayName: 'n',
          project: 'p',
          runGroup: 'g',
          tags: ['t'],
          config: {
            update: [
              { key: 'algorithm', valueJson: '{"adv_estimator":"grpo"}' },
              { key: '_wandb', valueJson: '{}' },
            ],
          },
        },
      }),
    );
    for (let s = 0; s < 3; s++) {
      w.write(
        encodeWandbRecord({
          history: {
            item: [
              { nestedKey: ['_step'], valueJson: String(s) },
              { nestedKey: ['actor/pg_loss'], valueJson: s === 1 ? 'NaN' : s === 2 ? '-Infinity' : '0.5' },
              { nestedKey: ['timing', 'gen'], valueJson: '1.5' },
              { key: 'flat', valueJson: '2' },
              { nestedKey: ['text'], valueJson: '"hello"' },
              { nestedKey: ['_timestamp'], valueJson: '1.7e9' },
            ],
          },
        }),
      );
    }
    w.write(encodeWandbRecord({ config: { update: [{ nestedKey: ['trainer', 'seed'], valueJson: '7' }] } }));
    w.write(
      encodeWandbRecord({
        summary: {
          update: [
            { nestedKey: ['final/score'], valueJson: '0.75' },
            { nestedKey: ['_runtime'], valueJson: '3' },
          ],
        },
      }),
    );
    w.write(encodeWandbRecord({ exit: { exitCode: 2 } }));
    const steps: SourceStep[] = [];
    const p = createWandbParser((s) => steps.push(s));
    p.push(w.take());
    p.end();
    expect(steps.map((s) => s.step)).toEqual([0, 1, 2]);
    expect(steps[0].values).toEqual({ 'actor/pg_loss': 0.5, 'timing.gen': 1.5, flat: 2 });
    expect(steps[1].values['actor/pg_loss']).toBeNaN();
    expect(steps[2].values['actor/pg_loss']).toBe(Number.NEGATIVE_INFINITY);
    expect(steps[0].wallTime).toBe(1.7e9);
    expect(p.meta.config).toEqual({ algorithm: { adv_estimator: 'grpo' }, trainer: { seed: 7 } });
    expect(p.meta.finalMetrics).toEqual({ 'final/score': 0.75 });
    expect(p.meta.run).toMatchObject({
      tracker: 'wandb',
      id: 'abc',
      name: 'n',
      project: 'p',
      group: 'g',
      tags: ['t'],
      state: 'failed',
      exitCode: 2,
    });
    expect(p.meta.notes.join(' ')).toContain('text');
  });
});
