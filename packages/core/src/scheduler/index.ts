export { PlanScheduler, sharedSchedulerFor } from './plan-scheduler.js';
export type { PlanSchedulerOptions } from './plan-scheduler.js';
