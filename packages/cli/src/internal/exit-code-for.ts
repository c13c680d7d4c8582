import { CommanderError } from 'commander';
import { EXIT, type ExitCode } from './exit-codes.js';
import { UsageError } from './usage-error.js';
import { DailyBudgetSpentError } from './daily-budget-spent-error.js';

/** Error codes of @quoteflow/core that mean "the service refused" (exit 3), not "something broke" (exit 1). */
const REFUSAL_CODES = new Set([
  'QF_SERVICE',
  'QF_RATE_LIMITED',
  'QF_UNAUTHORIZED_TOKEN',
  'QF_INVALID_CODE',
  'QF_UNAUTHORIZED_CODE',
  'QF_TOO_MANY_PRODUCTS',
  'QF_BODY_EMPTY',
  'QF_BAD_REQUEST',
]);

/**
 * Error codes that mean bad options or configuration (exit 2): a library option, a state file, a
 * table, topic or state file of a newer quoteflow format than this release's.
 */
const CONFIG_CODES = new Set(['QF_INVALID_OPTION', 'QF_STATE', 'QF_PIPELINE_CONFIG', 'QF_FORMAT_VERSION']);

/** Walks `cause` chains: a refusal wrapped by a pipeline is still a refusal. */
function* chain(err: unknown): Generator<unknown> {
  const seen = new Set<unknown>();
  let current: unknown = err;
  while (current !== undefined && current !== null && !seen.has(current)) {
    seen.add(current);
    yield current;
    current = current instanceof Error ? current.cause : undefined;
  }
}

/** The exit code an error ends the CLI with (contract.md: 2 usage/config, 3 refusal, 75 daily budget spent, 1 anything else). */
export function exitCodeFor(err: unknown): ExitCode {
  if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  for (const e of chain(err)) {
    if (e instanceof UsageError) return EXIT.usage;
    if (e instanceof DailyBudgetSpentError) return EXIT.budgetSpent;
    if (e instanceof Error && 'code' in e && typeof e.code === 'string' && REFUSAL_CODES.has(e.code))
      return EXIT.refused;
    if (e instanceof Error && 'code' in e && typeof e.code === 'string' && CONFIG_CODES.has(e.code))
      return EXIT.usage;
  }
  return EXIT.failure;
}
