import { createHash } from 'node:crypto';
import type { PlanLimits } from '../plans.js';
import { PlanScheduler, type PlanSchedulerOptions } from './plan-scheduler.js';
import { InvalidOptionError } from '../errors.js';

/** Process-wide registry, keyed by a SHA-256 of the token (the token itself is never kept). */
const registry = new Map<string, { scheduler: PlanScheduler; limitsKey: string }>();

/**
 * The one {@link PlanScheduler} of `token` in this process: the same instance for every call with
 * the same token, so every client and source of a token shares one quota (limits follow the
 * token, provider-facts.md). `options` apply when the instance is created; a closed instance is
 * replaced by a new one.
 *
 * @throws InvalidOptionError (`QF_INVALID_OPTION`) when the token is already registered with other limits.
 * @example
 * ```ts
 * const scheduler = sharedSchedulerFor(process.env.QUOTEFLOW_TOKEN!, planLimits('premium'));
 * sharedSchedulerFor(process.env.QUOTEFLOW_TOKEN!, planLimits('premium')) === scheduler; // true
 * ```
 */
export function sharedSchedulerFor(
  token: string,
  limits: PlanLimits,
  options?: PlanSchedulerOptions,
): PlanScheduler {
  const key = createHash('sha256').update(token).digest('hex');
  const limitsKey = JSON.stringify(limits);
  const entry = registry.get(key);
  if (entry !== undefined && !entry.scheduler.closed) {
    if (entry.limitsKey !== limitsKey) {
      throw new InvalidOptionError(
        'limits',
        `sharedSchedulerFor: this token already has a scheduler for plan "${entry.scheduler.limits.plan}" with other limits ` +
          `(asked for plan "${limits.plan}"); one token has one plan, so pass the same limits everywhere`,
      );
    }
    return entry.scheduler;
  }
  const scheduler = new PlanScheduler(limits, options);
  registry.set(key, { scheduler, limitsKey });
  return scheduler;
}
