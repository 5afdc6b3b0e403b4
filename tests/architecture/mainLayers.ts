/**
 * The import graph of src/main's production files, folder by folder, checked against the layer order
 * (eslint.config.js MAIN_LAYERS says the same to lint; docs/architecture.md draws it). Test kits
 * (src/main/testing) and tests (*.test.ts) are outside the product and may import anything in it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, normalize, relative, sep } from 'node:path';

/** Bottom to top; index.ts (the Electron entry) sits above them all. */
export const MAIN_LAYER_ORDER = [
  'platform',
  'compute',
  'store',
  'sessions',
  'bundles',
  'imports',
  'remote',
  'app',
  'api',
  'server',
  'electron',
  'cli',
  'index.ts',
] as const;

const IMPORT = /(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

export interface LayerViolation {
  readonly file: string;
  readonly imports: string;
  readonly why: string;
}

function* productionFiles(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'testing') yield* productionFiles(p);
    } else if (/\.(ts|mts|mjs)$/.test(e.name) && !e.name.includes('.test.') && !e.name.endsWith('.d.ts')) yield p;
  }
}

/** Every import in `mainDir`'s production files that goes up a layer, into a test kit, or into an unknown area. */
export function mainLayerViolations(mainDir: string): LayerViolation[] {
  const rank = (area: string): number => (MAIN_LAYER_ORDER as readonly string[]).indexOf(area);
  const areaOf = (p: string): string => relative(mainDir, p).split(sep)[0];
  const out: LayerViolation[] = [];
  for (const file of productionFiles(mainDir)) {
    const from = areaOf(file);
    const rel = relative(mainDir, file);
    if (rank(from) < 0) out.push({ file: rel, imports: '', why: `"${from}" is not a layer (${MAIN_LAYER_ORDER.join(' < ')})` });
    for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const target = normalize(join(file, '..', m[1] ?? m[2]));
      if (!target.startsWith(mainDir + sep)) continue;
      const to = areaOf(target);
      if (to === from) continue;
      if (to === 'testing') out.push({ file: rel, imports: m[1] ?? m[2], why: 'the product imports a test kit' });
      else if (rank(to) < 0 || rank(to) > rank(from))
        out.push({ file: rel, imports: m[1] ?? m[2], why: `${from} may not import ${to} (a layer above it, or none)` });
    }
  }
  return out;
}
