/**
 * A Ray node's own native TensorFlow: the lab's Ray package runs the CLI bundled by esbuild with tfjs inside and
 * no native add-ons (src/main/remote/labPackage.ts). Here the backend selection is bundled the same way (tfjs in,
 * tfjs-node external) and run from a folder with no node_modules, as on a node: without ARLARENA_NATIVE_TF_ROOT it
 * cannot load native TensorFlow and says so; with it pointing at this checkout (where `npm run setup:tensorflow`
 * ran) it trains on tfjs-node, whose backend registers with the bundle's own tfjs. Needs the native build.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { build } from 'esbuild';

const root = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'arl-raynode-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const entry = `
import * as tf from '@tensorflow/tfjs';
import { initBackend } from './src/main/compute/backends.ts';
const info = await initBackend(process.argv[2] ?? 'auto');
const x = tf.tensor2d([[1, 2], [3, 4]]);
const y = tf.matMul(x, x).dataSync();
console.log(JSON.stringify({ training: info.training, tfjsBackend: tf.getBackend(), version: info.tensorflow?.version ?? null, detail: info.detail, y: Array.from(y) }));
`;

async function bundle(): Promise<string> {
  const out = await build({
    stdin: { contents: entry, resolveDir: root, sourcefile: 'probe.mjs', loader: 'ts' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    write: false,
    outfile: 'probe.mjs',
    external: ['@tensorflow/tfjs-node', '@tensorflow/tfjs-node-gpu', '@tensorflow/tfjs-backend-wasm'],
    banner: { js: "import { createRequire as __r } from 'node:module'; const require = __r(import.meta.url);" },
    logLevel: 'error',
  });
  const file = join(dir, 'probe.mjs');
  writeFileSync(file, out.outputFiles[0].contents);
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n');
  return file;
}

function run(
  file: string,
  pref: string,
  env: Record<string, string>,
): {
  status: number | null;
  out: { training: string; tfjsBackend: string; version: string | null; detail: string; y: number[] } | null;
  stderr: string;
} {
  const base = { ...process.env };
  delete base.ARLARENA_NATIVE_TF_ROOT;
  const r = spawnSync(process.execPath, [file, pref], { cwd: dir, encoding: 'utf8', timeout: 120_000, env: { ...base, ...env } });
  const line = r.stdout
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .pop();
  return { status: r.status, out: line ? JSON.parse(line) : null, stderr: r.stderr };
}

describe("a Ray node's own native TensorFlow (ARLARENA_NATIVE_TF_ROOT)", () => {
  it('the bundled CLI trains on tfjs-node from that folder, and without it says native TensorFlow is not installed', async () => {
    const file = await bundle();
    const without = run(file, 'auto', {});
    expect(without.status, without.stderr).toBe(0);
    expect(without.out?.training).toBe('cpu');
    expect(without.out?.detail).toMatch(/@tensorflow\/tfjs-node is not installed/);

    const withRoot = run(file, 'tensorflow', { ARLARENA_NATIVE_TF_ROOT: root });
    expect(withRoot.status, withRoot.stderr).toBe(0);
    expect(withRoot.out?.training).toBe('tensorflow');
    expect(withRoot.out?.tfjsBackend).toBe('tensorflow');
    expect(withRoot.out?.version).toBe('2.21.0');
    expect(withRoot.out?.y).toEqual([7, 10, 15, 22]);

    const wrong = run(file, 'tensorflow', { ARLARENA_NATIVE_TF_ROOT: dir });
    expect(wrong.status).not.toBe(0);
    expect(wrong.stderr).toMatch(/Cannot find package '@tensorflow\/tfjs-node' under ARLARENA_NATIVE_TF_ROOT=.*npm run setup:tensorflow/);
  }, 180_000);
});
