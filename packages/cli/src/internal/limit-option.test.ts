import { WINDOW_RULE_IDS } from '@quoteflow/core/internal';
import { describe, expect, it } from 'vitest';
import { LIMIT_RULE_IDS } from './limit-option.js';
import { parseLimitOverrides } from './limit-overrides.js';

describe('--limit', () => {
  it("names core's rules (kept apart only so that --help does not load core)", () => {
    expect(LIMIT_RULE_IDS).toEqual(WINDOW_RULE_IDS);
  });

  it('parses rules with windows, sizes and comma-separated lists; the later item wins', () => {
    expect(
      parseLimitOverrides(
        ['per-minute=30,kline-rate=1/2s', 'batch-kline.groups=5', 'per-minute=20', 'per-day=500'],
        '--limit',
      ),
    ).toEqual({
      rules: { 'per-minute': { limit: 20 }, 'kline-rate': { limit: 1, windowMs: 2_000 } },
      batchKlineGroups: 5,
      perDay: 500,
    });
    expect(parseLimitOverrides(['suspension-interval=1/2m', 'combined=1/1500ms'], '--limit').rules).toEqual({
      'suspension-interval': { limit: 1, windowMs: 120_000 },
      combined: { limit: 1, windowMs: 1_500 },
    });
  });

  it.each([
    ['per-minute', /--limit per-minute: the value must be N or N\/WINDOW/],
    ['per-minute=ten', /the value must be N or N\/WINDOW/],
    ['kline-rate=1/2d', /the value must be N or N\/WINDOW/],
    ['batch-kline.groups=1.5', /the value must be a whole number/],
    ['hourly=3', /no limit is called "hourly"/],
  ])('refuses %s, naming it', (item, message) => {
    expect(() => parseLimitOverrides([item], '--limit')).toThrow(message);
  });
});
