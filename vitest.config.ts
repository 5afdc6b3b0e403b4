import { defineConfig } from 'vitest/config';

/**
 * Two tiers (docs/testing.md). Unit: pure and in-process tests, the engine, contracts and main-side services,
 * quick enough to run on every change (`npm run test:unit`, under 90 s on two cores). Integration
 * (`npm run test:integration`): tests against real peers (a Ray head, the Python venvs: TensorBoard, PyTorch,
 * Transformers, W&B/MLflow/Trackio, Hydra), child processes killed mid-write, data-parallel worker pools, real
 * training of the lab's policy for many steps, and whole CLI runs. A new test of that kind is named
 * `*.integration.test.ts`; the older ones are listed here by name. Browser tests live in e2e/ (`npm run test:e2e`).
 */
const INTEGRATION = [
  '**/*.integration.test.ts',
  // A real Ray head.
  'src/main/remote/ray.test.ts',
  'src/main/remote/rayFaults.test.ts',
  'src/main/api/handlers/remotes.ray.test.ts',
  // Python peers: TensorBoard's writer, PyTorch's float64 cross-check.
  'tests/tensorboard.peer.test.ts',
  'src/main/cli/commands/algo-torch.test.ts',
  // The trainer end to end (tfjs forward/backward for many steps, worker pools, warm starts) and the benchmarks.
  'tests/*.trainer.test.ts',
  'tests/trainer.*.test.ts',
  'tests/warmstart*.test.ts',
  'tests/chunking.test.ts',
  'tests/bench.help.test.ts',
  // Session queues training the stand-in job in real worker threads, one per run (pause, resume, crash, recover).
  'src/main/sessions/sessionManager.test.ts',
  // Whole CLI runs in child processes: studies, servers, kills and crashes at exact writes, concurrent writers.
  'src/main/cli/commands/arena.test.ts',
  'src/main/cli/commands/start.test.ts',
  'src/main/cli/commands/serve.test.ts',
  'src/main/cli/commands/algo.test.ts',
  'src/main/cli/main.test.ts',
  'src/main/store/killSoak.test.ts',
  'src/main/store/crash.test.ts',
  'src/main/store/concurrency.test.ts',
  'src/main/imports/crash.test.ts',
];

export default defineConfig({
  test: {
    environment: 'node',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: [
      { extends: true, test: { name: 'unit', include: ['src/**/*.test.ts', 'tests/**/*.test.ts'], exclude: INTEGRATION } },
      { extends: true, test: { name: 'integration', include: INTEGRATION, exclude: ['node_modules/**'] } },
    ],
  },
});
