/**
 * CSV metric tables:
 * - 'wandb-csv': W&B's chart "Export CSV" — a `Step` column, then `"<run name> - <metric>"` columns, each
 *   with `__MIN` / `__MAX` companions (README §3). One source run per name prefix (SourceStep.run). The
 *   companions are the min/max of the points W&B merged into a displayed point when it downsampled the
 *   chart; for an export of raw points they equal the main series, so only the main series is kept and the
 *   dropped companion columns are named in the notes. Empty cells (one run ended, another goes on) are
 *   absent values, not NaN; a row where a run has no value at all is no step of that run.
 * - 'csv': plain CSV with a header and a step column (CSV_STEP_COLUMNS); every other numeric column is a
 *   metric, single run.
 *
 * Quoting follows RFC 4180: fields may be double-quoted, `""` inside quotes is one quote, a quoted field may
 * hold commas and newlines (a record spanning lines is reassembled first: lines are joined while the record's
 * quote count is odd). The record splitter is written here rather than taken from csv-parse because
 * csv-parse 7.0.3, measured on the real W&B entropy.csv (544 KB) replicated 20×, parses 6.4 MB/s as a whole
 * file (its Node build), 1.8 MB/s in its pure browser build (the one src/core may use), and 0.4 MB/s fed one
 * record at a time as this line-fed interface needs — far from the importer's 50 MB/s goal.
 */
import { bump, MAX_RECORD_KEYS, parseMetricNumber } from './steps';
import type { LineParser, LogFormat, SourceMeta, StepSink } from './types';

/** Step columns of plain CSV, first match wins (W&B history: `_step`; HF/TRL: `global_step`). */
export const CSV_STEP_COLUMNS: readonly string[] = ['step', 'Step', 'global_step', '_step', 'train/global_step', 'iteration', 'iter'];

const WANDB_COLUMN = / - (?!.* - )/;

/** The cells of one CSV record (a header or a row), or null when it is not valid CSV. */
export function csvHeader(line: string): string[] | null {
  return parseRecord(line);
}

/**
 * Splits one CSV record into its cells (RFC 4180). Returns null for a malformed record: text after a closing
 * quote other than a comma, or a quote left open.
 */
export function parseRecord(text: string): string[] | null {
  const s = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (s.indexOf('"') < 0) return s.split(',');
  const cells: string[] = [];
  let i = 0;
  for (;;) {
    if (s.charCodeAt(i) === 34 /* " */) {
      let cell = '';
      let from = i + 1;
      for (;;) {
        const q = s.indexOf('"', from);
        if (q < 0) return null;
        if (s.charCodeAt(q + 1) === 34) {
          cell += s.slice(from, q + 1);
          from = q + 2;
          continue;
        }
        cell += s.slice(from, q);
        i = q + 1;
        break;
      }
      cells.push(cell);
      if (i === s.length) return cells;
      if (s.charCodeAt(i) !== 44 /* , */) return null;
      i++;
    } else {
      const comma = s.indexOf(',', i);
      const end = comma < 0 ? s.length : comma;
      const cell = s.slice(i, end);
      if (cell.indexOf('"') >= 0) return null;
      cells.push(cell);
      if (comma < 0) return cells;
      i = comma + 1;
    }
  }
}

/** W&B's export header: a `Step` column and at least one `<run> - <metric>` column. */
export function isWandbHeader(cols: readonly string[]): boolean {
  return cols.includes('Step') && cols.some((c) => c !== 'Step' && WANDB_COLUMN.test(c));
}

interface Column {
  readonly index: number;
  readonly run: string;
  readonly key: string;
}

function quoteCount(s: string): number {
  let n = 0;
  for (let i = s.indexOf('"'); i >= 0; i = s.indexOf('"', i + 1)) n++;
  return n;
}

