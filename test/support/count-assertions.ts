/**
 * Opt-in (QF_ASSERT_LOG=FILE): appends one JSON line per finished test to FILE, `{ file, test,
 * assertions }`, the number of `expect` calls it made. For comparing a change's assertion counts
 * with a run before it (scripts/test.sh prints the sum when it is set); a no-op otherwise. A test that
 * used its context's `expect` (as concurrent tests must: the global one's count is shared by the
 * tests running at once) is counted by that one, the rule vitest's own runner applies.
 */
import { appendFileSync } from 'node:fs';
import { afterEach, expect } from 'vitest';

const log = process.env['QF_ASSERT_LOG'];
if (log !== undefined && log !== '') {
  afterEach((ctx) => {
    // `_local`: whether the test asked for its context's `expect` (vitest's own flag, untyped).
    const local = (ctx as unknown as { _local?: boolean })._local === true;
    const line = {
      file: ctx.task.file.filepath,
      test: ctx.task.name,
      assertions: (local ? ctx.expect : expect).getState().assertionCalls,
    };
    appendFileSync(log, `${JSON.stringify(line)}\n`);
  });
}
