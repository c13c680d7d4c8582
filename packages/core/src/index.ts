export {
  PLANS,
  PlanSchema,
  ENDPOINT_KINDS,
  MAX_KLINE_PER_REQUEST,
  MAX_BARS_PER_BATCH_GROUP,
  planLimits,
  sustainedRate,
} from './plans.js';
export type { Plan, EndpointKind, WindowRule, PlanLimits, PlanLimitOverrides } from './plans.js';
export { KLINE_TYPES, isKlineType, EXCHANGES, EXCHANGE_TIME_ZONES } from './domain.js';
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
} from './domain.js';
export {
  PRODUCT_CLASSES,
  FAMILIES,
  FAMILY_PREFIX,
  STOCK_MARKETS,
  STOCK_CALENDARS,
  UTC_CALENDAR,
  KLINE_PERIOD_MS,
  stockMarketOf,
  familyOf,
  classifyCode,
  canPageBackwards,
  calendarOf,
  barPeriodAt,
} from './markets.js';
export type { ProductClass, Family, StockMarket, TradingCalendar, BarPeriod } from './markets.js';
export { zonedToUtcMs, utcToZoned, parseWallClock } from './internal/zoned-time.js';
export { PRIORITIES } from './request-scheduler.js';
export type { Priority, ScheduledRequest, RequestScheduler } from './request-scheduler.js';
export { PlanScheduler, sharedSchedulerFor } from './scheduler/index.js';
export type { PlanSchedulerOptions } from './scheduler/index.js';
