import { describe, expect, it } from 'vitest';
import { frameRecord, tensorboardChunks } from './export/tensorboard';
import { createTensorboardParser, halfToNumber, type TensorboardParserOptions } from './tensorboard';
import { DT, EventType } from './tensorboardProto';
import type { MetricRecord } from '../../shared/metrics';
import type { SourceStep } from './types';

// Fixtures are framed Event protos built here with the same descriptor; files from TensorBoard's own writer
// are covered in tests/tensorboard.peer.test.ts.
const enc = (e: Record<string, unknown>): Uint8Array => frameRecord(EventType.encode(EventType.create(e)).finish());
const versionRecord = enc({ wallTime: 1, fileVersion: 'brain.Event:2' });
const simple = (step: number, values: Record<string, number>, wallTime = 100 + step): Uint8Array =>
  enc({ wallTime, step, summary: { value: Object.entries(values).map(([tag, simpleValue]) => ({ tag, simpleValue })) } });
const tensorValue = (tag: string, tensor: Record<string, unknown>, plugin?: string): Record<string, unknown> =>
  plugin === undefined ? { tag, tensor } : { tag, tensor, metadata: { pluginData: { pluginName: plugin } } };
const tensorEvent = (step: number, values: Record<string, unknown>[]): Uint8Array => enc({ wallTime: 5, step, summary: { value: values } });

function cat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

function parse(bytes: Uint8Array, chunk = bytes.length, opts?: TensorboardParserOptions) {
  const steps: SourceStep[] = [];
  const p = createTensorboardParser((s) => steps.push(s), opts);
  for (let i = 0; i < bytes.length; i += Math.max(1, chunk)) p.push(bytes.subarray(i, i + Math.max(1, chunk)));
  p.end();
  return { steps, p };
}

const stepsOf = (steps: SourceStep[]): number[] => steps.map((s) => s.step);

describe('TensorBoard parser: framing', () => {
  const file = cat(
    versionRecord,
    simple(1, { a: 1, b: 2 }),
    simple(2, { a: 3, b: Number.NaN }),
    simple(3, { a: Number.POSITIVE_INFINITY }),
  );

  it('reads the same steps whatever the chunk sizes, wall_time included', () => {
    const whole = parse(file);
    expect(stepsOf(whole.steps)).toEqual([1, 2, 3]);
    expect(whole.steps[1].values.a).toBe(3);
    expect(whole.steps[1].values.b).toBeNaN();
    expect(whole.steps[2].values.a).toBe(Number.POSITIVE_INFINITY);
    expect(whole.steps[0].wallTime).toBe(101);
    expect(whole.p.skipped).toEqual({});
    expect(whole.p.records).toBe(4);
    expect(whole.p.scalars).toBe(5);
    expect(whole.p.meta.notes).toContain('file version brain.Event:2');
    for (const chunk of [1, 3, 11, 12, 13, 16, 29, 64]) {
      const { steps, p } = parse(file, chunk);
      expect(steps, `chunk ${chunk}`).toEqual(whole.steps);
      expect(p.skipped, `chunk ${chunk}`).toEqual({});
    }
  });

  it('copies carried bytes: a caller may reuse its read buffer after push()', () => {
    const steps: SourceStep[] = [];
    const p = createTensorboardParser((s) => steps.push(s));
    const buf = new Uint8Array(7);
    for (let i = 0; i < file.length; i += 7) {
      const n = Math.min(7, file.length - i);
      buf.set(file.subarray(i, i + n));
      p.push(buf.subarray(0, n));
      buf.fill(0xee);
    }
    p.end();
    expect(stepsOf(steps)).toEqual([1, 2, 3]);
    expect(p.skipped).toEqual({});
  });

  it('skips a record whose data CRC fails, counts it, and reads the rest', () => {
    const bad = file.slice();
    // A byte inside the second record's data (its header is 12 bytes).
    bad[versionRecord.length + 14] ^= 0x40;
    const { steps, p } = parse(bad, 5);
    expect(stepsOf(steps)).toEqual([2, 3]);
    expect(p.skipped).toEqual({ 'bad crc': 1 });
  });

  it('resynchronises after a corrupt length: one "bad crc" for the lost stretch, later records read', () => {
    const bad = file.slice();
    bad[versionRecord.length + 2] ^= 0x01; // the second record's length field
    const { steps, p } = parse(bad, 9);
    expect(stepsOf(steps)).toEqual([2, 3]);
    expect(p.skipped).toEqual({ 'bad crc': 1 });
    expect(p.meta.notes.some((n) => /bytes skipped where the record framing was lost/.test(n))).toBe(true);
  });

  it('counts a torn tail (a writer killed mid-record) and keeps every whole record', () => {
    for (const cut of [1, 5, 12, 20]) {
      const { steps, p } = parse(file.subarray(0, file.length - cut), 8);
      expect(stepsOf(steps), `cut ${cut}`).toEqual([1, 2]);
      expect(p.skipped, `cut ${cut}`).toEqual({ 'torn tail': 1 });
    }
  });

  it('reads nothing from garbage and says the framing was never found', () => {
    const garbage = new TextEncoder().encode('step:1 - loss:0.5\n'.repeat(40));
    const { steps, p } = parse(garbage, 100);
    expect(steps).toEqual([]);
    expect(p.skipped).toEqual({ 'bad crc': 1 });
    expect(p.records).toBe(0);
    expect(p.meta.notes.some((n) => /not a file_version event/.test(n))).toBe(true);
  });

  it('counts a record whose CRCs hold but whose bytes are not an Event', () => {
    const notProto = frameRecord(new Uint8Array([0x0a, 0x7f, 0x01]));
    const { steps, p } = parse(cat(versionRecord, notProto, simple(4, { a: 1 })));
    expect(stepsOf(steps)).toEqual([4]);
    expect(p.skipped).toEqual({ 'undecodable record': 1 });
  });

  it('refuses push() after end()', () => {
    const p = createTensorboardParser(() => undefined);
    p.end();
    expect(() => p.push(versionRecord)).toThrow(/after end/);
  });
});

