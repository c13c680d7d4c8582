// The planner: its code lives in core beside the limit table it reads (core's internal entry, which
// the CLI's `plan` loads without the sinks); this is its public home.
export {
  estimatePlan,
  smallestFittingPlan,
  backfillRequestsFor,
  minDurationMs,
  formatDuration,
} from '@quoteflow/core/internal';
export type {
  Universe,
  PlanEstimate,
  BackfillEstimate,
  LiveEstimate,
  PlanTiming,
  LiveMarket,
  MarketLiveEstimate,
} from '@quoteflow/core/internal';
export { PipelineError, PIPELINE_ERROR_CODES } from './pipeline-error.js';
export type { PipelineErrorCode } from './pipeline-error.js';
export { klineSync } from './kline-sync.js';
export { klineUpdates } from './kline-updates.js';
export type { KlineUpdatesOptions, KlineUniverseChange } from './kline-updates.js';
export { KLINE_SYNC_DEFAULTS } from './kline-sync-options.js';
export type {
  KlineSyncOptions,
  KlineReadOptions,
  KlineSyncEvent,
  MissingBars,
  KlineSyncSummary,
  IncompleteSeries,
  DatasetRepair,
  KlineSyncHandle,
  KlineFilesOptions,
} from './kline-sync-options.js';
export type { PipelineHandle } from './pipeline-handle.js';
export { depthCapture } from './depth-capture.js';
export type { DepthCaptureOptions, DepthCaptureSummary } from './depth-capture.js';
export { suspensionWatch, SUSPENSION_WATCH_DEFAULTS } from './suspension-watch.js';
export type { SuspensionWatchOptions, SuspensionWatchSummary } from './suspension-watch.js';
export type { PipelineFilesOptions } from './pipeline-files-options.js';
export { inspectDataset } from './inspect-dataset.js';
export type { DepthCodeInspection, SuspensionExchangeInspection } from './inspect-records.js';
export { compactDatasets } from './compact-datasets.js';
export type { CompactDatasetsOptions } from './compact-datasets.js';
export { readKlineBars } from './read-kline-bars.js';
export type { DatasetBar, ReadKlineBarsOptions, SeriesStarts } from './read-kline-bars.js';
export type {
  DatasetInspection,
  InspectDatasetOptions,
  SeriesInspection,
  SeriesGap,
} from './inspect-dataset.js';
