import { isKlineType, type KlineType } from '@quoteflow/core';
import { hasKlineType } from '@quoteflow/core/internal';
import { seriesKey } from '@quoteflow/operators';
import { PipelineError } from '../pipeline-error.js';
import { KlineSeriesState } from './kline-series-state.js';

/** @throws PipelineError `QF_PIPELINE_CONFIG` for empty codes, bad kline types, or a type a code does not have. */
export function checkUniverse(codes: readonly string[], klineTypes: readonly KlineType[]): void {
  if (codes.length === 0)
    throw new PipelineError('QF_PIPELINE_CONFIG', 'klineSync: "codes" must not be empty');
  if (klineTypes.length === 0 || !klineTypes.every(isKlineType)) {
    throw new PipelineError(
      'QF_PIPELINE_CONFIG',
      `klineSync: "klineTypes" must be kline types 1-10, got ${JSON.stringify(klineTypes)}`,
    );
  }
  for (const klineType of klineTypes) {
    const without = codes.filter((code) => !hasKlineType(code, klineType));
    if (without.length > 0)
      throw new PipelineError(
        'QF_PIPELINE_CONFIG',
        `klineSync: stock and index codes have no kline type ${klineType} (2-hour and 4-hour bars): ${without.slice(0, 5).join(', ')}`,
      );
  }
}

/** The series of `codes` × `klineTypes` missing from `series`, new (not added to it). */
export function missingSeries(
  series: ReadonlyMap<string, KlineSeriesState>,
  codes: readonly string[],
  klineTypes: readonly KlineType[],
): KlineSeriesState[] {
  const fresh: KlineSeriesState[] = [];
  for (const code of new Set(codes))
    for (const klineType of klineTypes)
      if (!series.has(seriesKey(code, klineType))) fresh.push(new KlineSeriesState(code, klineType));
  return fresh;
}
