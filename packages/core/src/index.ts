// First: a Node.js older than `engines` is refused here, with a message, before a dependency crashes on it.
import './internal/supported-node.js';
export {
  PLANS,
  PlanSchema,
  ENDPOINT_KINDS,
  MAX_KLINE_PER_REQUEST,
  planLimits,
  limitOverridesOf,
  sustainedRate,
  WINDOW_RULE_IDS,
} from './plans.js';
export type {
  Plan,
  EndpointKind,
  WindowRule,
  PlanLimits,
  PlanLimitOverrides,
  WindowRuleOverride,
} from './plans.js';
export { KLINE_TYPES, isKlineType, EXCHANGES, EXCHANGE_TIME_ZONES, HISTORY_PHASES } from './domain.js';
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
  ReadStamps,
} from './domain.js';
export {
  PRODUCT_CLASSES,
  FAMILIES,
  FAMILY_PREFIX,
  STOCK_MARKETS,
  KLINE_PERIOD_MS,
  stockMarketOf,
  codeOfSuspendedSymbol,
  marketOfExchange,
  familyOf,
  classifyCode,
  canPageBackwards,
  calendarOf,
  hasKlineType,
} from './markets.js';
export type { ProductClass, Family, StockMarket, TradingCalendar } from './markets.js';
export { barPeriodAt } from './calendar/bar-period-at.js';
export type { BarPeriod } from './calendar/bar-period-at.js';
export { EXCHANGE_IDS } from './calendar/exchange-calendar-data.js';
export type { ExchangeId, HolidayPublishing } from './calendar/exchange-calendar-data.js';
export { EXCHANGE_CALENDARS } from './calendar/trading-calendar.js';
export type { CalendarId } from './calendar/trading-calendar.js';
export { calendarDataCoverage } from './calendar/calendar-data-coverage.js';
export type { CalendarDataCoverage } from './calendar/calendar-data-coverage.js';
export { tradingSegmentsOn } from './calendar/trading-segments-on.js';
export type { TradingSegment } from './calendar/trading-segments-on.js';
export { isWeeklyMarketOpenAt, surelyTradingMsBetween } from './calendar/weekly-pause.js';
export { mayTradeAt } from './calendar/may-trade-at.js';
export { sessionOn, sessionAtOrAfter } from './trading-sessions.js';
export type { TradingSession, LocalDate } from './trading-sessions.js';
export {
  barFinalAfterMs,
  finalReadFromMs,
  isBarClosedAt,
  tradingDateOf,
  barsMissingBetween,
  dateCalendarMisses,
} from './bar-finality.js';
export { zonedToUtcMs, utcToZoned, parseWallClock } from './internal/zoned-time.js';
export { PRIORITIES } from './request-scheduler.js';
export type { Priority, ScheduledRequest, RequestScheduler } from './request-scheduler.js';
export {
  PlanScheduler,
  PLAN_SCHEDULER_DEFAULTS,
  sharedSchedulerFor,
  MemoryWindowStore,
  SqliteWindowStore,
  SQLITE_WINDOW_STORE_DEFAULTS,
  quoteflowStateDir,
  PlanWindows,
  DAILY_WINDOWS,
} from './scheduler/index.js';
export type {
  DailyBudget,
  PlanSchedulerOptions,
  PlanSchedulerStats,
  RuleStats,
  WaitStats,
  SourceStats,
  SourceRequestStats,
  SourceWaitStats,
  WaitBucket,
  SharedSchedulerOptions,
  SqliteWindowStoreOptions,
  DailyWindow,
  CalendarDay,
  MachineTime,
  WindowStore,
  WindowSpec,
  SlidingWindowSpec,
  RollingWindowSpec,
  BucketSpec,
  AcquireResult,
  StartTicket,
} from './scheduler/index.js';
export {
  systemClock,
  monotonicClock,
  acceleratedClock,
  ManualClock,
  sleepOn,
  clockScheduler,
} from './clock.js';
export type { Clock, AcceleratedClockOptions } from './clock.js';
export { retryWithBudget, RETRY_WITH_BUDGET_DEFAULTS } from './retry-with-budget.js';
export { runLimited } from './run-limited.js';
export type { RetryWithBudgetOptions } from './retry-with-budget.js';
export {
  ERROR_CODES,
  QuoteflowError,
  InvalidOptionError,
  ServiceError,
  RateLimitedError,
  UnauthorizedTokenError,
  InvalidCodeError,
  BodyEmptyError,
  UnauthorizedCodeError,
  TooManyProductsError,
  BadRequestError,
  HttpStatusError,
  NetworkError,
  UnreachableServiceError,
  RequestTimeoutError,
  DecodeError,
  MissingItemsError,
  AbortedError,
  ClientClosedError,
  BufferOverflowError,
  isQuoteflowError,
} from './errors.js';
export type { ErrorCode, QuoteflowErrorOptions, ServiceRefusal } from './errors.js';
export { QuoteflowClient, CLIENT_DEFAULTS } from './client.js';
export type {
  QuoteflowClientOptions,
  RequestRecord,
  QuoteflowLogger,
  TimeoutOptions,
  RetryOptions,
  CallOptions,
} from './client.js';
export type { RequestSpec } from './endpoints/request-spec.js';
export { RetEnvelopeSchema, interpretRetResponse } from './endpoints/ret-envelope.js';
export { KlineRecordSchema } from './endpoints/kline-record.js';
export { buildKlineRequest, decodeKlineData, KlineDataSchema } from './endpoints/kline.js';
export type { KlineQuery, KlineResult } from './endpoints/kline.js';
export {
  buildBatchKlineRequest,
  decodeBatchKlineData,
  BatchKlineDataSchema,
} from './endpoints/batch-kline.js';
export type { BatchKlineGroup, BatchKlineGroupResult } from './endpoints/batch-kline.js';
export { buildDepthTickRequest, decodeDepthTickData, DepthTickDataSchema } from './endpoints/depth-tick.js';
export {
  buildStaticInfoRequest,
  decodeStaticInfoData,
  StaticInfoDataSchema,
} from './endpoints/static-info.js';
export {
  buildSuspensionRequest,
  decodeSuspensionResponse,
  SuspensionEnvelopeSchema,
  SuspensionRecordSchema,
} from './endpoints/suspension.js';
export type { SuspensionQuery } from './endpoints/suspension.js';
export type { SourceClient } from './sources/source-client.js';
export { pollDepth, POLL_DEPTH_DEFAULTS } from './sources/poll-depth.js';
export type { PollDepthOptions } from './sources/poll-depth.js';
export { pollLatestBars, pollLatestBatches } from './sources/poll-latest-bars.js';
export type { PollLatestBarsOptions, LatestBarsBatch } from './sources/poll-latest-bars.js';
export { klineHistory, HISTORY_GAP_REASONS } from './sources/kline-history.js';
export type { KlineHistoryOptions } from './sources/kline-history.js';
export { pollSuspensions, POLL_SUSPENSIONS_DEFAULTS } from './sources/poll-suspensions.js';
export type { PollSuspensionsOptions } from './sources/poll-suspensions.js';
export { fetchStaticInfo } from './sources/fetch-static-info.js';
export type { FetchStaticInfoOptions } from './sources/fetch-static-info.js';
export { toAsyncIterable, TO_ASYNC_ITERABLE_DEFAULTS } from './adapters/to-async-iterable.js';
export type { ToAsyncIterableOptions } from './adapters/to-async-iterable.js';
export { toReadable } from './adapters/to-readable.js';
export type { ToReadableOptions } from './adapters/to-readable.js';
export {
  estimatePlan,
  smallestFittingPlan,
  backfillRequestsFor,
  minDurationMs,
  PLAN_TIMING_DEFAULTS,
  LIVE_MARKETS,
} from './estimate-plan.js';
export type {
  Universe,
  PlanEstimate,
  BackfillEstimate,
  LiveEstimate,
  LiveMarket,
  MarketLiveEstimate,
  PlanTiming,
} from './estimate-plan.js';
export { formatDuration } from './format-duration.js';
export { writeFileDurably, renameDurably, makeDirectory, syncDirectory } from './write-file-durably.js';
export type { WriteFileDurablyOptions } from './write-file-durably.js';
export { seriesKey } from './series-key.js';
export { suspensionInstant } from './suspension-instant.js';
