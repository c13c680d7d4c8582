import { UsageError } from './usage-error.js';

/**
 * The environment variable `name` as ms: a positive number of seconds, `defaultS` when unset or
 * empty. A usage error (exit 2) names the variable when it is anything else.
 */
export function envSecondsMs(
  env: Readonly<Record<string, string | undefined>>,
  name: string,
  defaultS: number,
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return defaultS * 1000;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw new UsageError(`${name} must be a positive number of seconds, got ${JSON.stringify(raw)}`);
  return seconds * 1000;
}
