/**
 * Vitest's order of the test files, with the files known to take longest first: with more workers
 * than cores, a long file that starts last makes the whole run wait for it. Vitest orders by the
 * durations of earlier runs when it has them, and by file size on a fresh clone (CI), where these
 * long files would start late; this list puts them first either way. Refresh it from the 15 slowest
 * files scripts/test.sh prints at the end of a run.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Longest first: seconds each took in the last full CI run on the two-core CI box (before the
 * changes noted), for reference.
 */
export const KNOWN_SLOW_FILES = [
  'test/cluster-sync.test.ts', // 140: three worker processes, a kill, a Redis restart, a pause
  'test/cluster-cli.test.ts', // ~150 (measured alone): three CLI workers at real speed, a kill, a minute closing after it
  'test/container-image.test.ts', // ~130 on a fresh machine (the image's build; ~30 when it is built)
  'test/calendar-week-sync.test.ts', // 90: a simulated week at 7,200x
  'test/s3-datasets.test.ts', // 149 (loaded run): CLI runs on S3Proxy read back by four Delta readers
  'test/delta-checkpoint-s3.test.ts', // ~105: 103 versions on S3, four readers at three versions
  'test/s3-crash.test.ts', // 88: kill -9 of a writer and a compactor on S3, six rounds
  'test/upkeep-crash.test.ts', // new: kill -9 of a sync's writer during its upkeep, local and on S3, at once
  'test/s3-log-compaction.test.ts', // ~85
  'test/cli-kline.test.ts', // 70
  'test/format-versions.test.ts', // ~55 on a loaded machine: the fixture continued, three refusals
  'test/table-writers.property.test.ts', // ~50 (loaded): writer processes on a disk and S3Proxy, every version read
  'test/cli-table-writers.test.ts', // ~45 (loaded): syncs and captures meeting at one table
  'test/quota-processes.test.ts', // 65: a plan's one-a-minute rule at real speed
  'test/cli-failures.test.ts', // 94 while its 30 s connect-timeout wait did not overlap its other tests
  'test/kafka-security.test.ts', // 59
  'test/sync-kafka-crash.test.ts', // 58
  'examples/compose-exactly-once/compose-exactly-once.test.ts', // 56
  'test/cli-commands.test.ts', // 76 while its depth, run and demo tests ran one after another
  'test/cli-backfill-stop.test.ts', // 49
  'test/cluster-quota.test.ts', // 47
  'test/cluster-quota-recovery.test.ts', // 45
  'test/cli-schema-registry.test.ts', // 44
  'test/dataset-compaction-crash.test.ts', // 43
  'test/cli-terminal.test.ts', // 44 while its tests ran one after another (about a third now)
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
