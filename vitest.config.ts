import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['*/src/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // One file at a time (vitest's default on 2 cores). Two or three at a time cut the run to 9-10 min,
    // but on this machine two faults showed only then: a PostgreSQL schema introspection racing another
    // suite's schema drop, and a crash drill printing one serial twice (see the session note). Until both
    // are understood, the suite runs serially.
    reporters: ['default'],
    globalSetup: ['./vitest.setup.ts'],
  },
});
