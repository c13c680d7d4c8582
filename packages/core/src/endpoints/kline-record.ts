import { z } from 'zod';
import type { Bar, KlineType } from '../domain.js';
import { parseDecimal, parseDecimalOrNull, parseEpochMs } from '../internal/parse-decimal.js';
import type { EndpointKind } from '../plans.js';

/** One K-line record on the wire (spec: K-line record; all fields strings). */
export const KlineRecordSchema = z.object({
  timestamp: z.string(),
  open_price: z.string(),
  close_price: z.string(),
  high_price: z.string(),
  low_price: z.string(),
  volume: z.string(),
  turnover: z.string(),
});
export type KlineRecordWire = z.infer<typeof KlineRecordSchema>;

/**
 * Converts validated K-line records to bars, oldest first, one bar per start time. The service
 * promises no order and has been seen to send bars newest-first and then repeated
 * (provider-facts.md, known upstream defects): sort, then keep the first record of each start.
 * A plain loop, not zod transforms: this is the `/batch-kline` hot path.
 */
export function toBars(
  records: readonly KlineRecordWire[],
  code: string,
  klineType: KlineType,
  endpoint: EndpointKind,
  pathPrefix: string,
): Bar[] {
  const bars: Bar[] = new Array<Bar>(records.length);
  let sorted = true;
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    const at = (field: string) => () => `${pathPrefix}[${i}].${field}`;
    const bar: Bar = {
      type: 'bar',
      code,
      klineType,
      tsMs: parseEpochMs(r.timestamp, endpoint, at('timestamp')),
      open: parseDecimal(r.open_price, endpoint, at('open_price')),
      high: parseDecimal(r.high_price, endpoint, at('high_price')),
      low: parseDecimal(r.low_price, endpoint, at('low_price')),
      close: parseDecimal(r.close_price, endpoint, at('close_price')),
      // Empty volume/turnover is a known upstream defect: null, never NaN (provider-facts.md).
      volume: parseDecimalOrNull(r.volume, endpoint, at('volume')),
      turnover: parseDecimalOrNull(r.turnover, endpoint, at('turnover')),
    };
    if (i > 0 && bar.tsMs <= bars[i - 1]!.tsMs) sorted = false;
    bars[i] = bar;
  }
  if (sorted) return bars;
  const order = bars.map((b, i) => [b, i] as const).sort((a, b) => a[0].tsMs - b[0].tsMs || a[1] - b[1]);
  const out: Bar[] = [];
  for (const [bar] of order) if (out.length === 0 || out[out.length - 1]!.tsMs !== bar.tsMs) out.push(bar);
  return out;
}
