import { describe, expect, it } from 'vitest';
import { snakeCaseJson } from './snake-case-json.js';

describe('snakeCaseJson', () => {
  it('turns camelCase keys into snake_case at any depth, arrays included', () => {
    expect(
      snakeCaseJson({
        smallestPlan: 'basic',
        estimate: { live: { refreshPeriodMs: 3 } },
        plans: [{ epsTtm: '1' }],
      }),
    ).toEqual({
      smallest_plan: 'basic',
      estimate: { live: { refresh_period_ms: 3 } },
      plans: [{ eps_ttm: '1' }],
    });
  });

  it('gives an absent value as null, so every record has the same keys', () => {
    expect(snakeCaseJson({ nameEn: undefined, lotSize: '100' })).toEqual({ name_en: null, lot_size: '100' });
  });

  it('leaves keys that are data (codes, rule names) and values (bigints, strings) as they are', () => {
    expect(snakeCaseJson({ 'AAPL.US': 1, 'per-minute': 2, seq: 5n, tag: 'camelCase' })).toEqual({
      'AAPL.US': 1,
      'per-minute': 2,
      seq: 5n,
      tag: 'camelCase',
    });
  });
});
