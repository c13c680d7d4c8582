// The key lives in core so that sinks (which report watermarks by it) share it; re-exported here,
// where operators' users have always found it.
export { seriesKey } from '@quoteflow/core';
