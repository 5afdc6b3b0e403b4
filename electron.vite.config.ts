/**
 * electron-vite build of the three processes:
 *   src/main/index.ts    → out/main/index.js     (ESM; package.json "main"; npm deps stay external)
 *   src/main/sessions/trainingWorker.ts → out/main/trainingWorker.js (the desktop app's training process)
 *   src/main/compute/gradWorker.ts → out/main/gradWorker.js (a data-parallel gradient worker thread)
 *   src/preload/index.ts → out/preload/index.cjs (CommonJS, so the renderer can run sandboxed)
 *   src/renderer         → out/renderer          (Svelte 5; also what `arlarena serve` serves)
 * `electron-vite build` needs no Electron binary, so browser mode and the e2e tests work without one.
 */
import { resolve } from 'node:path';
import { defineConfig } from 'electron-vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import type { Plugin } from 'vite';

/**
 * Links the app chunk (src/renderer/src/boot.ts) and its stylesheet from index.html as preloads. The entry
 * imports boot.ts dynamically so it can send the first screen's API calls before the app is evaluated; without
 * a preload the browser only asked for the app chunk once the entry had run (~150 ms after the HTML on a cold
 * page), behind those calls on the single-threaded server (bench:ui, cold Compare link). A preload fetches it
 * with the HTML and still evaluates it only when imported; the stylesheet is preloaded, not linked, because a
 * linked stylesheet holds module scripts back until it has loaded.
 */
function preloadAppChunk(): Plugin {
  return {
    name: 'arlarena-preload-app-chunk',
    apply: 'build',
    transformIndexHtml: {
      order: 'post',
      handler(_html, ctx) {
        const boot = Object.values(ctx.bundle ?? {}).find(
          (c) => c.type === 'chunk' && c.facadeModuleId?.endsWith('/src/renderer/src/boot.ts'),
        );
        if (!boot || boot.type !== 'chunk') throw new Error('preloadAppChunk: no chunk for src/renderer/src/boot.ts in the renderer build');
        const css = [...(boot.viteMetadata?.importedCss ?? [])];
        return [
          { tag: 'link', attrs: { rel: 'modulepreload', crossorigin: '', href: `./${boot.fileName}` }, injectTo: 'head' },
          ...css.map((f) => ({
            tag: 'link',
            attrs: { rel: 'preload', as: 'style', crossorigin: '', href: `./${f}` },
            injectTo: 'head' as const,
          })),
        ];
      },
    },
  };
}

export default defineConfig({
  main: {
    build: {
      externalizeDeps: true,
      rolldownOptions: {
        // The training worker is its own entry: the desktop app forks it as a utilityProcess
        // (src/main/sessions/workerHost.ts looks for out/main/trainingWorker.js next to index.js).
        input: {
          index: resolve(import.meta.dirname, 'src/main/index.ts'),
          trainingWorker: resolve(import.meta.dirname, 'src/main/sessions/trainingWorker.ts'),
          // Data-parallel gradient workers: src/main/compute/gradPool.ts starts out/main/gradWorker.js.
          gradWorker: resolve(import.meta.dirname, 'src/main/compute/gradWorker.ts'),
        },
      },
    },
  },
  preload: {
    build: {
      externalizeDeps: true,
      rolldownOptions: {
        input: { index: resolve(import.meta.dirname, 'src/preload/index.ts') },
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: resolve(import.meta.dirname, 'src/renderer'),
    build: {
      outDir: resolve(import.meta.dirname, 'out/renderer'),
      // electron-vite leaves the renderer unminified; minifying halves what the browser must parse before the
      // first chart (the compare view's time to first render is dominated by script evaluation here).
      minify: true,
      rolldownOptions: { input: resolve(import.meta.dirname, 'src/renderer/index.html') },
    },
    plugins: [svelte(), preloadAppChunk()],
  },
});
