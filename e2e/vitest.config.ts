import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// End-to-end tests: the real app in browser mode (`arlarena serve`) driven by Debian's Chromium through
// playwright-core, plus the Electron spec when a binary exists. Run through `npm run test:e2e` (e2e/run.mjs),
// which builds the app first. One file at a time: each starts its own server, and the machine has 2 cores.
export default defineConfig({
  root: fileURLToPath(new URL('..', import.meta.url)),
  test: {
    include: ['e2e/**/*.e2e.ts', 'e2e/**/*.spec.ts'],
    environment: 'node',
    testTimeout: 120_000,
    hookTimeout: 180_000,
    fileParallelism: false,
    pool: 'forks',
  },
});
