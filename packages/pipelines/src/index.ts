export { estimatePlan, smallestFittingPlan, backfillRequestsFor, minDurationMs } from './estimate-plan.js';
export type { Universe, PlanEstimate, BackfillEstimate, LiveEstimate } from './estimate-plan.js';
export { formatDuration } from './format-duration.js';
export { SyncState, stateKey } from './sync-state.js';
export { PipelineError, PIPELINE_ERROR_CODES } from './pipeline-error.js';
export type { PipelineErrorCode } from './pipeline-error.js';
export { klineSync, KLINE_SYNC_DEFAULTS } from './kline-sync.js';
export type {
  KlineSyncOptions,
  KlineSyncEvent,
  KlineSyncSummary,
  KlineFilesOptions,
  PipelineHandle,
} from './kline-sync.js';
export { depthCapture } from './depth-capture.js';
export type { DepthCaptureOptions, DepthCaptureSummary } from './depth-capture.js';
export { suspensionWatch, SUSPENSION_WATCH_DEFAULTS } from './suspension-watch.js';
export type { SuspensionWatchOptions, SuspensionWatchSummary } from './suspension-watch.js';
