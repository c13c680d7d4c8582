/**
 * `--wait-for-writer`'s help (sync, backfill, depth, suspensions --watch, run): what a command
 * does when another live writer owns some of its series in the table it writes.
 */
export const WAIT_FOR_WRITER_HELP =
  "when another live writer (another quoteflow, here or on another host) owns some of this command's series in " +
  'the table it writes: wait until it stops or its lease runs out (default: exit 1 naming the table, the series and ' +
  'that writer, before any request)';
