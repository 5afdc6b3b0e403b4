/**
 * One real-runs file (../shared/data/real-runs) as the importer stores it: detectFormat → the format's parser →
 * mapSourceStep (the framework from the parser, else guessed from the keys), one entry per run in the file (a W&B
 * export holds several).
 */
import { readFileSync } from 'node:fs';
import {
  createByteParser,
  createLineParser,
  detectFormat,
  guessFramework,
  isBinaryFormat,
  mapSourceStep,
  type SourceStep,
} from '../../src/core/formats/index';
import type { MetricRecord } from '../../src/shared/metrics';

export interface LoadedRun {
  readonly run: string;
  readonly records: MetricRecord[];
}

export function loadRealRun(path: string): LoadedRun[] {
  const bytes = new Uint8Array(readFileSync(path));
  const det = detectFormat(bytes);
  if (!det) throw new Error(`no format detected for ${path}`);
  const steps: SourceStep[] = [];
  const sink = (s: SourceStep): void => void steps.push(s);
  let meta;
  if (isBinaryFormat(det.format)) {
    const p = createByteParser(det.format, sink);
    p.push(bytes);
    p.end();
    meta = p.meta;
  } else {
    const p = createLineParser(det.format, sink);
    for (const line of new TextDecoder().decode(bytes).split('\n')) p.push(line.endsWith('\r') ? line.slice(0, -1) : line);
    p.end();
    meta = p.meta;
  }
  const byRun = new Map<string, SourceStep[]>();
  for (const s of steps) {
    let l = byRun.get(s.run);
    if (!l) byRun.set(s.run, (l = []));
    l.push(s);
  }
  return [...byRun].map(([run, ss]) => {
    const framework = meta.framework !== 'unknown' ? meta.framework : guessFramework(Object.keys(ss[0].values));
    return { run, records: ss.map((s) => ({ step: s.step, values: mapSourceStep(s.values, framework).values })) };
  });
}