describe('TensorBoard parser: steps and reordering', () => {
  it('merges events for several tags at one step into one SourceStep (one Event per scalar, as PyTorch writes)', () => {
    const file = cat(versionRecord, simple(10, { a: 1 }), simple(10, { b: 2 }), simple(20, { a: 3 }), simple(20, { b: 4 }));
    const { steps } = parse(file);
    expect(steps.map((s) => [s.step, s.values])).toEqual([
      [10, { a: 1, b: 2 }],
      [20, { a: 3, b: 4 }],
    ]);
  });

  it('places values of an interleaving writer into their steps when within the window, in step order', () => {
    const file = cat(
      versionRecord,
      simple(1, { a: 1 }),
      simple(2, { a: 2 }),
      simple(1, { b: 10 }),
      simple(3, { a: 3 }),
      simple(2, { b: 20 }),
      simple(3, { b: 30 }),
    );
    const { steps, p } = parse(file, 13, { reorderWindow: 2 });
    expect(steps.map((s) => [s.step, s.values])).toEqual([
      [1, { a: 1, b: 10 }],
      [2, { a: 2, b: 20 }],
      [3, { a: 3, b: 30 }],
    ]);
    expect(p.meta.notes.some((n) => /went back/.test(n))).toBe(false);
  });

  it('starts a new pass when a step comes back from beyond the window (a restarted writer), losing nothing', () => {
    const first = Array.from({ length: 6 }, (_, i) => simple(i, { loss: i }));
    const again = Array.from({ length: 3 }, (_, i) => simple(i, { loss: 100 + i }));
    const { steps, p } = parse(cat(versionRecord, ...first, ...again), 10, { reorderWindow: 2 });
    expect(stepsOf(steps)).toEqual([0, 1, 2, 3, 4, 5, 0, 1, 2]);
    expect(steps.slice(6).map((s) => s.values.loss)).toEqual([100, 101, 102]);
    expect(p.meta.notes.some((n) => /went back 1 time/.test(n))).toBe(true);
  });

  it('flushPending() emits the open steps now (a live follower whose file went idle)', () => {
    const steps: SourceStep[] = [];
    const p = createTensorboardParser((s) => steps.push(s));
    p.push(cat(versionRecord, simple(1, { a: 1 }), simple(2, { a: 2 })));
    expect(steps).toEqual([]);
    p.flushPending();
    expect(stepsOf(steps)).toEqual([1, 2]);
    p.push(simple(3, { a: 3 }));
    p.end();
    expect(stepsOf(steps)).toEqual([1, 2, 3]);
  });

  it('refuses a reorder window that is not a positive integer', () => {
    expect(() => createTensorboardParser(() => undefined, { reorderWindow: 0 })).toThrow(/reorderWindow/);
  });
});

