import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['*/src/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two files at a time on CI's 2 cores: the suite takes about 11.5 min instead of 15.5 serially. Suites that
    // run a print floor are written for a loaded machine (leases of 12 s, generous waits); PostgreSQL suites each
    // own a schema, and migrations retry when another suite drops its schema mid-check.
    maxWorkers: 2,
    reporters: ['default'],
    globalSetup: ['./vitest.setup.ts'],
  },
});
