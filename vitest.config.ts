import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    // Bounds for a run that is stuck, not speed tests: tests wait on events and assert no duration,
    // and a busy two-core machine (two suites at once) may take several times longer than usual.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // End-to-end suites start their own runtime processes on free ports; two at a time keeps a
    // two-core machine responsive.
    maxWorkers: 2,
  },
});