describe('TensorBoard parser: summaries', () => {
  it('reads rank-0 scalar tensors of every numeric representation', () => {
    const f32 = new Uint8Array(4);
    new DataView(f32.buffer).setFloat32(0, 0.1, true);
    const f64 = new Uint8Array(8);
    new DataView(f64.buffer).setFloat64(0, 0.1, true);
    const i64 = new Uint8Array(8);
    new DataView(i64.buffer).setBigInt64(0, -(2n ** 40n), true);
    const file = cat(
      versionRecord,
      tensorEvent(7, [
        tensorValue('f32', { dtype: DT.FLOAT, tensorShape: {}, floatVal: [0.1] }, 'scalars'),
        tensorValue('f64', { dtype: DT.DOUBLE, tensorShape: {}, doubleVal: [0.1] }, 'scalars'),
        tensorValue('i32', { dtype: DT.INT32, tensorShape: {}, intVal: [-3] }, 'scalars'),
        tensorValue('i64', { dtype: DT.INT64, tensorShape: {}, int64Val: [2 ** 40] }, 'scalars'),
        // 16512 = 0x4080 is 2.25 in binary16 (what tensor_util.make_tensor_proto(np.float16(2.25)) stores).
        tensorValue('half', { dtype: DT.HALF, tensorShape: {}, halfVal: [16512] }, 'scalars'),
        // bfloat16 0x3fc0 is the top half of float32 1.5.
        tensorValue('bf16', { dtype: DT.BFLOAT16, tensorShape: {}, halfVal: [0x3fc0] }, 'scalars'),
        tensorValue('bool', { dtype: DT.BOOL, tensorShape: {}, boolVal: [true] }, 'scalars'),
        tensorValue('content_f32', { dtype: DT.FLOAT, tensorShape: {}, tensorContent: f32 }, 'scalars'),
        tensorValue('content_f64', { dtype: DT.DOUBLE, tensorShape: {}, tensorContent: f64 }, 'scalars'),
        tensorValue('content_i64', { dtype: DT.INT64, tensorShape: {}, tensorContent: i64 }, 'scalars'),
        // No plugin metadata at all: a bare rank-0 float tensor is still a scalar.
        tensorValue('bare', { dtype: DT.FLOAT, floatVal: [4] }),
      ]),
    );
    const { steps, p } = parse(file);
    expect(steps).toHaveLength(1);
    expect(steps[0].values).toEqual({
      f32: Math.fround(0.1),
      f64: 0.1,
      i32: -3,
      i64: 2 ** 40,
      half: 2.25,
      bf16: 1.5,
      bool: 1,
      content_f32: Math.fround(0.1),
      content_f64: 0.1,
      content_i64: -(2 ** 40),
      bare: 4,
    });
    expect(p.skipped).toEqual({});
  });

  it('ignores text, histogram, image, audio and non-scalar tensors, counting them in the notes', () => {
    const file = cat(
      versionRecord,
      tensorEvent(1, [
        tensorValue('notes', { dtype: DT.STRING, tensorShape: {}, stringVal: [new TextEncoder().encode('hello')] }, 'text'),
        tensorValue(
          'hist',
          { dtype: DT.DOUBLE, tensorShape: { dim: [{ size: 2 }, { size: 3 }] }, doubleVal: [0, 1, 2, 1, 2, 3] },
          'histograms',
        ),
        tensorValue('vec', { dtype: DT.FLOAT, tensorShape: { dim: [{ size: 2 }] }, floatVal: [1, 2] }),
        { tag: 'img', image: new Uint8Array([1, 2, 3]) },
        { tag: 'old', histo: new Uint8Array([9, 0, 0, 0, 0, 0, 0, 0, 0]) },
        { tag: 'snd', audio: new Uint8Array([13, 0, 0, 128, 63]) },
        { tag: 'loss', simpleValue: 0.5 },
      ]),
      // The histogram tag again without metadata: its plugin is remembered, so this rank-0-looking value with
      // the tag's plugin is still not a scalar.
      tensorEvent(2, [tensorValue('hist', { dtype: DT.DOUBLE, tensorShape: {}, doubleVal: [1] }), { tag: 'loss', simpleValue: 0.25 }]),
    );
    const { steps, p } = parse(file);
    expect(steps.map((s) => [s.step, s.values])).toEqual([
      [1, { loss: 0.5 }],
      [2, { loss: 0.25 }],
    ]);
    expect(p.skipped).toEqual({});
    const note = p.meta.notes.find((n) => n.startsWith('non-scalar summaries ignored'));
    expect(note).toBe('non-scalar summaries ignored: text 1, histograms 2, non-scalar tensor 1, image 1, histogram 1, audio 1');
  });

  it("takes the HF Trainer's args / model_config text summaries as the run's config", () => {
    const json = (o: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(o));
    const file = cat(
      versionRecord,
      tensorEvent(0, [
        tensorValue(
          'args/text_summary',
          { dtype: DT.STRING, tensorShape: { dim: [{ size: 1 }] }, stringVal: [json({ learning_rate: 1e-5, output_dir: 'runs/x' })] },
          'text',
        ),
        tensorValue(
          'model_config/text_summary',
          { dtype: DT.STRING, tensorShape: { dim: [{ size: 1 }] }, stringVal: [json({ model_type: 'qwen2' })] },
          'text',
        ),
      ]),
    );
    const { steps, p } = parse(file);
    expect(steps).toEqual([]);
    expect(p.meta.config).toEqual({ args: { learning_rate: 1e-5, output_dir: 'runs/x' }, model_config: { model_type: 'qwen2' } });
    expect(p.meta.framework).toBe('trl');
  });

  it('converts binary16 exactly, subnormals and specials included', () => {
    expect(halfToNumber(0x3c00)).toBe(1);
    expect(halfToNumber(0xc000)).toBe(-2);
    expect(halfToNumber(0x0001)).toBe(2 ** -24);
    expect(halfToNumber(0x7bff)).toBe(65504);
    expect(halfToNumber(0x7c00)).toBe(Number.POSITIVE_INFINITY);
    expect(halfToNumber(0xfc00)).toBe(Number.NEGATIVE_INFINITY);
    expect(halfToNumber(0x7e00)).toBeNaN();
  });
});

