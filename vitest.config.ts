import { defineConfig } from 'vitest/config';

// Workspace packages resolve to their TypeScript sources (the `source` export condition), so
// tests never run against a stale build. `test/package-exports.test.ts` checks the built output.
const conditions = ['source', 'import', 'module', 'node', 'default'];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ['source'] } },
  test: {
    // QF_ASSERT_LOG=FILE counts each test's assertions into FILE (a no-op unless set).
    setupFiles: ['test/support/count-assertions.ts'],
    projects: [
      {
        extends: true,
        // Generous: CI shares two cores with a Kafka broker; a timeout is a safety net, not an assertion.
        test: { name: 'unit', include: ['packages/*/src/**/*.test.ts'], testTimeout: 30_000 },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts', 'examples/*/**/*.test.ts'],
          // The Kafka broker of the run (started on first use, stopped at the end; KAFKA_BROKERS skips
          // it), and the run's other shared programs (Redis, the Python readers, Chromium: on first use).
          globalSetup: ['test/support/kafka-global-setup.ts', 'test/support/shared-fixtures-setup.ts'],
          // No retries: a test that needs one has a bug (in the code or the test) to find.
          testTimeout: 120_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
