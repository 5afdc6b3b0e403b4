/**
 * The hand-written wire walk of `.wandb` history / summary records against protobufjs, which encodes the records
 * here and decodes them the way the reader used to: same steps, keys and values, whatever the varint widths,
 * nested keys, value spellings and unknown fields.
 */
import protobuf from 'protobufjs/light.js';
import { describe, expect, it } from 'vitest';
import type { SourceStep } from './types';
import { createWandbParser } from './wandb';
import { encodeWandbRecord, decodeWandbRecord } from './wandbProto';
import { WandbLogWriter } from './wandbLog';
import { decimalAt, KEY_SLOTS_BY_BYTES, KeySlots, utf8At, Wire, WireError } from './wandbWire';

/** A deterministic stream of numbers in [0, 1) (tests may not use Math.random in this tree). */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const enc = (s: string) => new TextEncoder().encode(s);

describe('the .wandb wire walk', () => {
  it('reads varints and int64s as protobufjs writes them, negative ones included', () => {
    for (const v of [
      0,
      1,
      127,
      128,
      300,
      16_383,
      16_384,
      2 ** 31 - 1,
      2 ** 31,
      2 ** 32 - 1,
      2 ** 32,
      2 ** 40 + 5,
      2 ** 53 - 1,
      -1,
      -2,
      -300,
      -(2 ** 40),
    ]) {
      const w = protobuf.Writer.create();
      w.int64(v);
      const b = w.finish();
      const r = new Wire(b, 0, b.length);
      expect(r.int64()).toBe(v);
      expect(r.p).toBe(b.length);
    }
    for (const v of [0, 1, 127, 128, 2 ** 28, 2 ** 32 - 1]) {
      const b = protobuf.Writer.create().uint32(v).finish();
      expect(new Wire(b, 0, b.length).varint()).toBe(v);
    }
    // Cut inside a varint or a length: a WireError, as protobufjs's Reader throws.
    expect(() => new Wire(new Uint8Array([0x80]), 0, 1).varint()).toThrow(WireError);
    expect(() => new Wire(new Uint8Array([0x05, 1, 2]), 0, 3).span()).toThrow(WireError);
  });

  it('reads a plain decimal from its bytes exactly as Number() reads its text, and declines everything else', () => {
    const rand = lcg(7);
    for (let i = 0; i < 20_000; i++) {
      const digits = 1 + Math.floor(rand() * 17);
      const point = Math.floor(rand() * (digits + 1));
      let s = rand() < 0.3 ? '-' : '';
      for (let d = 0; d < digits; d++) s += (d === point && d > 0 ? '.' : '') + String(Math.floor(rand() * 10));
      const got = decimalAt(enc(s), 0, s.length);
      if (got !== undefined) expect(Object.is(got, Number(s)), s).toBe(true);
    }
    for (const s of ['0.5', '-0.001', '12', '-0', '123456789012345', '0.30000000000000004'])
      if (decimalAt(enc(s), 0, s.length) !== undefined) expect(Object.is(decimalAt(enc(s), 0, s.length), Number(s))).toBe(true);
    for (const s of ['1e-05', 'NaN', 'Infinity', '"x"', '', '-', '.5', '5.', '1.2.3', '{"a":1}', '12345678901234567'])
      expect(decimalAt(enc(s), 0, s.length), s).toBeUndefined();
  });

  it('gives one slot and string per distinct key, by its bytes or by its string, and decodes UTF-8 keys', () => {
    const keys = new KeySlots();
    const a = enc('xxactor/pg_lossyy');
    const s1 = keys.of(a, 2, 15);
    expect(keys.keys[s1]).toBe('actor/pg_loss');
    expect(keys.of(enc('actor/pg_loss'), 0, 13)).toBe(s1);
    expect(keys.ofString('actor/pg_loss')).toBe(s1);
    const s2 = keys.of(enc('actor/pg_lost'), 0, 13);
    expect(s2).not.toBe(s1);
    expect(keys.keys[s2]).toBe('actor/pg_lost');
    // A key first seen as a string (joined nested parts) is the same slot when its bytes come later.
    const s3 = keys.ofString('timing.gen');
    expect(keys.of(enc('timing.gen'), 0, 10)).toBe(s3);
    const u = enc('réponse/longueur');
    expect(keys.keys[keys.of(u, 0, u.length)]).toBe('réponse/longueur');
    expect(utf8At(u, 0, u.length)).toBe('réponse/longueur');
    // Many keys (the table grows), keys past the bytes table's bound and past 256 bytes: still one slot each.
    const many = Array.from({ length: KEY_SLOTS_BY_BYTES + 500 }, (_, i) => `k/${i}`);
    const bytes = many.map(enc);
    const slots = bytes.map((b) => keys.of(b, 0, b.length));
    expect(new Set(slots).size).toBe(many.length);
    expect(bytes.map((b) => keys.of(b, 0, b.length))).toEqual(slots);
    expect(slots.map((slot) => keys.keys[slot])).toEqual(many);
    const long = 'x'.repeat(300);
    expect(keys.of(enc(long), 0, 300)).toBe(keys.ofString(long));
  });

  it('gives the steps protobufjs’s own decoding of the same records gives (random rows, nested keys, every value spelling)', () => {
    const rand = lcg(42);
    const keys = ['actor/pg_loss', 'actor/entropy', 'critic/score/mean', 'val-core/gsm8k/reward/mean@1', 'perf/throughput'];
    const spell = (): string => {
      const r = rand();
      if (r < 0.05) return 'NaN';
      if (r < 0.08) return rand() < 0.5 ? 'Infinity' : '-Infinity';
      if (r < 0.15) return `${(rand() * 10).toExponential(3)}`;
      if (r < 0.2) return '"text"';
      if (r < 0.25) return '{"a": 1.5, "b": {"c": 2}}';
      return String(Math.round((rand() - 0.5) * 1e6) / 10 ** Math.floor(rand() * 8));
    };
    const w = new WandbLogWriter();
    const records: Uint8Array[] = [];
    for (let s = 0; s < 300; s++) {
      const item: { key?: string; nestedKey?: string[]; valueJson: string }[] = [{ nestedKey: ['_step'], valueJson: String(s * 3) }];
      for (const k of keys)
        if (rand() < 0.8) item.push(rand() < 0.5 ? { key: k, valueJson: spell() } : { nestedKey: [k], valueJson: spell() });
      if (rand() < 0.3) item.push({ nestedKey: ['timing', 'gen', `p${Math.floor(rand() * 3)}`], valueJson: spell() });
      const rec = encodeWandbRecord({ num: s, history: { item, step: { num: s * 3 } } });
      // An unknown field (W&B's newer ones) after the history: skipped by both.
      const extra = protobuf.Writer.create()
        .uint32((99 << 3) | 2)
        .bytes(new Uint8Array([1, 2, 3]))
        .uint32((98 << 3) | 0)
        .uint64(2 ** 40)
        .finish();
      const whole = new Uint8Array(rec.length + extra.length);
      whole.set(rec);
      whole.set(extra, rec.length);
      records.push(whole);
      w.write(whole);
      if (s % 10 === 0) w.write(encodeWandbRecord({ summary: { update: [{ nestedKey: ['final'], valueJson: String(s) }] } }));
    }
    const steps: SourceStep[] = [];
    const p = createWandbParser((x) => steps.push(x));
    p.push(w.take());
    p.end();
    // What the same records give through protobufjs's decoding, row by row.
    const want = records.map((b) => {
      const h = decodeWandbRecord(b).history!;
      const values: Record<string, unknown> = {};
      let step = 0;
      for (const it of h.item ?? []) {
        const key = it.nestedKey && it.nestedKey.length > 0 ? it.nestedKey.join('.') : (it.key ?? '');
        const text = it.valueJson ?? '';
        if (key === '_step') {
          step = Number(text);
          continue;
        }
        values[key] = text;
      }
      return { step, values };
    });
    expect(steps.map((s) => s.step)).toEqual(want.map((x) => x.step));
    for (const [i, s] of steps.entries()) {
      for (const [k, text] of Object.entries(want[i].values)) {
        const t = text as string;
        if (t === 'NaN') expect(s.values[k], `${k} @${s.step}`).toBeNaN();
        else if (t === 'Infinity' || t === '-Infinity') expect(s.values[k]).toBe(t === 'Infinity' ? Infinity : -Infinity);
        else if (t.startsWith('"')) expect(s.values[k]).toBeUndefined();
        else if (t.startsWith('{')) {
          expect(s.values[`${k}.a`]).toBe(1.5);
          expect(s.values[`${k}.b.c`]).toBe(2);
        } else expect(Object.is(s.values[k], Number(t)), `${k} = ${t} @${s.step}: got ${s.values[k]}`).toBe(true);
      }
    }
    expect(p.meta.finalMetrics).toEqual({ final: 290 });
    expect(p.skipped).toEqual({});
  });

  it('gives each row its keys in first-seen order, rows with few of the run’s many keys included', () => {
    const w = new WandbLogWriter();
    const wide = Array.from({ length: 100 }, (_, i) => `m/${i}`);
    const row = (step: number, ks: string[]) =>
      encodeWandbRecord({
        history: {
          item: [{ nestedKey: ['_step'], valueJson: String(step) }, ...ks.map((k, i) => ({ nestedKey: [k], valueJson: `${step}.${i}5` }))],
        },
      });
    // Items in another order each row (as wandb-core's Go maps give them); the steps keep the first row's order.
    w.write(row(0, wide));
    w.write(row(1, [...wide].reverse()));
    w.write(row(2, ['m/7', 'new/a', 'm/3']));
    w.write(row(3, ['new/a', 'm/99']));
    w.write(row(4, [...wide.slice(50), 'new/a', ...wide.slice(0, 50)]));
    const steps: SourceStep[] = [];
    const p = createWandbParser((x) => steps.push(x));
    p.push(w.take());
    p.end();
    expect(steps.map((s) => Object.keys(s.values))).toEqual([wide, wide, ['m/3', 'm/7', 'new/a'], ['m/99', 'new/a'], [...wide, 'new/a']]);
    expect(steps[1].values['m/0']).toBe(Number('1.995'));
    expect(steps[2].values).toEqual({ 'm/3': 2.25, 'm/7': 2.05, 'new/a': 2.15 });
    expect(steps[4].values['new/a']).toBe(4.505);
  });

  it('counts a record cut inside an item as undecodable and keeps reading', () => {
    const w = new WandbLogWriter();
    const good = (s: number) =>
      encodeWandbRecord({
        history: {
          item: [
            { nestedKey: ['_step'], valueJson: String(s) },
            { key: 'x', valueJson: '1' },
          ],
        },
      });
    w.write(good(0));
    const cut = good(1);
    w.write(cut.subarray(0, cut.length - 3));
    w.write(good(2));
    const steps: SourceStep[] = [];
    const p = createWandbParser((x) => steps.push(x));
    p.push(w.take());
    p.end();
    expect(steps.map((s) => s.step)).toEqual([0, 2]);
    expect(Object.values(p.skipped).reduce((a, b) => a + b, 0)).toBe(1);
  });
});
