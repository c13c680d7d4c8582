/**
 * No function over 80 lines in the packages' sources (scripts/checks/long-functions.mjs), with a
 * list of the ones that were longer before the rule: none of them may grow, and a function that
 * is not on it may not pass 80. Shorten one and lower (or drop) its entry.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const MAX_LINES = 80;

/** `file name` → its length when the rule came (2026-11-28). The K-line path is not on it. */
const OLDER_THAN_THE_RULE: Readonly<Record<string, number>> = {
  'packages/cli/src/commands/depth.ts registerDepthCommand': 104,
  'packages/cli/src/internal/kline-progress.ts handle': 89,
  'packages/core/src/adapters/to-async-iterable.ts toAsyncIterable': 100,
  'packages/core/src/adapters/to-async-iterable.ts [Symbol.asyncIterator]': 86,
  'packages/core/src/client.ts #send': 92,
  'packages/core/src/estimate-plan.ts estimatePlan': 110,
  'packages/operators/src/normalize-bars.ts slowNormalize': 108,
  'packages/pipelines/src/depth-capture.ts depthCapture': 92,
  'packages/pipelines/src/suspension-watch.ts suspensionWatch': 97,
  'packages/report/src/duckdb-scan.ts series': 140,
  'packages/report/src/report-page.ts reportPage': 104,
  'packages/simulator/src/calendars.ts simBarPeriodAt': 84,
  'packages/simulator/src/start-simulator.ts startSimulator': 293,
  'packages/simulator/src/start-simulator.ts handle': 139,
  'packages/sinks/src/kafka/to-kafka.ts toKafka': 86,
};

it(`has no function over ${MAX_LINES} lines but the older ones, and none of those grew`, () => {
  let out = '';
  try {
    execFileSync(process.execPath, ['scripts/checks/long-functions.mjs', String(MAX_LINES)], {
      cwd: ROOT,
      encoding: 'utf8',
    });
  } catch (err) {
    out = (err as { stdout: string }).stdout; // it exits 1 when it lists any
  }
  const found = out
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const m = /^(\S+):\d+ (.+) (\d+) lines$/.exec(line)!;
      return { key: `${m[1]} ${m[2]}`, lines: Number(m[3]) };
    });
  const over = found.filter((f) => f.lines > (OLDER_THAN_THE_RULE[f.key] ?? MAX_LINES));
  expect(over, 'split these functions (or, for an older one, do not make it longer)').toEqual([]);
});
