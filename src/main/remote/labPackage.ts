/**
 * The runtime_env working_dir a lab run on Ray runs from, packaged from this lab's own files:
 *   arlarena.mjs      the CLI bundled by esbuild (src/main/cli/main.ts and every pure-JS dependency: tfjs, zod…),
 *                     so a node needs only Node ≥ 20 — no npm install, no tsx;
 *   gradWorker.js     the gradient worker (compute/gradWorker.ts) bundled the same way, found next to the CLI by
 *                     gradPool.ts, so a run on Ray trains with the K workers it was submitted with, as here;
 *   package.json      {name: arlarena-lab, version} (the CLI finds its root and version by it);
 *   node_modules/@tensorflow/tfjs-backend-wasm/{package.json,dist/*.wasm}  the wasm kernels, loaded from disk;
 *   node_modules/onnxruntime-node/  its JS and its Linux x64 native binding (onnxruntime_binding.node and
 *                     libonnxruntime.so.1, from the npm package this lab installed), with onnxruntime-common's JS:
 *                     rollouts on a node run on the same engine as here (Ray nodes are Linux x64; the binding is
 *                     self-contained, it needs no CUDA and no system onnxruntime);
 *   resources/warmstart/  the shipped warm-start checkpoints.
 * tfjs-node is left out: libtensorflow is hundreds of MB and built per machine (setup:tensorflow); a run on Ray
 * trains on tfjs-wasm unless the node has its own build (ARLARENA_NATIVE_TF_ROOT, compute/backends.ts).
 *
 * Ray stores packages content-addressed: the name is `_ray_pkg_<hash>.zip` and the URI `gcs://<name>` (Ray's
 * runtime_env/packaging.py); the lab uploads with `PUT /api/packages/gcs/<name>` only when `GET` says the cluster
 * lacks it, so an unchanged lab uploads once per cluster. The zip is built deterministically (sorted entries,
 * fixed timestamps) and its hash is of its entries, so the same sources give the same name.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { zipSync, type Zippable } from 'fflate';
import { appVersion, projectRoot } from '../platform/appInfo';
import { writeFileAtomic } from '../store/atomic';
import type { RayClient } from './rayClient';

export interface LabPackage {
  readonly uri: string;
  readonly name: string;
  readonly bytes: number;
  readonly files: number;
  readonly uploaded: boolean;
  readonly buildMs: number;
}

async function walk(dir: string, keep: (rel: string) => boolean, root = dir, out: string[] = []): Promise<string[]> {
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) await walk(p, keep, root, out);
    else if (e.isFile() && keep(relative(root, p))) out.push(p);
  }
  return out.sort();
}

/** A key over everything the bundle is built from: the sources, the lock file, the shipped resources. */
async function sourceKey(root: string): Promise<string> {
  const h = createHash('sha256');
  const files = [
    ...(await walk(join(root, 'src'), (r) => r.endsWith('.ts') && !r.endsWith('.test.ts') && !r.startsWith('renderer'))),
    ...(await walk(join(root, 'resources'), () => true)),
    join(root, 'package-lock.json'),
    join(root, 'package.json'),
  ];
  for (const f of files) {
    const s = await stat(f);
    h.update(`${relative(root, f)}\0${s.size}\0${s.mtimeMs}\0`);
  }
  return h.digest('hex').slice(0, 24);
}

const FIXED_TIME = new Date('2026-01-01T00:00:00Z');

