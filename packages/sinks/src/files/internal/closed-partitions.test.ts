import { describe, expect, it } from 'vitest';
import { isPartitionClosed } from './closed-partitions.js';

describe('isPartitionClosed', () => {
  const at = (iso: string) => Date.parse(iso);
  it('closes a month, a day and a year at the first instant after them (UTC), not before', () => {
    const month = 'kline/kline_type=1/month=2026-01';
    expect(isPartitionClosed(month, at('2026-01-31T23:59:59.999Z'))).toBe(false);
    expect(isPartitionClosed(month, at('2026-02-01T00:00:00.000Z'))).toBe(true);
    expect(isPartitionClosed('kline/kline_type=1/month=2025-12', at('2026-01-01T00:00:00.000Z'))).toBe(true);
    const day = 'depth/date=2026-02-28';
    expect(isPartitionClosed(day, at('2026-02-28T23:59:59.999Z'))).toBe(false);
    expect(isPartitionClosed(day, at('2026-03-01T00:00:00.000Z'))).toBe(true);
    expect(isPartitionClosed('kline/kline_type=8/year=2025', at('2025-12-31T23:59:59.999Z'))).toBe(false);
    expect(isPartitionClosed('kline/kline_type=8/year=2025', at('2026-01-01T00:00:00.000Z'))).toBe(true);
  });
  it('never closes a partition without a period', () => {
    expect(isPartitionClosed('kline/kline_type=1', at('2100-01-01T00:00:00Z'))).toBe(false);
    // depth is partitioned by its ticks' UTC date: a day is closed from the next UTC midnight.
    expect(isPartitionClosed('depth/date=2026-01-05', at('2026-01-05T23:59:59.999Z'))).toBe(false);
    expect(isPartitionClosed('depth/date=2026-01-05', at('2026-01-06T00:00:00.000Z'))).toBe(true);
    expect(isPartitionClosed('suspension/exchange=nyse', at('2100-01-01T00:00:00Z'))).toBe(false);
  });
});
