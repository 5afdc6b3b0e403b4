/**
 * A TensorBoard step of 2^64 - 1 was stored as step -1 (int64 read signed), while JSONL refuses negative steps: a
 * record whose step is negative or past 2^53 is skipped and counted, its neighbours read.
 */
import { expect, it } from 'vitest';
import { frameRecord } from './export/tensorboard';
import { createTensorboardParser } from './tensorboard';
import { EventType } from './tensorboardProto';
import type { SourceStep } from './types';

const enc = (step: number, v: number) =>
  frameRecord(EventType.encode(EventType.create({ wallTime: 100, step, summary: { value: [{ tag: 'a', simpleValue: v }] } })).finish());

it('steps of 2^64 - 1, -5 and 2^60 are skipped and counted; 1 and 2 are read', () => {
  const parts = [enc(1, 1), enc(-1, 2) /* the same 10 bytes as 2^64 - 1 */, enc(-5, 3), enc(2 ** 60, 4), enc(2, 5)];
  const steps: SourceStep[] = [];
  const p = createTensorboardParser((s) => steps.push(s));
  for (const part of parts) p.push(part);
  p.end();
  expect(steps.map((s) => s.step)).toEqual([1, 2]);
  expect(steps.map((s) => s.values.a)).toEqual([1, 5]);
  expect(p.skipped['record whose step is negative or past 2^53']).toBe(3);
});

it('tags past the first 10,000 of a run are left out and counted', async () => {
  const { MAX_RECORD_KEYS } = await import('./steps');
  const many = frameRecord(
    EventType.encode(
      EventType.create({
        wallTime: 1,
        step: 1,
        summary: { value: Array.from({ length: MAX_RECORD_KEYS + 5 }, (_, i) => ({ tag: `t${i}`, simpleValue: i })) },
      }),
    ).finish(),
  );
  const steps: SourceStep[] = [];
  const p = createTensorboardParser((s) => steps.push(s));
  p.push(many);
  p.push(
    frameRecord(
      EventType.encode(
        EventType.create({
          wallTime: 2,
          step: 2,
          summary: {
            value: [
              { tag: 't0', simpleValue: 1 },
              { tag: 'new', simpleValue: 2 },
            ],
          },
        }),
      ).finish(),
    ),
  );
  p.end();
  expect(Object.keys(steps[0].values)).toHaveLength(MAX_RECORD_KEYS);
  expect(steps[1].values).toEqual({ t0: 1 });
  expect(p.skipped[`value of a tag past the first ${MAX_RECORD_KEYS} tags`]).toBe(6);
});
