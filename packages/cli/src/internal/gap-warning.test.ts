import { describe, expect, it } from 'vitest';
import { humanLine } from './create-logger.js';
import { gapWarningFields } from './gap-warning.js';

const utc = (iso: string): number => Date.parse(`${iso}Z`);

describe('gapWarningFields', () => {
  it('names the first and last missing bar in UTC and on the exchange clock, in JSON and pretty lines', () => {
    // AAPL.US held 15:58 EST on Friday and 09:33 EDT on Monday (DST began on the Sunday).
    const fields = gapWarningFields({
      type: 'gap',
      code: 'AAPL.US',
      klineType: 1,
      fromMs: utc('2026-03-06T20:58'),
      toMs: utc('2026-03-09T13:33'),
      missing: { firstMs: utc('2026-03-06T20:59'), lastMs: utc('2026-03-09T13:32'), bars: 4 },
      reason: 'missing-bars',
    });
    expect(fields).toEqual({
      code: 'AAPL.US',
      klineType: 1,
      from: '2026-03-06T20:59:00.000Z',
      to: '2026-03-09T13:32:00.000Z',
      fromLocal: '2026-03-06 15:59 America/New_York',
      toLocal: '2026-03-09 09:32 America/New_York',
      bars: 4,
    });
    const line = humanLine(
      JSON.stringify({ level: 40, time: '2026-03-09T13:40:00.000Z', msg: 'missing-bars', ...fields }),
    );
    expect(line).toBe(
      '13:40:00 WARN  missing-bars code=AAPL.US klineType=1 from=2026-03-06T20:59:00.000Z ' +
        'to=2026-03-09T13:32:00.000Z fromLocal=2026-03-06 15:59 America/New_York ' +
        'toLocal=2026-03-09 09:32 America/New_York bars=4\n',
    );
  });

  it('gives where a short history was asked to start when no range is known', () => {
    const fields = gapWarningFields({
      type: 'gap',
      code: '700.HK',
      klineType: 1,
      fromMs: utc('2026-03-03T01:30'),
      toMs: undefined,
      missing: undefined,
      reason: 'the service returned no older bars',
    });
    expect(fields).toEqual({
      code: '700.HK',
      klineType: 1,
      from: '2026-03-03T01:30:00.000Z',
      to: undefined,
      fromLocal: '2026-03-03 09:30 Asia/Hong_Kong',
      toLocal: undefined,
      bars: undefined,
    });
  });
});
