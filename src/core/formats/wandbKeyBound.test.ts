/**
 * The `.wandb` reader's memory is bounded by a run's key bound (MAX_RUN_KEYS): a file whose every row brings
 * hundreds of new keys kept each one (its slot, string, bytes and first-seen place) until the end of the import,
 * although the steps carry only the first MAX_RUN_KEYS — 2,000 rows of 500 new keys retained 105 MB. The file is
 * written with the test kit's writer (WandbLogWriter + encodeWandbRecord, as the exporter writes W&B's records).
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { expect, it } from 'vitest';
import { MAX_RUN_KEYS, SKIP_KEYS_PAST_RUN_LIMIT } from './steps';
import { createWandbParser, SKIP_SUMMARY_PAST_RUN_LIMIT } from './wandb';
import { WandbLogWriter } from './wandbLog';
import { encodeWandbRecord, type WandbItem } from './wandbProto';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

function heapAfterGc(): number {
  gc();
  gc();
  return v8.getHeapStatistics().used_heap_size;
}

const ROWS = 600;
const NEW_PER_ROW = 300;
const SHARED = ['actor/pg_loss', 'critic/score/mean', 'perf/throughput'];

/** Row r's items as wandb-core writes them: shared keys, new flat keys, new nested keys and a new dict value. */
function rowItems(r: number): { items: WandbItem[]; keys: string[]; values: number[] } {
  const items: WandbItem[] = [{ nestedKey: ['_step'], valueJson: String(r) }];
  const keys: string[] = [];
  const values: number[] = [];
  const add = (key: string, v: number, item: WandbItem): void => {
    items.push(item);
    keys.push(key);
    values.push(v);
  };
  SHARED.forEach((k, i) => add(k, r + i / 4, { key: k, valueJson: String(r + i / 4) }));
  for (let j = 0; j < NEW_PER_ROW - 3; j++) {
    const v = r * 1000 + j + 0.5;
    if (j % 3 === 0) add(`grp${r}.m${j}`, v, { nestedKey: [`grp${r}`, `m${j}`], valueJson: String(v) });
    else add(`k${r}/m${j}`, v, { nestedKey: [`k${r}/m${j}`], valueJson: String(v) });
  }
  // A dict value: its numbers become `d<r>.a` and `d<r>.b`.
  items.push({ nestedKey: [`d${r}`], valueJson: `{"a": ${r}, "b": ${-r}}` });
  keys.push(`d${r}.a`, `d${r}.b`);
  values.push(r, -r);
  return { items, keys, values };
}

it('keeps the first MAX_RUN_KEYS keys of a .wandb run with their values, counts the rest, and holds memory to the bound', () => {
  const w = new WandbLogWriter();
  const chunks: Uint8Array[] = [];
  for (let r = 0; r < ROWS; r++) {
    const { items } = rowItems(r);
    w.write(encodeWandbRecord({ num: r, history: { item: items, step: { num: r } } }));
    // W&B's summary update after the row: every key of it.
    w.write(encodeWandbRecord({ num: r, summary: { update: items.filter((it) => it.nestedKey?.[0] !== '_step') } }));
    if (r % 50 === 49) chunks.push(w.take());
  }
  w.write(encodeWandbRecord({ exit: { exitCode: 0 } }));
  chunks.push(w.take());

  // What the steps must hold: the run's keys in first-seen order, the first MAX_RUN_KEYS kept (as RunKeyBound keeps them).
  const kept = new Set<string>();
  let dropped = 0;
  let bad = '';
  let steps = 0;
  const before = heapAfterGc();
  const p = createWandbParser((s) => {
    const { keys, values } = rowItems(s.step);
    const want: Record<string, number> = {};
    keys.forEach((k, i) => {
      if (kept.has(k) || kept.size < MAX_RUN_KEYS) {
        kept.add(k);
        want[k] = values[i];
      } else dropped++;
    });
    if (
      !bad &&
      (JSON.stringify(Object.keys(s.values)) !== JSON.stringify(Object.keys(want)) || JSON.stringify(s.values) !== JSON.stringify(want))
    )
      bad = `step ${s.step}: ${Object.keys(s.values).length} keys, want ${Object.keys(want).length}`;
    steps++;
  });
  for (const c of chunks) p.push(c);
  chunks.length = 0;
  const retained = heapAfterGc() - before;
  p.end();

  expect(bad).toBe('');
  expect(steps).toBe(ROWS);
  expect(kept.size).toBe(MAX_RUN_KEYS);
  // Each row: the shared keys, NEW_PER_ROW - 3 new keys and a dict's two.
  expect(dropped).toBe(ROWS * (NEW_PER_ROW - 1) - (MAX_RUN_KEYS - SHARED.length));
  expect(p.skipped[SKIP_KEYS_PAST_RUN_LIMIT]).toBe(dropped);
  // The summary keeps its first MAX_RUN_KEYS keys too (the last value of each); later keys' values are counted.
  const final = p.meta.finalMetrics ?? {};
  const summaryKeys = new Set<string>();
  let dicts = 0;
  for (let r = 0; r < ROWS; r++)
    for (const it of rowItems(r).items.slice(1)) {
      const k = (it.nestedKey ?? [it.key ?? '']).join('.');
      if (summaryKeys.size < MAX_RUN_KEYS && !summaryKeys.has(k)) {
        summaryKeys.add(k);
        if (k.startsWith('d')) dicts++;
      }
    }
  expect(Object.keys(final).length).toBe(MAX_RUN_KEYS + dicts);
  expect(final['actor/pg_loss']).toBe(ROWS - 1);
  expect(final['k0/m1']).toBe(1.5);
  expect(p.skipped[SKIP_SUMMARY_PAST_RUN_LIMIT]).toBeGreaterThan(0);
  // 180,000 distinct keys: the parser held 68 MB (heap after GC) when it kept every key until the bound applied
  // after it; 8.9 MB with the bound applied while parsing, 9.1 MB with three times the rows.
  expect(retained).toBeLessThan(24 * 1024 * 1024);
});

it('names at most MAX_RUN_KEYS non-numeric keys of a .wandb run in its notes, and holds memory to that bound', () => {
  const w = new WandbLogWriter();
  const chunks: Uint8Array[] = [];
  for (let r = 0; r < ROWS; r++) {
    const item: WandbItem[] = [{ nestedKey: ['_step'], valueJson: String(r) }];
    for (let j = 0; j < NEW_PER_ROW; j++) item.push({ nestedKey: [`s${r}/m${j}`], valueJson: '"text"' });
    w.write(encodeWandbRecord({ num: r, history: { item, step: { num: r } } }));
    if (r % 50 === 49) chunks.push(w.take());
  }
  chunks.push(w.take());
  let steps = 0;
  const before = heapAfterGc();
  const p = createWandbParser(() => steps++);
  for (const c of chunks) p.push(c);
  chunks.length = 0;
  const retained = heapAfterGc() - before;
  p.end();
  expect(steps).toBe(ROWS);
  expect(p.meta.notes).toContain(
    `more than ${MAX_RUN_KEYS} non-numeric history key(s) ignored (strings, lists, booleans, media): s0/m0, s0/m1, s0/m2, s0/m3, s0/m4, …`,
  );
  // 180,000 string-valued keys: 25.8 MB held when each was named and had a slot; 5.9 MB now.
  expect(retained).toBeLessThan(12 * 1024 * 1024);
});
