import {
  QuoteflowClient,
  planLimits,
  sharedSchedulerFor,
  type Clock,
  type QuoteflowLogger,
  type RequestRecord,
  type RequestScheduler,
  type RetryOptions,
} from '@quoteflow/core';
import type { Logger } from 'pino';
import type { CliMetrics } from './cli-metrics.js';
import type { ServiceOptions } from './service-options.js';
import { testClockScheduler } from './test-clock.js';

/**
 * The pino logger as the library's structured logger (debug and warn events, token never
 * included).
 */
export function libraryLogger(logger: Logger): QuoteflowLogger {
  return {
    debug: (event, fields) => logger.debug(fields, event),
    warn: (event, fields) => logger.warn(fields, event),
  };
}

/**
 * A client for the command's service options, logging through the CLI's logger (`scheduler`:
 * `--redis`; `clock`: the demo's accelerated clock, shared with its in-process simulator).
 * On the system clock without `--redis`, the token's quota is shared with every other quoteflow
 * process of the token on this machine (the state directory, `QUOTEFLOW_STATE_DIR`), so commands
 * run at once or back to back never draw a refusal; the demo's in-process quota stays its own. A
 * test clock (`service.testClock`, test-only) shares the machine-wide quota on that clock.
 */
export function createClient(
  service: ServiceOptions,
  logger: Logger,
  metrics?: CliMetrics,
  scheduler?: RequestScheduler,
  clock?: Clock,
  onRequest?: (record: RequestRecord) => void,
  retry?: RetryOptions,
): QuoteflowClient {
  const testClock = clock === undefined ? service.testClock : undefined;
  const clockInUse = clock ?? testClock;
  const quota =
    scheduler ??
    (testClock !== undefined
      ? testClockScheduler(testClock, service)
      : clock === undefined
        ? sharedSchedulerFor(service.token, planLimits(service.plan, service.limits), { share: 'machine' })
        : undefined);
  // Metrics and a request log both see every request.
  const listeners = [metrics?.onRequest, onRequest].filter((l) => l !== undefined);
  return new QuoteflowClient({
    baseUrl: service.baseUrl,
    token: service.token,
    plan: service.plan,
    limitOverrides: service.limits,
    logger: libraryLogger(logger),
    ...(quota === undefined ? {} : { scheduler: quota }),
    ...(clockInUse === undefined ? {} : { clock: clockInUse }),
    ...(retry === undefined ? {} : { retry }),
    ...(listeners.length === 0 ? {} : { onRequest: (r: RequestRecord) => listeners.forEach((l) => l(r)) }),
  });
}

/**
 * A client for a command of a few requests (`static-info`, `yesterday-close`, one `suspensions`
 * query), its token's daily budget looked at first: spent, it says so and the requests wait for
 * the reset, or with `--exit-when-budget-spent` the command ends before any request (exit 75).
 */
export async function openClient(
  service: ServiceOptions,
  logger: Logger,
  onRequest?: (record: RequestRecord) => void,
): Promise<QuoteflowClient> {
  const client = createClient(service, logger, undefined, undefined, undefined, onRequest);
  const { commandBudgetWatch } = await import('./daily-budget-watch.js');
  try {
    commandBudgetWatch(client, service, logger);
  } catch (err) {
    await client.close();
    throw err;
  }
  return client;
}
