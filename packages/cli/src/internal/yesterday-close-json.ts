import type { YesterdayClose } from '@quoteflow/operators';
import { roundLikeInputs } from './decimals.js';

/** Decimals of `changePercent` in JSON (a hundredth of a basis point). */
const PERCENT_DECIMALS = 4;

/** One previous close as JSON (`yesterday-close --format json`, and the `yesterdayClose` pipeline operator). */
export function yesterdayCloseJson(y: YesterdayClose): Record<string, unknown> {
  return {
    code: y.code,
    prevDate: y.prevDate ?? null,
    prevTs: y.prevTsMs === undefined ? null : new Date(y.prevTsMs).toISOString(),
    prevClose: y.prevClose ?? null,
    latestDate: y.latestDate,
    latestTs: new Date(y.latestTsMs).toISOString(),
    latestPrice: y.latestPrice,
    // Derived values get the decimals of the prices they come from (no float noise).
    change:
      y.change === undefined || y.prevClose === undefined
        ? null
        : roundLikeInputs(y.change, y.prevClose, y.latestPrice),
    changePercent: y.changePercent === undefined ? null : Number(y.changePercent.toFixed(PERCENT_DECIMALS)),
  };
}
