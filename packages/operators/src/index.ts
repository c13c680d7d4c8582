export { seriesKey } from './series-key.js';
export { isBarUpdate } from './is-bar-update.js';
export { BAR_PROBLEMS, normalizeBar, normalizeBarList, normalizeBars } from './normalize-bars.js';
export type {
  BarInput,
  BarProblem,
  BarReport,
  NormalizeBarsOptions,
  NormalizedBars,
} from './normalize-bars.js';
export {
  DEDUPE_BY_SEQ_DEFAULTS,
  WITHOUT_SEQ_POLICIES,
  createSeqDeduper,
  dedupeBySeq,
} from './dedupe-by-seq.js';
export type { DedupeBySeqOptions, SeqDeduper, SeqTick, WithoutSeqPolicy } from './dedupe-by-seq.js';
export { createBarMerger } from './bar-merger.js';
export { MERGE_BARS_DEFAULTS, MERGE_GAP_REASONS } from './bar-merger-types.js';
export type {
  BarMerger,
  BarMergerOptions,
  MergeBarsInput,
  MergeBarsOutput,
  PendingBar,
  SeriesReset,
} from './bar-merger-types.js';
export { mergeBars } from './merge-bars.js';
export type { MergeBarsOptions } from './merge-bars.js';
export { RESAMPLE_BARS_DEFAULTS, createBarResampler } from './bar-resampler.js';
export type {
  BarResampler,
  BarResamplerOptions,
  ResampleInput,
  ResampleTarget,
  ResampledBar,
} from './bar-resampler.js';
export { resampleBarList, resampleBars } from './resample-bars.js';
export { yesterdayClose, yesterdayCloses } from './yesterday-close.js';
export type { YesterdayClose } from './yesterday-close.js';
export {
  SUSPENSION_CHANGES_DEFAULTS,
  SUSPENSION_CHANGE_KINDS,
  createSuspensionDiffer,
  normalizeSuspension,
  suspensionChanges,
  suspensionKey,
} from './suspension-changes.js';
export type {
  SuspensionChange,
  SuspensionChangeKind,
  SuspensionChangesOptions,
  SuspensionDiffer,
} from './suspension-changes.js';
