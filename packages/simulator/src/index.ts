export { startSimulator } from './start-simulator.js';
export { tokenLabel } from './token-label.js';
export type { Simulator, SimulatorOptions, SimTokenSpec, SimClock } from './start-simulator.js';
export {
  SIM_INTRADAY_LABELLINGS,
  SIM_DAILY_LABELLINGS,
  SIM_PERIOD_LABELLINGS,
  SIM_LABELLING_AXES,
  SIM_DEFAULT_LABELLING,
  SIM_LABELLINGS,
  resolveSimLabelling,
} from './sim-labelling.js';
export type {
  SimLabelling,
  SimIntradayLabelling,
  SimDailyLabelling,
  SimPeriodLabelling,
} from './sim-labelling.js';
export { parseSimLabelling } from './parse-sim-labelling.js';
export {
  SIM_PLANS,
  SIM_ENDPOINTS,
  SIM_MAX_KLINE_NUM,
  SIM_MAX_BATCH_BARS,
  SUSPENSION_INTERVAL_MS,
  simPlanLimits,
  planCovers,
} from './sim-plans.js';
export type { SimPlan, SimEndpoint, SimWindowRule, SimPlanLimits, SimPlanOverrides } from './sim-plans.js';
export { RateLimiter } from './rate-limiter.js';
export type { RateDecision, RateLimiterOptions } from './rate-limiter.js';
export { RequestLog } from './request-log.js';
export type { SimLogEntry, SimLogFilter } from './request-log.js';
export { FaultInjector, FAULT_KINDS } from './fault-injector.js';
export type { FaultKind, FaultRule } from './fault-injector.js';
export { SIM_PRODUCT_CLASSES, defaultCatalogue, syntheticCatalogue } from './catalogue.js';
export type { SimProduct, SimProductClass, SimStockMarket, SyntheticCatalogueOptions } from './catalogue.js';
export {
  SIM_CALENDARS,
  SIM_KLINE_PERIOD_MS,
  simBarPeriodAt,
  isTradingAt,
  sessionsOfDay,
  tradingIntervals,
} from './calendars.js';
export type { SimCalendar, SimBarPeriod } from './calendars.js';
export { SimMarket } from './sim-market.js';
export type { SimBar, SimBook, SimMarketOptions } from './sim-market.js';
export { SIM_EXCHANGES, SIM_EXCHANGE_TIME_ZONES, suspensionRecords } from './suspension-records.js';
export type { SimExchange, SimSuspensionRecord } from './suspension-records.js';
export type { SimHalt } from './sim-halts.js';
export { parseTokenSpecs } from './parse-token-specs.js';
