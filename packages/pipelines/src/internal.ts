// `@quoteflow/pipelines/internal`: what quoteflow's own packages (and their tests) need from this package
// and users do not. Not covered by semver: a name here may change or go in any release.
export { SyncState } from './sync-state.js';
export { findRefusedCodes, isCodeRefusal } from './internal/refused-codes.js';
export { clipGap, unexplainedGap } from './inspect-dataset.js';
export { missingCommittedFiles } from './missing-committed-files.js';
export { CalendarDisagreements } from './calendar-disagreements.js';
export { readSeriesStarts } from './read-kline-bars.js';
export { readHalts } from './read-halts.js';
export type { DatasetHalt } from './read-halts.js';
