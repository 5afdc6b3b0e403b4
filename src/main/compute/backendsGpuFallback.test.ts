/**
 * On a machine that shows an NVIDIA GPU but has tfjs-node-gpu installed without its built binding (`npm ci` without
 * `setup:tensorflow --gpu`, as in this checkout), `auto` falls back from tfjs-node-gpu to tfjs-node. The GPU package
 * registers its kernels before its import throws, so the CLI printed 155 "The kernel '…' for backend 'tensorflow'
 * is already registered" lines. The GPU is stood in for (nvidiaGpuPresent); both packages are the installed ones.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';

vi.mock('./tensorflow', async (importOriginal) => ({
  ...(await importOriginal<typeof import('./tensorflow')>()),
  nvidiaGpuPresent: () => true,
}));

const req = createRequire(import.meta.url);
const gpuDir = dirname(req.resolve('@tensorflow/tfjs-node-gpu/package.json'));
const gpuUnbuilt = !existsSync(join(gpuDir, 'lib'));

afterEach(() => vi.restoreAllMocks());

it.skipIf(!gpuUnbuilt)(
  'falls back from an unbuilt tfjs-node-gpu to tfjs-node without an "already registered" line per kernel',
  async () => {
    const warn = vi.spyOn(console, 'warn');
    const { initBackend } = await import('./backends');
    const info = await initBackend('auto');
    const repeated = warn.mock.calls.filter((c) => String(c[0]).includes('already registered'));
    expect(repeated).toEqual([]);
    expect(info.unavailable['tensorflow-gpu']).toMatch(/tfjs-node-gpu/);
    expect(['tensorflow', 'wasm']).toContain(info.training);
  },
  60_000,
);