/** Build (or reuse from the cache) the package zip. */
export async function buildLabPackage(
  cacheDir = join(tmpdir(), 'arlarena-ray-pkg'),
): Promise<{ zip: Uint8Array; name: string; files: number; buildMs: number }> {
  const t0 = Date.now();
  const root = projectRoot();
  const key = await sourceKey(root);
  const cached = join(cacheDir, `${key}.zip`);
  if (existsSync(cached)) {
    const zip = new Uint8Array(await readFile(cached));
    return {
      zip,
      name: await readFile(`${cached}.name`, 'utf8'),
      files: Number(await readFile(`${cached}.files`, 'utf8')),
      buildMs: Date.now() - t0,
    };
  }
  const { build } = await import('esbuild');
  const bundleOf = async (contents: string, outfile: string): Promise<Uint8Array> => {
    const out = await build({
      stdin: { contents, resolveDir: root, sourcefile: outfile, loader: 'ts' },
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      write: false,
      outfile,
      // Native packages stay imports: onnxruntime-node resolves to the copy in the package's node_modules, tfjs-node
      // to a node's own build or not at all.
      external: ['@tensorflow/tfjs-node', '@tensorflow/tfjs-node-gpu', 'electron', 'onnxruntime-node'],
      // CommonJS dependencies inside an ESM bundle still call require() and read __dirname (tfjs-backend-wasm's loader).
      banner: {
        js: "import { createRequire as __arlarenaRequire } from 'node:module'; import { fileURLToPath as __arlarenaPath } from 'node:url'; import { dirname as __arlarenaDir } from 'node:path'; const require = __arlarenaRequire(import.meta.url); const __filename = __arlarenaPath(import.meta.url); const __dirname = __arlarenaDir(__filename);",
      },
      logLevel: 'error',
    });
    const file = out.outputFiles?.[0];
    if (!file) throw new Error(`esbuild produced no ${outfile} for the Ray package`);
    return file.contents;
  };
  const entries: Record<string, Uint8Array> = {};
  // The same entry as bin/arlarena.mjs, without tsx: `node arlarena.mjs <command> …`.
  entries['arlarena.mjs'] = await bundleOf(
    "import { main } from './src/main/cli/main.ts';\nprocess.exitCode = await main(process.argv.slice(2));\n",
    'arlarena.mjs',
  );
  entries['gradWorker.js'] = await bundleOf("import './src/main/compute/gradWorker.ts';\n", 'gradWorker.js');
  entries['package.json'] = new TextEncoder().encode(
    `${JSON.stringify({ name: 'arlarena-lab', version: appVersion(), private: true, type: 'module' })}\n`,
  );
  const wasmPkg = join(root, 'node_modules', '@tensorflow', 'tfjs-backend-wasm');
  entries['node_modules/@tensorflow/tfjs-backend-wasm/package.json'] = new Uint8Array(await readFile(join(wasmPkg, 'package.json')));
  for (const f of await walk(join(wasmPkg, 'dist'), (r) => r.endsWith('.wasm') && !r.includes('/')))
    entries[`node_modules/@tensorflow/tfjs-backend-wasm/dist/${relative(join(wasmPkg, 'dist'), f)}`] = new Uint8Array(await readFile(f));
  // onnxruntime-node: its JS, its package.json (main), and the Linux x64 binding only (the package has every
  // platform's: 288 MB; Linux x64's is 46 MB, about 17 MB zipped). onnxruntime-common: its CommonJS build (the
  // folder's package.json says so) and the package.json files that route to it.
  const ort = join(root, 'node_modules', 'onnxruntime-node');
  const ortBin = join('bin', 'napi-v6', 'linux', 'x64');
  for (const f of await walk(
    ort,
    (r) => r === 'package.json' || (r.startsWith('dist/') && r.endsWith('.js')) || r.startsWith(`${ortBin}/`),
  ))
    entries[`node_modules/onnxruntime-node/${relative(ort, f)}`] = new Uint8Array(await readFile(f));
  if (!Object.keys(entries).some((k) => k.endsWith('/onnxruntime_binding.node')))
    throw new Error(
      `the Ray package needs onnxruntime-node's Linux x64 binding (${join(ort, ortBin)}): reinstall onnxruntime-node (npm ci)`,
    );
  const common = join(root, 'node_modules', 'onnxruntime-common');
  for (const f of await walk(common, (r) => r.endsWith('package.json') || (r.startsWith('dist/cjs/') && r.endsWith('.js'))))
    entries[`node_modules/onnxruntime-common/${relative(common, f)}`] = new Uint8Array(await readFile(f));
  for (const f of await walk(join(root, 'resources', 'warmstart'), () => true))
    entries[`resources/warmstart/${relative(join(root, 'resources', 'warmstart'), f)}`] = new Uint8Array(await readFile(f));
  const h = createHash('sha256');
  const zippable: Zippable = {};
  for (const k of Object.keys(entries).sort()) {
    h.update(`${k}\0`).update(entries[k]!);
    zippable[k] = [entries[k]!, { mtime: FIXED_TIME, level: 6 }];
  }
  const zip = zipSync(zippable);
  const name = `_ray_pkg_${h.digest('hex').slice(0, 32)}.zip`;
  await mkdir(cacheDir, { recursive: true });
  // One package per source state is kept: older ones (sources edited since) are removed, so the cache stays small.
  for (const f of await readdir(cacheDir))
    if (/^[0-9a-f]+\.zip(\.name|\.files)?$/.test(f) && !f.startsWith(key)) await rm(join(cacheDir, f), { force: true });
  await writeFileAtomic(`${cached}.name`, name);
  await writeFileAtomic(`${cached}.files`, String(Object.keys(entries).length));
  await writeFileAtomic(cached, zip);
  return { zip, name, files: Object.keys(entries).length, buildMs: Date.now() - t0 };
}

const uploadedTo = new Map<string, Promise<LabPackage>>();

/** The package's URI on the cluster, uploading it first when the cluster does not have it yet. */
export function ensureLabPackage(client: RayClient): Promise<LabPackage> {
  let p = uploadedTo.get(client.url);
  if (!p) {
    p = (async () => {
      const pkg = await buildLabPackage();
      const has = await client.hasPackage(pkg.name);
      if (!has) await client.uploadPackage(pkg.name, pkg.zip);
      return {
        uri: `gcs://${pkg.name}`,
        name: pkg.name,
        bytes: pkg.zip.byteLength,
        files: pkg.files,
        uploaded: !has,
        buildMs: pkg.buildMs,
      };
    })();
    uploadedTo.set(client.url, p);
    p.catch(() => uploadedTo.delete(client.url));
  }
  return p;
}
