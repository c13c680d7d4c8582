// `@quoteflow/simulator/internal`: what quoteflow's own packages (and their tests) need from this package
// and users do not. Not covered by semver: a name here may change or go in any release.
export { tokenLabel } from './token-label.js';
export { SIM_DEFAULT_LABELLING, SIM_LABELLINGS } from './sim-labelling.js';
export { simPlanLimits } from './sim-plans.js';
export { RateLimiter } from './rate-limiter.js';
export {
  SIM_CALENDARS,
  SIM_KLINE_PERIOD_MS,
  simBarPeriodAt,
  isTradingAt,
  sessionsOfDay,
} from './calendars.js';
export { suspensionRecords } from './suspension-records.js';
