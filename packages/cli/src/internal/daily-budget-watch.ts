import type { DailyBudget, PlanLimits } from '@quoteflow/core';
import { formatDuration } from '@quoteflow/core/internal';
import type { Logger } from 'pino';
import { DailyBudgetSpentError } from './daily-budget-spent-error.js';

/** How often a long-running command looks at the daily budget, in ms. */
const WATCH_EVERY_MS = 5_000;

/** A scheduler that can say how its daily total stands (core's `PlanScheduler`). */
interface WithDailyBudget {
  dailyBudget(): DailyBudget;
}

/** The daily budget of `scheduler`, or `undefined` for one that cannot say (a cluster's). */
export function dailyBudgetOf(scheduler: unknown): DailyBudget | undefined {
  const s = scheduler as Partial<WithDailyBudget> | undefined;
  return typeof s?.dailyBudget === 'function' ? (s as WithDailyBudget).dailyBudget() : undefined;
}

/**
 * One sentence on a spent budget, as the commands, `/ready` and `plan` say it:
 * `the plan's daily budget is spent (1,280 of 1,000 requests); it resets at 2026-12-06 16:00 UTC, in 11h 3m`.
 */
export function spentBudgetMessage(budget: DailyBudget, nowMs: number): string {
  const count = (n: number): string => n.toLocaleString('en-US');
  const at = budget.resetsAtMs ?? nowMs;
  const when = new Date(at).toISOString().slice(0, 16).replace('T', ' ');
  return (
    `the plan's daily budget is spent (${count(budget.used)} of ${count(budget.limit)} requests); ` +
    `it resets at ${when} UTC, in ${formatDuration(Math.max(0, at - nowMs))}`
  );
}

/** Options of {@link watchDailyBudget}. */
export interface DailyBudgetWatchOptions {
  readonly logger: Logger;
  /** `--exit-when-budget-spent`: a spent budget ends the command (exit 75) instead of a wait. */
  readonly exitWhenSpent: boolean;
  /** Ends the command with this error (`--exit-when-budget-spent`). */
  readonly onExit: (err: DailyBudgetSpentError) => void;
  /** What `/ready` says while the budget is spent. */
  readonly setFault?: (fault: string, active: boolean) => void;
  /** The client's clock. */
  readonly now: () => number;
}

/**
 * Looks at the token's daily budget at once (before the command's first request) and every few
 * seconds while it runs. When it is spent, says so on stderr (a warning: shown without a terminal
 * too), with the use, the limit and when it resets, and that the command waits; or, with
 * `exitWhenSpent`, ends the command through `onExit`. `/ready` answers 503 with the same sentence
 * meanwhile, and a line says when requests may go again.
 */
export function watchDailyBudget(
  scheduler: unknown,
  options: DailyBudgetWatchOptions,
): { check(): void; stop(): void } {
  let fault: string | undefined;
  const check = (): void => {
    const budget = dailyBudgetOf(scheduler);
    if (budget === undefined) return;
    if (budget.spent && fault === undefined) {
      const message = spentBudgetMessage(budget, options.now());
      if (options.exitWhenSpent) {
        options.onExit(new DailyBudgetSpentError(`${message}; exiting (--exit-when-budget-spent)`));
        return;
      }
      options.logger.warn(
        { used: budget.used, limit: budget.limit, resetsAt: new Date(budget.resetsAtMs ?? 0).toISOString() },
        `${message}; the command waits until then (--exit-when-budget-spent: exit 75 instead)`,
      );
      fault = message;
      options.setFault?.(fault, true);
    } else if (!budget.spent && fault !== undefined) {
      options.setFault?.(fault, false);
      fault = undefined;
      options.logger.info(
        { used: budget.used, limit: budget.limit },
        "the plan's daily budget allows requests again",
      );
    }
  };
  check();
  const timer = setInterval(check, WATCH_EVERY_MS);
  timer.unref();
  return { check, stop: () => clearInterval(timer) };
}

/**
 * The daily budget watch of a command that runs until stopped outside `CommandRun` (`depth`,
 * `suspensions --watch`): `--exit-when-budget-spent` aborts `stopper` with the error, which
 * `rethrow()` throws once the pipeline has stopped. A one-query command passes no stopper: the
 * error is thrown at once, before its request.
 */
export function commandBudgetWatch(
  client: { readonly scheduler: unknown; readonly clock: { now(): number } },
  service: { readonly exitWhenBudgetSpent?: boolean | undefined },
  logger: Logger,
  stopper?: AbortController,
  setFault?: (fault: string, active: boolean) => void,
): { stop(): void; rethrow(): void } {
  let ended: DailyBudgetSpentError | undefined;
  const watch = watchDailyBudget(client.scheduler, {
    logger,
    exitWhenSpent: service.exitWhenBudgetSpent === true,
    onExit: (err) => {
      ended ??= err;
      stopper?.abort(err);
    },
    ...(setFault === undefined ? {} : { setFault }),
    now: () => client.clock.now(),
  });
  if (stopper === undefined) watch.stop();
  const rethrow = (): void => {
    if (ended !== undefined) throw ended;
  };
  rethrow();
  return { stop: watch.stop, rethrow };
}

/**
 * How the daily budget of `token` stands on this machine now (`quoteflow plan`, offline): read from
 * the state directory every quoteflow process of the token counts in, no request made.
 */
export async function tokenBudgetToday(
  token: string,
  limits: PlanLimits,
  env: Readonly<Record<string, string | undefined>>,
): Promise<DailyBudget> {
  const { PlanScheduler } = await import('@quoteflow/core');
  const { SqliteWindowStore, quoteflowStateDir } = await import('@quoteflow/core/internal');
  const store = new SqliteWindowStore({ token, stateDir: quoteflowStateDir(env) });
  const scheduler = new PlanScheduler(limits, { store });
  try {
    return scheduler.dailyBudget();
  } finally {
    await scheduler.close();
    store.close();
  }
}

/** The budget of {@link tokenBudgetToday} for people: what is used, and the reset when it is spent. */
export function describeBudgetToday(budget: DailyBudget, nowMs: number): string {
  return budget.spent
    ? spentBudgetMessage(budget, nowMs)
    : `${budget.used.toLocaleString('en-US')} of ${budget.limit.toLocaleString('en-US')} requests of the daily budget used by this token on this machine`;
}
