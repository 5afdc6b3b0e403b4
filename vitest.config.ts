import { defineConfig } from 'vitest/config';

// Unit and invariant tests: engine (src/core), contracts (src/shared), main-side services (src/main).
// Browser end-to-end tests live in e2e/ and run through `npm run test:e2e`, not here.
export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'tests/**/*.test.ts'],
    environment: 'node',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
