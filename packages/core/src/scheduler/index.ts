export { PlanScheduler } from './plan-scheduler.js';
export { PLAN_SCHEDULER_DEFAULTS } from './plan-scheduler-options.js';
export type { PlanSchedulerOptions } from './plan-scheduler-options.js';
export type {
  DailyBudget,
  PlanSchedulerStats,
  RuleStats,
  WaitStats,
  SourceStats,
  SourceRequestStats,
  SourceWaitStats,
  WaitBucket,
} from './plan-scheduler-stats.js';
export { sharedSchedulerFor } from './shared-scheduler-for.js';
export type { SharedSchedulerOptions } from './shared-scheduler-for.js';
export { MemoryWindowStore } from './memory-window-store.js';
export { SqliteWindowStore, SQLITE_WINDOW_STORE_DEFAULTS } from './sqlite-window-store.js';
export type { SqliteWindowStoreOptions } from './sqlite-window-store.js';
export { quoteflowStateDir } from './quoteflow-state-dir.js';
export { IN_FLIGHT_BOUND_MS } from './in-flight-bound.js';
export { PlanWindows, DAILY_WINDOWS } from './internal/plan-windows.js';
export type { DailyWindow, CalendarDay } from './internal/plan-windows.js';
export type { MachineTime } from './internal/machine-time.js';
export type {
  WindowStore,
  WindowSpec,
  SlidingWindowSpec,
  BucketSpec,
  RollingWindowSpec,
  AcquireResult,
  StartTicket,
} from './window-store.js';