function createCsv(format: LogFormat, onStep: StepSink): LineParser {
  const skipped: Record<string, number> = {};
  const meta: SourceMeta = { framework: 'unknown', notes: [] };
  let header: string[] | null = null;
  let stepIndex = -1;
  let columns: Column[] = [];
  let runs: string[] = [];
  let partial = '';
  const nonNumeric = new Set<string>();

  function onHeader(cols: string[]): void {
    header = cols;
    if (format === 'wandb-csv') {
      stepIndex = cols.indexOf('Step');
      const dropped: string[] = [];
      cols.forEach((c, index) => {
        if (index === stepIndex) return;
        if (/__(MIN|MAX)$/.test(c)) {
          dropped.push(c);
          return;
        }
        const m = WANDB_COLUMN.exec(c);
        if (!m) {
          columns.push({ index, run: '', key: c });
          return;
        }
        columns.push({ index, run: c.slice(0, m.index), key: c.slice(m.index + 3) });
      });
      runs = [...new Set(columns.map((c) => c.run))];
      if (dropped.length > 0) meta.notes.push(`${dropped.length} W&B __MIN/__MAX companion column(s) dropped (the main series is kept)`);
      meta.notes.push(`${runs.length} run(s): ${runs.join(', ')}`);
    } else {
      const name = CSV_STEP_COLUMNS.find((s) => cols.some((c) => c.trim() === s));
      stepIndex = name === undefined ? -1 : cols.findIndex((c) => c.trim() === name);
      columns = cols.map((c, index) => ({ index, run: '', key: c.trim() })).filter((c) => c.index !== stepIndex);
      runs = [''];
    }
    // A record carries at most MAX_RECORD_KEYS values, as a JSON line does: a header of 50,000 columns (a 20 MB
    // file) took 1.1 GB to import.
    if (columns.length > MAX_RECORD_KEYS) {
      meta.notes.push(
        `${columns.length - MAX_RECORD_KEYS} column(s) past the first ${MAX_RECORD_KEYS} left out (a record carries at most ${MAX_RECORD_KEYS} values)`,
      );
      columns = columns.slice(0, MAX_RECORD_KEYS);
    }
    if (stepIndex < 0)
      meta.notes.push(
        `no step column in the header (looked for ${format === 'wandb-csv' ? '"Step"' : CSV_STEP_COLUMNS.join(', ')}): no rows can be read`,
      );
  }

  function onRow(cells: string[]): void {
    if (stepIndex < 0) {
      bump(skipped, 'row without a step column in the header');
      return;
    }
    const stepCell = cells[stepIndex];
    const step = stepCell === undefined ? Number.NaN : Number(stepCell.trim());
    if (stepCell === undefined || stepCell.trim() === '' || !Number.isInteger(step) || step < 0) {
      bump(skipped, 'row whose step is not a non-negative integer');
      return;
    }
    const byRun = new Map<string, Record<string, number>>();
    for (const c of columns) {
      const cell = cells[c.index];
      if (cell === undefined || cell === '') continue;
      const v = parseMetricNumber(cell);
      if (v === undefined) {
        nonNumeric.add(c.key);
        continue;
      }
      let vals = byRun.get(c.run);
      if (vals === undefined) {
        vals = {};
        byRun.set(c.run, vals);
      }
      vals[c.key] = v;
    }
    for (const run of runs) {
      const values = byRun.get(run);
      if (values !== undefined) onStep({ run, step, values });
    }
  }

  return {
    format,
    skipped,
    meta,
    push(line: string): void {
      const text = partial === '' ? line : `${partial}\n${line}`;
      if (quoteCount(text) % 2 === 1) {
        // A quoted field goes on to the next line.
        partial = text;
        return;
      }
      partial = '';
      if (text.trim() === '') return;
      const cells = parseRecord(text);
      if (cells === null) {
        bump(skipped, 'unparsable CSV row');
        return;
      }
      if (header === null) onHeader(cells);
      else onRow(cells);
    },
    end(): void {
      if (partial !== '') {
        bump(skipped, 'unterminated quoted field at the end');
        partial = '';
      }
      if (nonNumeric.size > 0) {
        const keys = [...nonNumeric];
        meta.notes.push(
          `${keys.length} column(s) with non-numeric cells ignored: ${keys.slice(0, 5).join(', ')}${keys.length > 5 ? ', …' : ''}`,
        );
      }
    },
  };
}

export function createWandbCsvParser(onStep: StepSink): LineParser {
  return createCsv('wandb-csv', onStep);
}

export function createCsvParser(onStep: StepSink): LineParser {
  return createCsv('csv', onStep);
}
