import { z } from 'zod';
import type { Bar, KlineType, ReadStamps } from '../domain.js';
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

const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const MS_THRESHOLD = 1e11;

/** A decimal string as a number, NaN when it is not one (the caller names the path). */
function dec(text: string): number {
  return DECIMAL.test(text) ? Number(text) : Number.NaN;
}

/** Re-parses a record that failed the fast path, so the decode error names the first bad field. */
function explain(r: KlineRecordWire, endpoint: EndpointKind, at: string): never {
  parseEpochMs(r.timestamp, endpoint, () => `${at}.timestamp`);
  for (const field of ['open_price', 'high_price', 'low_price', 'close_price'] as const)
    parseDecimal(r[field], endpoint, () => `${at}.${field}`);
  parseDecimalOrNull(r.volume, endpoint, () => `${at}.volume`);
  parseDecimalOrNull(r.turnover, endpoint, () => `${at}.turnover`);
  throw new Error(`unreachable: ${at} decoded on the slow path`);
}

/**
 * Converts validated K-line records to bars, oldest first, one bar per start time. The service
 * promises no order and has been seen to send bars newest-first and then repeated
 * (provider-facts.md, known upstream defects): sort, then keep the first record of each start.
 * A plain loop without closures, not zod transforms: this is the `/batch-kline` hot path (see
 * bench/decode.bench.ts); a record that fails is decoded again slowly to name the bad field.
 * Every bar carries `stamps`: when the answer was asked for and when it arrived.
 */
export function toBars(
  records: readonly KlineRecordWire[],
  code: string,
  klineType: KlineType,
  endpoint: EndpointKind,
  pathPrefix: string,
  stamps: ReadStamps,
): Bar[] {
  const { readAtMs, receivedAtMs } = stamps;
  const bars: Bar[] = new Array<Bar>(records.length);
  let sorted = true;
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    const ts = dec(r.timestamp);
    // Seconds on the wire (provider-facts.md); a value already in ms is tolerated, told apart by magnitude.
    const tsMs = ts >= MS_THRESHOLD ? Math.round(ts) : Math.round(ts * 1000);
    const open = dec(r.open_price);
    const high = dec(r.high_price);
    const low = dec(r.low_price);
    const close = dec(r.close_price);
    // Empty volume/turnover is a known upstream defect: null, never NaN (provider-facts.md).
    const volume = r.volume === '' ? null : dec(r.volume);
    const turnover = r.turnover === '' ? null : dec(r.turnover);
    if (
      !(ts >= 0) ||
      !Number.isFinite(tsMs) ||
      !Number.isFinite(open) ||
      !Number.isFinite(high) ||
      !Number.isFinite(low) ||
      !Number.isFinite(close) ||
      (volume !== null && !Number.isFinite(volume)) ||
      (turnover !== null && !Number.isFinite(turnover))
    ) {
      explain(r, endpoint, `${pathPrefix}[${i}]`);
    }
    const bar: Bar = {
      type: 'bar',
      code,
      klineType,
      tsMs,
      open,
      high,
      low,
      close,
      volume,
      turnover,
      readAtMs,
      receivedAtMs,
    };
    if (i > 0 && tsMs <= bars[i - 1]!.tsMs) sorted = false;
    bars[i] = bar;
  }
  if (sorted) return bars;
  const order = bars.map((b, i) => [b, i] as const).sort((a, b) => a[0].tsMs - b[0].tsMs || a[1] - b[1]);
  const out: Bar[] = [];
  for (const [bar] of order) if (out.length === 0 || out[out.length - 1]!.tsMs !== bar.tsMs) out.push(bar);
  return out;
}
