import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // End-to-end suites start their own runtime processes on free ports; two at a time keeps a
    // two-core machine responsive.
    maxWorkers: 2,
  },
});
