/**
 * Tests only: a registry with one tiny text format of its own (`step:N key=value …`, detected by a first line
 * `#tiny`), so the importer's own behaviour — ordering, merging, duplicates, crash clean-up — is tested apart
 * from the real parsers (those are tested through the default registry on real and writer-made files).
 */
import type { Framework, LineParser, LogFormat, SourceMeta, StepSink } from '../../core/formats/types';
import type { FormatRegistry } from '../imports/registry';

const TINY = 'verl-console' as LogFormat;

export function tinyRegistry(opts: { failAtLine?: number } = {}): FormatRegistry {
  return {
    formats: [TINY],
    detect: (head) => (new TextDecoder().decode(head.subarray(0, 5)) === '#tiny' ? { format: TINY, why: 'starts with #tiny' } : null),
    describe: () => `  ${TINY}: the tiny test format (#tiny, then step:N key=value lines)`,
    isBinary: () => false,
    lineParser(_format: LogFormat, onStep: StepSink): LineParser {
      const skipped: Record<string, number> = {};
      const meta: SourceMeta = { framework: 'verl', notes: [] };
      let n = 0;
      let pending: { step: number; values: Record<string, number> } | null = null;
      const flush = () => {
        if (pending) onStep({ run: '', step: pending.step, values: pending.values });
        pending = null;
      };
      return {
        format: TINY,
        skipped,
        meta,
        push(line: string) {
          n++;
          if (opts.failAtLine === n) throw new Error(`tiny parser: failing at line ${n} as asked`);
          if (line === '#tiny' || line === '') return;
          const m = /^step:(-?\d+)((?: [A-Za-z_/]+=\S+)*)$/.exec(line);
          if (!m) {
            skipped['unparsable line'] = (skipped['unparsable line'] ?? 0) + 1;
            return;
          }
          const step = Number(m[1]);
          const values: Record<string, number> = {};
          for (const kv of m[2].trim().split(' ').filter(Boolean)) {
            const [k, v] = kv.split('=');
            values[k] = v === 'nan' ? NaN : Number(v);
          }
          if (pending && pending.step === step) Object.assign(pending.values, values);
          else {
            flush();
            pending = { step, values };
          }
        },
        end: flush,
      };
    },
    byteParser() {
      throw new Error('the tiny registry has no binary format');
    },
    map(values: Readonly<Record<string, number>>) {
      const out: Record<string, number> = {};
      const keyMap: Record<string, string> = {};
      for (const [k, v] of Object.entries(values)) {
        if (k === 'grad') {
          out['actor/grad_norm'] = v;
          keyMap['actor/grad_norm'] = k;
        } else out[k] = v;
      }
      return { values: out, keyMap };
    },
    guessFramework: (): Framework => 'verl',
  };
}
