export { PlanScheduler } from './plan-scheduler.js';
export { PLAN_SCHEDULER_DEFAULTS } from './plan-scheduler-options.js';
export type { PlanSchedulerOptions } from './plan-scheduler-options.js';
export type {
  PlanSchedulerStats,
  RuleStats,
  WaitStats,
  SourceStats,
  SourceRequestStats,
  SourceWaitStats,
  WaitBucket,
} from './plan-scheduler-stats.js';
export { sharedSchedulerFor } from './shared-scheduler-for.js';
export { MemoryWindowStore } from './memory-window-store.js';
export type {
  WindowStore,
  WindowSpec,
  SlidingWindowSpec,
  BucketSpec,
  AcquireResult,
  StartTicket,
} from './window-store.js';
