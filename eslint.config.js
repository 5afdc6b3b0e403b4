// Lint enforces the process boundaries of the tree (drawn in docs/architecture.md):
//   src/core     pure TypeScript engine: no electron, no node: builtins, no DOM, no main/renderer imports
//   src/shared   contracts and persisted formats: pure, imports nothing but zod and itself
//   src/preload  thin bridge: electron + shared only
//   src/renderer never touches Node or Electron, and talks to main only through src/shared's contract
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import svelte from 'eslint-plugin-svelte';
import globals from 'globals';

const nodeBuiltins = [
  'node:*',
  'fs',
  'fs/promises',
  'path',
  'os',
  'child_process',
  'worker_threads',
  'crypto',
  'url',
  'http',
  'https',
  'net',
  'stream',
  'util',
  'zlib',
  'events',
  'process',
  'buffer',
  'module',
  'readline',
];
// Anchored regexes, not gitignore-style groups: a group like 'util' would also match a relative path such as
// '../util/rng' (src/core/util), which is our own pure code.
const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, (c) => (c === '*' ? '.*' : `\\${c}`));
const nodePatterns = nodeBuiltins.map((name) => ({
  regex: `^${escapeRe(name)}(/.*)?$`,
  message: 'Node built-ins are not allowed in this layer.',
}));
const electronPattern = { group: ['electron', 'electron/*'], message: 'Electron is only for src/main and src/preload.' };
// The renderer never touches Node or Electron; a config block that sets no-restricted-imports replaces the rule's
// patterns for its files, so every renderer block spreads these.
const rendererPatterns = [
  ...nodePatterns,
  electronPattern,
  { group: ['**/main/**', '**/core/**', '**/preload/**'], message: 'The renderer talks to main only through src/shared and the API.' },
];

// src/main in layers, bottom to top: each folder imports only from the folders before it (and src/core,
// src/shared); test kits (src/main/testing) only from tests. docs/architecture.md draws it; tests/layers.test.ts
// checks the same order on the import graph.
const MAIN_LAYERS = ['platform', 'compute', 'store', 'sessions', 'bundles', 'imports', 'remote', 'app', 'api', 'server', 'electron', 'cli'];
const mainLayerRules = MAIN_LAYERS.map((layer, i) => ({
  files: [`src/main/${layer}/**/*.ts`],
  ignores: ['**/*.test.ts'],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            regex: `^(\\.\\./)+(${[...MAIN_LAYERS.slice(i + 1), 'testing'].join('|')})(/|\\.ts$|$)`,
            message: `src/main/${layer} may import only from the layers below it (${MAIN_LAYERS.slice(0, i).join(', ') || 'none in src/main'}); test kits only from tests. See docs/architecture.md.`,
          },
        ],
      },
    ],
  },
}));

export default tseslint.config(
  {
    ignores: [
      'out/**',
      'dist/**',
      'node_modules/**',
      '.peers-venv/**',
      '.venvs/**',
      '.trainer-scratch/**',
      'test-results/**',
      'resources/**',
      '.arlarena-data/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  ...svelte.configs['flat/recommended'],
  {
    languageOptions: { globals: { ...globals.es2022 } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    files: ['**/*.svelte', '**/*.svelte.ts'],
    languageOptions: { parserOptions: { parser: tseslint.parser, extraFileExtensions: ['.svelte'] } },
  },
  {
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...nodePatterns,
            electronPattern,
            { group: ['**/main/**', '**/renderer/**', '**/preload/**'], message: 'src/core must not depend on the app layers.' },
          ],
        },
      ],
      'no-restricted-globals': ['error', 'window', 'document', 'navigator', 'localStorage', 'process', 'require', '__dirname'],
      'no-restricted-properties': [
        'error',
        { object: 'Math', property: 'random', message: 'Pass the seeded Rng in (src/core/util/rng.ts).' },
        { object: 'Date', property: 'now', message: 'Pass the clock in.' },
        { object: 'performance', property: 'now', message: 'Pass the clock in.' },
      ],
    },
  },
  {
    files: ['src/shared/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...nodePatterns,
            electronPattern,
            { group: ['**/main/**', '**/renderer/**', '**/preload/**', '**/core/**'], message: 'src/shared is the bottom layer.' },
          ],
        },
      ],
      'no-restricted-globals': ['error', 'window', 'document', 'process', 'require'],
    },
  },
  {
    files: ['src/renderer/**/*.ts', 'src/renderer/**/*.svelte'],
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...rendererPatterns,
            { regex: '^(\\.\\.?/)+testing(/|$)', message: 'The product never imports test kits (src/renderer/testing).' },
          ],
        },
      ],
    },
  },
  {
    // The renderer's tests and its test kits (src/renderer/testing) keep the renderer's bounds; they may use the kits.
    files: ['src/renderer/**/*.test.ts', 'src/renderer/testing/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: rendererPatterns }] },
  },
  {
    files: ['src/preload/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [{ group: ['**/main/**', '**/renderer/**', '**/core/**'], message: 'The preload is a thin bridge over src/shared.' }],
        },
      ],
    },
  },
  {
    // Tests beside core code may read fixture files (e.g. the real runs in ../shared/data/real-runs) with
    // node:fs; the code under test stays pure. Electron and the app layers remain off limits.
    files: ['src/core/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            electronPattern,
            { group: ['**/main/**', '**/renderer/**', '**/preload/**'], message: 'src/core must not depend on the app layers.' },
          ],
        },
      ],
    },
  },
  ...mainLayerRules,
  {
    files: ['src/main/index.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^\\./testing(/|$)', message: 'The product never imports test kits (src/main/testing).' }] },
      ],
    },
  },
  {
    files: ['src/main/**/*.{ts,mjs}', 'e2e/**/*.{ts,mjs,js}', 'bin/**/*.mjs', 'bench/**/*.{ts,mjs}', 'tests/**/*.ts', '*.config.{js,ts}'],
    languageOptions: { globals: { ...globals.node } },
  },
);
