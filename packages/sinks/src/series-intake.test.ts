import { describe, expect, it } from 'vitest';
import { SeriesIntake } from './series-intake.js';

const bar = (tsMs: number) => ({ code: 'BTCUSDT', klineType: 1 as const, tsMs });
const MIN = 60_000;

describe('SeriesIntake', () => {
  it('takes a page older than what it took since the checkpoint (oldest first within it), each bar once', () => {
    const intake = new SeriesIntake(new Map());
    // The newest page, then an older one: a backfill delivered as its pages arrive.
    for (let i = 10; i < 20; i++) expect(intake.take(bar(i * MIN))).toBe(true);
    for (let i = 0; i < 10; i++) expect(intake.take(bar(i * MIN))).toBe(true);
    for (let i = 0; i < 20; i++) expect(intake.take(bar(i * MIN))).toBe(false);
    expect(intake.drain().get('BTCUSDT|1')).toEqual({ first: 0, last: 19 * MIN, rows: 20 });
    intake.commit();
    expect(intake.take(bar(5 * MIN))).toBe(false);
    expect(intake.take(bar(20 * MIN))).toBe(true);
  });

  it('takes a reopened start once though the commits cover it (a lost file refilled)', () => {
    const intake = new SeriesIntake(new Map([['BTCUSDT|1', { first: 0, last: 9 * MIN, rows: 10 }]]));
    expect(intake.take(bar(4 * MIN))).toBe(false);
    intake.reopen('BTCUSDT|1', [4 * MIN, 5 * MIN]);
    expect(intake.take(bar(4 * MIN))).toBe(true);
    expect(intake.take(bar(4 * MIN))).toBe(false);
    expect(intake.take(bar(6 * MIN))).toBe(false);
    expect(intake.take(bar(5 * MIN))).toBe(true);
  });
});
