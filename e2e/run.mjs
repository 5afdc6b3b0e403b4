#!/usr/bin/env node
// `npm run test:e2e`: build the app if needed (electron-vite build; no Electron binary required), check that
// Chromium is there, then run every e2e spec with vitest. Screenshots land in test-results/.
// Extra arguments go to vitest (e.g. `npm run test:e2e -- e2e/api.e2e.ts`).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
register();
const { ensureBuilt } = await import('../src/main/electron/build.ts');

const failure = ensureBuilt((line) => console.log(`e2e: ${line}`), root);
if (failure) {
  console.error(`e2e: ${failure}`);
  process.exit(1);
}
const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (!existsSync(chromium)) {
  console.error(`e2e: Chromium not found at ${chromium}; install it (apt-get install -y chromium) or set CHROMIUM_PATH.`);
  process.exit(1);
}
mkdirSync(join(root, 'test-results'), { recursive: true });
const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
const result = spawnSync(process.execPath, [vitest, 'run', '--config', 'e2e/vitest.config.ts', ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
