import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/**
 * The end-to-end suites first (a print floor, a crash drill, a soak: minutes each, in small files), then the rest
 * in Vitest's own order. Without timings from an earlier run (a fresh clone, as on CI) Vitest runs larger files
 * first, which left the longest suites to start last and the run waiting on them alone.
 */
class EndToEndFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const e2e = (f: TestSpecification) => f.moduleId.endsWith('.e2e.test.ts');
    return [...sorted.filter(e2e), ...sorted.filter((f) => !e2e(f))];
  }
}

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
    sequence: { sequencer: EndToEndFirst },
    reporters: ['default'],
    globalSetup: ['./vitest.setup.ts'],
    // Every prepared statement (control-plane/src/store/prepared.ts) is also built afresh and compared.
    env: { DPP_VERIFY_PREPARED: '1' },
  },
});
