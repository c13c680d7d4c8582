export { estimatePlan, smallestFittingPlan, backfillRequestsFor, minDurationMs } from './estimate-plan.js';
export type { Universe, PlanEstimate, BackfillEstimate, LiveEstimate } from './estimate-plan.js';
export { formatDuration } from './format-duration.js';
export { SyncState, stateKey } from './sync-state.js';
export { PipelineError, PIPELINE_ERROR_CODES } from './pipeline-error.js';
export type { PipelineErrorCode } from './pipeline-error.js';
