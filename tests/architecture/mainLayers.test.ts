import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mainLayerViolations } from './mainLayers';

const MAIN = resolve(import.meta.dirname, '..', '..', 'src', 'main');

describe('src/main layers', () => {
  it('every production import goes down a layer, never into a test kit', () => {
    expect(mainLayerViolations(MAIN)).toEqual([]);
  });

  describe('the check itself', () => {
    const root = mkdtempSync(join(tmpdir(), 'arl-layers-'));
    const write = (rel: string, text: string): void => {
      mkdirSync(dirname(join(root, rel)), { recursive: true });
      writeFileSync(join(root, rel), text);
    };
    afterAll(() => rmSync(root, { recursive: true, force: true }));

    it('reports an upward import, a test kit import and an unknown area; allows downward imports and tests', () => {
      write(
        'store/runStore.ts',
        "import { x } from '../platform/appInfo';\nimport { SessionManager } from '../sessions/sessionManager';\n",
      );
      write('sessions/lab.ts', "const t = await import('../testing/jobs/index');\n");
      write('misc/thing.ts', 'export const y = 1;\n');
      write('api/router.ts', "import { createLab } from '../app/lab';\n");
      write('store/runStore.test.ts', "import { a } from '../cli/main';\nimport { b } from '../testing/testLab';\n");
      write('testing/kit.ts', "import { c } from '../cli/main';\n");
      const found = mainLayerViolations(root)
        .map((v) => `${v.file} ${v.imports}`.trim())
        .sort();
      expect(found).toEqual(['misc/thing.ts', 'sessions/lab.ts ../testing/jobs/index', 'store/runStore.ts ../sessions/sessionManager']);
    });
  });
});
