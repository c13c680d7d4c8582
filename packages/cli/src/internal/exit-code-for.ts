import { CommanderError } from 'commander';
import { EXIT, type ExitCode } from './exit-codes.js';
import { UsageError } from './usage-error.js';

/** Error codes of @quoteflow/core that mean "the service refused" (exit 3), not "something broke" (exit 1). */
const REFUSAL_CODES = new Set([
  'QF_SERVICE',
  'QF_UNAUTHORIZED',
  'QF_TOKEN_INVALID',
  'QF_CODE_INVALID',
  'QF_CODE_UNAUTHORIZED',
  'QF_TOO_MANY_PRODUCTS',
  'QF_REFUSED',
]);

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

/** The exit code an error ends the CLI with (contract.md: 2 usage/config, 3 refusal, 1 anything else). */
export function exitCodeFor(err: unknown): ExitCode {
  if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  for (const e of chain(err)) {
    if (e instanceof UsageError) return EXIT.usage;
    if (e instanceof Error && 'code' in e && typeof e.code === 'string' && REFUSAL_CODES.has(e.code))
      return EXIT.refused;
    if (e instanceof Error && 'code' in e && e.code === 'QF_INVALID_OPTION') return EXIT.usage;
  }
  return EXIT.failure;
}
