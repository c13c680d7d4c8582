import { createHash } from 'node:crypto';
import { systemClock, type Clock } from '../clock.js';
import type { PlanLimits } from '../plans.js';
import { PlanScheduler, type PlanSchedulerOptions } from './plan-scheduler.js';
import { InvalidOptionError } from '../errors.js';
import { SqliteWindowStore } from './sqlite-window-store.js';

/** Options of {@link sharedSchedulerFor}: the scheduler's, and who shares the quota. */
export interface SharedSchedulerOptions extends PlanSchedulerOptions {
  /**
   * Who shares the token's quota: `'process'`, every client of the token in this process (a
   * `MemoryWindowStore`); `'machine'`, every process of the token on this machine, through
   * a {@link SqliteWindowStore} in `stateDir` (system clock only: its instants are machine time).
   * Ignored when `store` is given. @defaultValue `'process'`
   */
  readonly share?: 'process' | 'machine';
  /** Where the machine-wide quota lives. @defaultValue `quoteflowStateDir()` */
  readonly stateDir?: string;
}

interface Entry {
  readonly scheduler: PlanScheduler;
  readonly limitsKey: string;
  readonly share: 'process' | 'machine';
  /** The store this registry opened for the scheduler (closed when the scheduler is replaced). */
  readonly ownStore: SqliteWindowStore | undefined;
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
 * created; a closed instance is replaced by a new one. With `share: 'machine'` the quota is also
 * shared with every other process of the token on this machine ({@link SqliteWindowStore}).
 *
 * @throws InvalidOptionError (`QF_INVALID_OPTION`) when the token is already registered on this clock with other
 *   limits or another `share`, when `share: 'machine'` comes with another clock than the system clock, or when
 *   the state directory cannot be used.
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
  options?: SharedSchedulerOptions,
): PlanScheduler {
  const clock = options?.clock ?? systemClock;
  const share = options?.store === undefined ? (options?.share ?? 'process') : 'process';
  if (share === 'machine' && clock !== systemClock) {
    throw new InvalidOptionError(
      'share',
      'sharedSchedulerFor: "share: \'machine\'" needs the system clock (the machine-wide quota keeps machine time); ' +
        'use "share: \'process\'" with a ManualClock or an accelerated clock',
    );
  }
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
    if (entry.share !== share) {
      throw new InvalidOptionError(
        'share',
        `sharedSchedulerFor: this token's scheduler shares its quota per ${entry.share}, asked per ${share}; ` +
          'pass the same "share" everywhere in a process',
      );
    }
    return entry.scheduler;
  }
  entry?.ownStore?.close();
  const ownStore =
    share === 'machine'
      ? new SqliteWindowStore({
          token,
          ...(options?.stateDir === undefined ? {} : { stateDir: options.stateDir }),
        })
      : undefined;
  const { share: _share, stateDir: _stateDir, ...schedulerOptions } = options ?? {};
  const scheduler = new PlanScheduler(limits, {
    ...schedulerOptions,
    clock,
    ...(ownStore === undefined ? {} : { store: ownStore }),
  });
  byToken.set(key, { scheduler, limitsKey, share, ownStore });
  return scheduler;
}
