export { startSimulator } from './start-simulator.js';
export type { Simulator, SimulatorOptions, SimTokenSpec, SimClock } from './start-simulator.js';
export { SIM_INTRADAY_LABELLINGS, SIM_DAILY_LABELLINGS, SIM_PERIOD_LABELLINGS } from './sim-labelling.js';
export type {
  SimLabelling,
  SimIntradayLabelling,
  SimDailyLabelling,
  SimPeriodLabelling,
} from './sim-labelling.js';
export { parseSimLabelling } from './parse-sim-labelling.js';
export { SIM_PLANS, SIM_ENDPOINTS } from './sim-plans.js';
export type { SimPlan, SimEndpoint, SimPlanOverrides } from './sim-plans.js';
export { RequestLog } from './request-log.js';
export type { SimLogEntry, SimLogFilter } from './request-log.js';
export { FaultInjector, FAULT_KINDS } from './fault-injector.js';
export type { FaultKind, FaultRule } from './fault-injector.js';
export { SIM_PRODUCT_CLASSES, defaultCatalogue, syntheticCatalogue } from './catalogue.js';
export type { SimProduct, SimProductClass, SimStockMarket, SyntheticCatalogueOptions } from './catalogue.js';
export type { SimCalendar, SimBarPeriod } from './calendars.js';
export { SimMarket } from './sim-market.js';
export type { SimBar, SimBook, SimMarketOptions } from './sim-market.js';
export { SIM_EXCHANGES } from './suspension-records.js';
export type { SimExchange } from './suspension-records.js';
export type { SimHalt } from './sim-halts.js';
export { parseTokenSpecs } from './parse-token-specs.js';
