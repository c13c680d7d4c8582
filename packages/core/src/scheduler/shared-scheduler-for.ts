import { createHash } from 'node:crypto';
import { systemClock, type Clock } from '../clock.js';
import type { PlanLimits } from '../plans.js';
import { PlanScheduler, type PlanSchedulerOptions } from './plan-scheduler.js';
import { InvalidOptionError } from '../errors.js';

interface Entry {
  readonly scheduler: PlanScheduler;
  readonly limitsKey: string;
}

/**
 * Process-wide registry: per clock, per SHA-256 of the token (the token itself is never kept).
 * Weak on the clock, so the schedulers of a test's throw-away clock go with it.
 */
const registry = new WeakMap<Clock, Map<string, Entry>>();

/**
 * The one {@link PlanScheduler} of `token` and `options.clock` in this process: the same instance
 * for every call with the same token and clock, so every client and source of a token shares one
 * quota (limits follow the token, provider-facts.md). Schedulers are never shared across clocks:
 * a scheduler keeps its windows on one clock's time, so two clocks (a test's `ManualClock` and
 * the system clock, say) get two schedulers. The other `options` apply when the instance is
 * created; a closed instance is replaced by a new one.
 *
 * @throws InvalidOptionError (`QF_INVALID_OPTION`) when the token is already registered on this clock with other limits.
 * @example
 * ```ts
 * const scheduler = sharedSchedulerFor(process.env.QUOTEFLOW_TOKEN!, planLimits('premium'));
 * sharedSchedulerFor(process.env.QUOTEFLOW_TOKEN!, planLimits('premium')) === scheduler; // true
 * const clock = new ManualClock();
 * sharedSchedulerFor(process.env.QUOTEFLOW_TOKEN!, planLimits('premium'), { clock }) === scheduler; // false
 * ```
 */
export function sharedSchedulerFor(
  token: string,
  limits: PlanLimits,
  options?: PlanSchedulerOptions,
): PlanScheduler {
  const clock = options?.clock ?? systemClock;
  let byToken = registry.get(clock);
  if (byToken === undefined) registry.set(clock, (byToken = new Map()));
  const key = createHash('sha256').update(token).digest('hex');
  const limitsKey = JSON.stringify(limits);
  const entry = byToken.get(key);
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
  const scheduler = new PlanScheduler(limits, { ...options, clock });
  byToken.set(key, { scheduler, limitsKey });
  return scheduler;
}
