// `@quoteflow/core/internal`: what quoteflow's own packages (and their tests) need from this package
// and users do not. Not covered by semver: a name here may change or go in any release.
import './internal/supported-node.js';
export { MAX_KLINE_PER_REQUEST, limitOverridesOf, sustainedRate, WINDOW_RULE_IDS } from './plans.js';
export { EXCHANGE_TIME_ZONES } from './domain.js';
export type { ReadStamps } from './domain.js';
export {
  KLINE_PERIOD_MS,
  stockMarketOf,
  codeOfSuspendedSymbol,
  marketOfExchange,
  familyOf,
  classifyCode,
  canPageBackwards,
  hasKlineType,
} from './markets.js';
export { barPeriodAt } from './calendar/bar-period-at.js';
export { EXCHANGE_CALENDARS } from './calendar/trading-calendar.js';
export { tradingSegmentsOn } from './calendar/trading-segments-on.js';
export { isWeeklyMarketOpenAt, surelyTradingMsBetween } from './calendar/weekly-pause.js';
export { mayTradeAt } from './calendar/may-trade-at.js';
export { sessionOn } from './trading-sessions.js';
export type { TradingSession } from './trading-sessions.js';
export {
  barFinalAfterMs,
  finalReadFromMs,
  isBarClosedAt,
  tradingDateOf,
  barsMissingBetween,
  dateCalendarMisses,
} from './bar-finality.js';
export { zonedToUtcMs, utcToZoned, parseWallClock } from './internal/zoned-time.js';
export {
  PLAN_SCHEDULER_DEFAULTS,
  MemoryWindowStore,
  SqliteWindowStore,
  quoteflowStateDir,
  PlanWindows,
} from './scheduler/index.js';
export type { MachineTime } from './scheduler/index.js';
export { monotonicClock, sleepOn } from './clock.js';
export { retryWithBudget } from './retry-with-budget.js';
export { runLimited } from './run-limited.js';
export {
  RateLimitedError,
  UnauthorizedTokenError,
  InvalidCodeError,
  UnauthorizedCodeError,
  TooManyProductsError,
  BadRequestError,
  UnreachableServiceError,
  DecodeError,
  AbortedError,
  BufferOverflowError,
  isQuoteflowError,
} from './errors.js';
export { CLIENT_DEFAULTS } from './client.js';
export type { RequestSpec } from './endpoints/request-spec.js';
export { interpretRetResponse } from './endpoints/ret-envelope.js';
export { buildKlineRequest, decodeKlineData } from './endpoints/kline.js';
export { buildBatchKlineRequest, decodeBatchKlineData } from './endpoints/batch-kline.js';
export { buildDepthTickRequest, decodeDepthTickData } from './endpoints/depth-tick.js';
export { buildStaticInfoRequest, decodeStaticInfoData } from './endpoints/static-info.js';
export { buildSuspensionRequest, decodeSuspensionResponse } from './endpoints/suspension.js';
export { pollLatestBatches } from './sources/poll-latest-bars.js';
export { HISTORY_GAP_REASONS } from './sources/kline-history.js';
export { POLL_SUSPENSIONS_DEFAULTS } from './sources/poll-suspensions.js';
export { estimatePlan, smallestFittingPlan, backfillRequestsFor, minDurationMs } from './estimate-plan.js';
export type {
  Universe,
  PlanEstimate,
  BackfillEstimate,
  LiveEstimate,
  PlanTiming,
  LiveMarket,
  MarketLiveEstimate,
} from './estimate-plan.js';
export { formatDuration } from './format-duration.js';
export { writeFileDurably, renameDurably, makeDirectory, syncDirectory } from './write-file-durably.js';
export { suspensionInstant } from './suspension-instant.js';
