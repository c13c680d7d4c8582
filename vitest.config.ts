import { defineConfig } from 'vitest/config';
import SlowFirstSequencer from './test/support/slow-first-sequencer.js';

// Workspace packages resolve to their TypeScript sources (the `source` export condition), so
// tests never run against a stale build. `test/package-exports.test.ts` checks the built output.
// No `module` condition: packages outside the repository load as Node loads them (the AWS SDK's
// `module` build, for bundlers, has extension-less imports Node cannot resolve).
const conditions = ['source', 'import', 'node', 'default'];

// Unit test files that mock modules (vi.mock): each gets a fresh module graph. The other unit files
// share one per worker (isolation off: half the CPU of the unit project, which is mostly imports).
const MOCKING_UNIT_FILES = [
  'packages/sinks/src/files/compact-dataset.readers.test.ts',
  'packages/core/src/write-file-durably.race.test.ts',
];
// Unit tests' default timeout: generous, since CI shares two cores with a Kafka broker; a timeout is
// a safety net, not an assertion.
const UNIT_TIMEOUT_MS = 30_000;

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ['source'] } },
  test: {
    // Measured on the two-core CI box (see README, Development): many test files wait (on processes,
    // brokers, the simulator's clock), so more workers than cores: with 4, two cores stood idle 16 %
    // of a 554 s run (CPU sampled every 5 s); with 5, 6 % of 503 s (QF_CPU_LOG shows each file's
    // CPU; past that the run is CPU-bound and more workers only slow each file). Forks: threads were no
    // faster (the same CPU with isolation off) and break vi.mock without isolation; several files
    // start child processes and load native modules (DuckDB, SQLite).
    pool: 'forks',
    maxWorkers: Number(process.env['QF_TEST_WORKERS'] ?? 5),
    // The longest files first, also on a fresh clone (no durations of earlier runs).
    sequence: { sequencer: SlowFirstSequencer },
    // QF_ASSERT_LOG=FILE counts each test's assertions into FILE, QF_CPU_LOG=FILE each file's CPU
    // (both no-ops unless set).
    setupFiles: ['test/support/count-assertions.ts', 'test/support/record-cpu.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['packages/*/src/**/*.test.ts'],
          exclude: MOCKING_UNIT_FILES,
          isolate: false,
          testTimeout: UNIT_TIMEOUT_MS,
        },
      },
      {
        extends: true,
        test: { name: 'unit-isolated', include: MOCKING_UNIT_FILES, testTimeout: UNIT_TIMEOUT_MS },
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
