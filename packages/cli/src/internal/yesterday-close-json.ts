import type { YesterdayClose } from '@quoteflow/operators';
import { roundLikeInputs } from './decimals.js';

/** Decimals of `changePercent` in JSON (a hundredth of a basis point). */
const PERCENT_DECIMALS = 4;

/**
 * One previous close as JSON (`yesterday-close --format json`, and the `yesterdayClose` pipeline
 * operator): snake_case keys, as the datasets' columns and every other JSON record of quoteflow.
 */
export function yesterdayCloseJson(y: YesterdayClose): Record<string, unknown> {
  return {
    code: y.code,
    prev_date: y.prevDate ?? null,
    prev_ts: y.prevTsMs === undefined ? null : new Date(y.prevTsMs).toISOString(),
    prev_close: y.prevClose ?? null,
    latest_date: y.latestDate,
    latest_ts: new Date(y.latestTsMs).toISOString(),
    latest_price: y.latestPrice,
    // Derived values get the decimals of the prices they come from (no float noise).
    change:
      y.change === undefined || y.prevClose === undefined
        ? null
        : roundLikeInputs(y.change, y.prevClose, y.latestPrice),
    change_percent: y.changePercent === undefined ? null : Number(y.changePercent.toFixed(PERCENT_DECIMALS)),
  };
}
