import { describe, expect, it } from 'vitest';
import { gapEvent } from './gap-event.js';

const utc = (iso: string): number => Date.parse(`${iso}Z`);

describe('gapEvent', () => {
  it('carries the first and last bar the calendar expects between the bars around the hole', () => {
    // 700.HK held 11:58 and 13:02 Hong Kong time: 11:59, 13:00 and 13:01 are missing (lunch between).
    const marker = {
      type: 'gap',
      code: '700.HK',
      klineType: 1,
      fromMs: utc('2026-03-03T03:58'),
      toMs: utc('2026-03-03T05:02'),
      reason: 'missing-bars',
    } as const;
    expect(gapEvent('700.HK', 1, marker)).toEqual({
      ...marker,
      missing: { firstMs: utc('2026-03-03T03:59'), lastMs: utc('2026-03-03T05:01'), bars: 3 },
    });
  });

  it('carries no range when an end is unknown or nothing is expected between', () => {
    const base = { type: 'gap', code: 'AAPL.US', klineType: 1, reason: 'r' } as const;
    const open = { ...base, fromMs: undefined, toMs: utc('2026-03-09T13:30') };
    expect(gapEvent('AAPL.US', 1, open)).toEqual({ ...open, missing: undefined });
    // Friday's last minute and Monday's first: the weekend is no gap.
    const none = { ...base, fromMs: utc('2026-03-06T20:59'), toMs: utc('2026-03-09T13:30') };
    expect(gapEvent('AAPL.US', 1, none)).toEqual({ ...none, missing: undefined });
  });
});
