/**
 * Test support: bundle a helper process script (crashWriter.ts, concurrentWriter.ts) once with esbuild (tsx's own
 * compiler) so each spawn is a plain `node` start (~0.1 s) instead of a tsx start (~1–2 s on these machines).
 */
import { fileURLToPath } from 'node:url';

export async function bundleTestProcess(entry: URL, outfile: string): Promise<string> {
  const esbuild = await import('esbuild');
  await esbuild.build({
    entryPoints: [fileURLToPath(entry)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    logLevel: 'error',
  });
  return outfile;
}
