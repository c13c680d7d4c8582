// First: a Node.js older than `engines` is refused here, with a message, before a dependency crashes on it.
import './internal/supported-node.js';
// What users call, and every type its signatures name. What only our own packages need is in
// `./internal.ts` (`@quoteflow/core/internal`); `test/package-exports.test.ts` holds this list to 100 names.

// The client and what its calls take.
export { QuoteflowClient } from './client.js';
export type {
  QuoteflowClientOptions,
  RequestRecord,
  QuoteflowLogger,
  TimeoutOptions,
  RetryOptions,
  CallOptions,
} from './client-types.js';
export type { KlineQuery } from './endpoints/kline.js';
export type { BatchKlineGroup, BatchKlineGroupResult } from './endpoints/batch-kline.js';
export { PRODUCT_CLASSES, FAMILIES } from './markets.js';
export type { ProductClass, Family } from './markets.js';

// Sources (cold, one per endpoint) and adapters for code without RxJS.
export type { SourceClient } from './sources/source-client.js';
export { klineHistory } from './sources/kline-history.js';
export type { KlineHistoryOptions } from './sources/kline-history.js';
export { pollDepth } from './sources/poll-depth.js';
export type { PollDepthOptions } from './sources/poll-depth.js';
export { pollLatestBars } from './sources/poll-latest-bars.js';
export type { PollLatestBarsOptions } from './sources/poll-latest-bars.js';
export { pollSuspensions } from './sources/poll-suspensions.js';
export type { PollSuspensionsOptions } from './sources/poll-suspensions.js';
export { fetchStaticInfo } from './sources/fetch-static-info.js';
export type { FetchStaticInfoOptions } from './sources/fetch-static-info.js';
export { toAsyncIterable } from './adapters/to-async-iterable.js';
export type { ToAsyncIterableOptions } from './adapters/to-async-iterable.js';
export { toReadable } from './adapters/to-readable.js';
export type { ToReadableOptions } from './adapters/to-readable.js';

// Domain records, and the key of a series (a sink's watermarks are keyed by it).
export { KLINE_TYPES, isKlineType, EXCHANGES, HISTORY_PHASES } from './domain.js';
export { seriesKey } from './series-key.js';
export type {
  KlineType,
  Bar,
  BarUpdate,
  Level,
  DepthTick,
  StaticInfo,
  Exchange,
  SuspensionRecord,
  GapMarker,
  HistoryMarker,
  HistoryPhase,
} from './domain.js';

// Market calendars (operators take a code's calendar as an option).
export { calendarOf } from './markets.js';
export type { TradingCalendar } from './markets.js';
export type { CalendarId } from './calendar/trading-calendar.js';
export { EXCHANGE_IDS } from './calendar/exchange-calendar-data.js';
export type { ExchangeId } from './calendar/exchange-calendar-data.js';

// Plans and the one scheduler per token, with the seam for a shared store (`@quoteflow/cluster`).
export { PLANS, ENDPOINT_KINDS, planLimits } from './plans.js';
export type {
  Plan,
  EndpointKind,
  WindowRule,
  PlanLimits,
  PlanLimitOverrides,
  WindowRuleOverride,
} from './plans.js';
export { PRIORITIES } from './request-scheduler.js';
export type { Priority, ScheduledRequest, RequestScheduler } from './request-scheduler.js';
export { PlanScheduler, sharedSchedulerFor, DAILY_WINDOWS } from './scheduler/index.js';
export type {
  PlanSchedulerOptions,
  SharedSchedulerOptions,
  DailyWindow,
  DailyBudget,
  PlanSchedulerStats,
  RuleStats,
  WaitStats,
  SourceStats,
  SourceRequestStats,
  SourceWaitStats,
  WaitBucket,
  WindowStore,
  WindowSpec,
  SlidingWindowSpec,
  RollingWindowSpec,
  BucketSpec,
  AcquireResult,
  StartTicket,
} from './scheduler/index.js';

// The one clock of a process.
export { systemClock, acceleratedClock, ManualClock, clockScheduler } from './clock.js';
export type { Clock, AcceleratedClockOptions } from './clock.js';

// Errors: branch on `err.code`; the classes exported are those with fields to read.
export { ERROR_CODES } from './error-codes.js';
export type { ErrorCode } from './error-codes.js';
export { QuoteflowError, InvalidOptionError, ServiceError, MissingItemsError } from './errors.js';
export type { QuoteflowErrorOptions, ServiceRefusal } from './errors.js';
