export { estimatePlan, smallestFittingPlan, backfillRequestsFor, minDurationMs } from './estimate-plan.js';
export type { Universe, PlanEstimate, BackfillEstimate, LiveEstimate } from './estimate-plan.js';
export { formatDuration } from './format-duration.js';
