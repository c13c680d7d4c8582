import { describe, expect, it } from 'vitest';
import { QUOTEFLOW_FORMAT_VERSION } from '../format-version.js';
import { klineWatermarkCommitsOf, klineWatermarkMessage } from './kline-watermark-record.js';

const TOPIC = 'p.kline.watermarks';
const record = (offset: number, value: string | undefined) => ({
  partition: 0,
  offset: BigInt(offset),
  key: 'AAPL.US|1',
  value,
});

describe('K-line watermark records', () => {
  it("carry this release's format version, and are read beside records written before versions were recorded", () => {
    const old = JSON.stringify({ first: 0, last: 60_000, rows: 2, transactional_id: 'a' });
    const now = klineWatermarkMessage(TOPIC, 'AAPL.US|1', { first: 0, last: 120_000, rows: 3 }, 'b', 0);
    expect(JSON.parse(now.value as string)).toMatchObject({ format_version: QUOTEFLOW_FORMAT_VERSION });
    const read = klineWatermarkCommitsOf(TOPIC, [record(0, old), record(1, now.value as string)]);
    expect(read.get('AAPL.US|1')).toEqual({
      watermark: { first: 0, last: 120_000, rows: 3 },
      transactionalId: 'b',
    });
  });

  it('of a newer format are refused naming the record and both versions, whatever their shape', () => {
    const newer = QUOTEFLOW_FORMAT_VERSION + 1;
    const value = JSON.stringify({ format_version: newer, extent: [0, 60_000] });
    expect(() => klineWatermarkCommitsOf(TOPIC, [record(7, value)])).toThrow(
      expect.objectContaining({
        code: 'QF_FORMAT_VERSION',
        message: `kafka: ${TOPIC} partition 0 offset 7 (key "AAPL.US|1") was written in quoteflow format version ${newer}, newer than this release's format version ${QUOTEFLOW_FORMAT_VERSION}: upgrade quoteflow to continue it`,
      }),
    );
  });
});
