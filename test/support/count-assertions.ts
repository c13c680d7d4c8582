/**
 * Opt-in (QF_ASSERT_LOG=FILE): appends one JSON line per finished test to FILE, `{ file, test,
 * assertions }`, the number of `expect` calls it made. For comparing a change's assertion counts
 * with a run before it (scripts/test.sh prints the sum when it is set); a no-op otherwise.
 */
import { appendFileSync } from 'node:fs';
import { afterEach, expect } from 'vitest';

const log = process.env['QF_ASSERT_LOG'];
if (log !== undefined && log !== '') {
  afterEach((ctx) => {
    const line = {
      file: ctx.task.file.filepath,
      test: ctx.task.name,
      assertions: expect.getState().assertionCalls,
    };
    appendFileSync(log, `${JSON.stringify(line)}\n`);
  });
}
