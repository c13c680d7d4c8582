/**
 * Vitest's order of the test files, with the files known to take longest first: with more workers
 * than cores, a long file that starts last makes the whole run wait for it. Vitest orders by the
 * durations of earlier runs when it has them, and by file size on a fresh clone (CI), where these
 * long files would start late; this list puts them first either way. Refresh it from the 15 slowest
 * files scripts/test.sh prints at the end of a run.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Longest first (seconds each takes in a full run on the two-core CI box, for reference). */
export const KNOWN_SLOW_FILES = [
  'test/calendar-week-sync.test.ts', // 88: a simulated week at 7,200x
  'test/cluster-sync.test.ts', // 85: three worker processes, a kill, a Redis restart, a pause
  'test/cli-failures.test.ts', // 75: waits out the 30 s connect timeout's default
  'test/quota-processes.test.ts', // 63: a plan's one-a-minute rule at real speed
  'test/cli-kline.test.ts', // 60
  'test/dataset-compaction-crash.test.ts', // 55
  'test/cluster-quota.test.ts', // 45
  'test/cluster-quota-recovery.test.ts', // 43
  'test/sinks-kafka-roundtrip.test.ts', // 42
];

export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification): number => {
      const i = KNOWN_SLOW_FILES.findIndex((f) => spec.moduleId.endsWith(`/${f}`));
      return i < 0 ? KNOWN_SLOW_FILES.length : i;
    };
    // Array.prototype.sort is stable: the rest keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