describe('TensorBoard export → parser', () => {
  it('writes what the parser reads back: float32-rounded simple_values, absent keys absent, NaN/inf kept', () => {
    const records: MetricRecord[] = [
      { step: 0, values: { loss: 0.1, score: Number.NaN, gone: Number.NaN } },
      { step: 5, values: { loss: Number.NEGATIVE_INFINITY, score: 1 / 3, gone: Number.NaN } },
      { step: 6, values: { score: 2 } },
    ];
    const bytes = cat(...tensorboardChunks(records, { startWallTime: 1000 }));
    const { steps, p } = parse(bytes, 17);
    expect(p.skipped).toEqual({});
    // 'gone' is NaN at every step: not part of this run, not exported.
    expect(steps.map((s) => [s.step, s.values, s.wallTime])).toEqual([
      [0, { loss: Math.fround(0.1), score: Number.NaN }, 1000],
      [5, { loss: Number.NEGATIVE_INFINITY, score: Math.fround(1 / 3) }, 1000],
      [6, { score: 2 }, 1000],
    ]);
  });

  it('refuses a step TensorBoard cannot hold', () => {
    expect(() => [...tensorboardChunks([{ step: 1.5, values: { a: 1 } }], { startWallTime: 0 })]).toThrow(/non-negative integers/);
  });
});

describe('TensorBoard parser: the simple_value fast path and the records it leaves to the full reader', () => {
  it('reads steps of every varint length, scalars with plugin metadata, and several values per event the same way', () => {
    const withMeta = enc({
      wallTime: 7,
      step: 4,
      summary: { value: [{ tag: 'm', simpleValue: 0.25, metadata: { pluginData: { pluginName: 'scalars' } } }] },
    });
    const file = cat(
      versionRecord,
      simple(1, { a: 0.5, b: -2, 'c/d': 3 }),
      simple(2 ** 21 + 5, { a: 1 }), // 4-byte varint
      simple(2 ** 48 + 3, { a: 2 }), // 7 bytes: the longest the fast path takes
      simple(2 ** 52 + 1, { a: 3 }), // 8 bytes: the full reader
    );
    const { steps, p } = parse(file);
    expect(stepsOf(steps)).toEqual([1, 2 ** 21 + 5, 2 ** 48 + 3, 2 ** 52 + 1]);
    expect(steps[0]).toEqual({ run: '', step: 1, values: { a: 0.5, b: -2, 'c/d': 3 }, wallTime: 101 });
    expect(steps[3].values).toEqual({ a: 3 });
    expect(p.records).toBe(5);
    expect(p.scalars).toBe(6);
    // A value carrying plugin metadata goes through the full reader and still counts as a scalar.
    const m = parse(cat(versionRecord, withMeta, simple(5, { m: 0.5 })));
    expect(m.steps.map((s) => [s.step, s.values.m, s.wallTime])).toEqual([
      [4, 0.25, 7],
      [5, 0.5, 105],
    ]);
    expect(m.p.scalars).toBe(2);
  });

  it('a negative step (a 10-byte varint) and an event without a summary take the full reader; the negative step is skipped and counted', () => {
    const { steps, p } = parse(cat(versionRecord, enc({ wallTime: 3, step: 9 }), simple(-1, { a: 1 }, 50), simple(3, { a: 2 })));
    expect(stepsOf(steps)).toEqual([3]);
    expect(steps[0].values).toEqual({ a: 2 });
    expect(p.records).toBe(4);
    expect(p.skipped).toEqual({ 'record whose step is negative or past 2^53': 1 });
  });
});
