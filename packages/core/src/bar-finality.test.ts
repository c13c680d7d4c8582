import { describe, expect, it } from 'vitest';
import {
  barFinalAfterMs,
  barsMissingBetween,
  dateCalendarMisses,
  finalReadFromMs,
  isBarClosedAt,
  tradingDateOf,
} from './bar-finality.js';
import { barPeriodAt } from './calendar/bar-period-at.js';
import { calendarOf } from './markets.js';

const t = (s: string) => Date.parse(s);
const iso = (ms: number) => new Date(ms).toISOString();
const US = calendarOf('AAPL.US');
const HK = calendarOf('700.HK');
const CN = calendarOf('600416.SH');
const FX = calendarOf('EURGBP');

describe('bars by the exchange calendar', () => {
  it('closes a half day daily bar at the early close, whatever the label (2025-11-28, 13:00 New York)', () => {
    for (const label of ['2025-11-28T00:00:00Z', '2025-11-28T05:00:00Z', '2025-11-28T14:30:00Z']) {
      expect(iso(barFinalAfterMs(t(label), 8, US)), label).toBe('2025-11-28T18:00:00.000Z');
      expect(tradingDateOf(t(label), US), label).toBe('2025-11-28');
    }
    expect(iso(barPeriodAt(t('2025-11-28T17:45:00Z'), 5, US)!.endMs)).toBe('2025-11-28T18:00:00.000Z');
    expect(barPeriodAt(t('2025-11-28T18:30:00Z'), 1, US)).toBeUndefined();
  });

  it('names the date a label names on a holiday (Christmas 2025), not the next trading day', () => {
    // Midnight UTC of the 25th labels the 25th under every labelling that could name it (the 26th's
    // labels are 00:00 UTC, 05:00 UTC, its open or its session): a bar there says the exchange
    // traded on the 25th, the calendar notwithstanding (yesterday-close dated it so already).
    expect(tradingDateOf(t('2025-12-25T00:00:00Z'), US)).toBe('2025-12-25');
    expect(dateCalendarMisses(t('2025-12-25T00:00:00Z'), 8, US)).toBe('2025-12-25');
    expect(barPeriodAt(t('2025-12-25T15:00:00Z'), 1, US)).toBeUndefined();
  });

  it('ends the weekly US bar of the weeks around the DST start (2026-03-08) at the Friday close', () => {
    for (const label of ['2026-03-02T05:00:00Z', '2026-03-02T00:00:00Z', '2026-03-02T14:30:00Z'])
      expect(iso(barFinalAfterMs(t(label), 9, US)), label).toBe('2026-03-06T21:00:00.000Z');
    expect(iso(barPeriodAt(t('2026-03-04T15:00:00Z'), 9, US)!.endMs)).toBe('2026-03-06T21:00:00.000Z');
    for (const label of ['2026-03-09T04:00:00Z', '2026-03-09T00:00:00Z', '2026-03-09T13:30:00Z'])
      expect(iso(barFinalAfterMs(t(label), 9, US)), label).toBe('2026-03-13T20:00:00.000Z');
  });

  it('ends the weekly US bar of Thanksgiving week 2025 at the Friday early close', () => {
    expect(iso(barFinalAfterMs(t('2025-11-24T05:00:00Z'), 9, US))).toBe('2025-11-28T18:00:00.000Z');
  });

  it('ends the Hong Kong morning hourly bar at the lunch break and resumes at 13:00', () => {
    expect(barPeriodAt(t('2025-11-24T03:45:00Z'), 5, HK)).toEqual({
      startMs: t('2025-11-24T03:30:00Z'),
      endMs: t('2025-11-24T04:00:00Z'),
    });
    expect(barPeriodAt(t('2025-11-24T04:30:00Z'), 1, HK)).toBeUndefined();
    expect(barPeriodAt(t('2025-11-24T05:10:00Z'), 4, HK)?.startMs).toBe(t('2025-11-24T05:00:00Z'));
  });
});

describe('finalReadFromMs: the one rule of closed by the calendar', () => {
  it('is the session close plus the grace for stocks, the label plus a period around the clock', () => {
    // A US daily bar, whatever its label: 16:00 New York (20:00 UTC in March) plus 15 s.
    expect(iso(finalReadFromMs(t('2026-03-13T00:00:00Z'), 8, US, 15_000))).toBe('2026-03-13T20:00:15.000Z');
    // An intraday stock bar waits for the day's last close (its own end depends on the labelling).
    expect(iso(finalReadFromMs(t('2026-03-13T14:30:00Z'), 1, US, 0))).toBe('2026-03-13T20:00:00.000Z');
    // Crypto: one period after the label, then the grace.
    const btc = calendarOf('BTCUSDT');
    expect(iso(finalReadFromMs(t('2026-03-13T10:00:00Z'), 1, btc, 5_000))).toBe('2026-03-13T10:01:05.000Z');
    expect(finalReadFromMs(t('2026-03-13T10:00:00Z'), 1, btc, 0)).toBe(
      barFinalAfterMs(t('2026-03-13T10:00:00Z'), 1, btc),
    );
  });
});

describe('isBarClosedAt: the one question read planning asks', () => {
  it('holds from finalReadFromMs on, for a read at or after it, and not a millisecond before', () => {
    const label = t('2026-03-13T00:00:00Z'); // a US daily bar, closed at 16:00 New York (20:00 UTC)
    expect(isBarClosedAt(label, 8, US, t('2026-03-13T20:00:14.999Z'), 15_000)).toBe(false);
    expect(isBarClosedAt(label, 8, US, t('2026-03-13T20:00:15Z'), 15_000)).toBe(true);
    // A Hong Kong daily bar labelled 15:40 on a Friday closes that Friday, not after the weekend.
    expect(isBarClosedAt(t('2023-03-03T07:40:00Z'), 8, HK, t('2023-03-03T08:00:05Z'), 5_000)).toBe(true);
    const btc = calendarOf('BTCUSDT');
    expect(isBarClosedAt(t('2026-03-13T10:00:00Z'), 1, btc, t('2026-03-13T10:01:00Z'), 0)).toBe(true);
    expect(isBarClosedAt(t('2026-03-13T10:00:00Z'), 1, btc, t('2026-03-13T10:00:59.999Z'), 0)).toBe(false);
  });
});

describe('barsMissingBetween: only real gaps', () => {
  const MIN = 60_000;
  it('does not count weekends, holidays or half days for US daily and minute bars', () => {
    expect(barsMissingBetween(t('2025-12-24T05:00:00Z'), t('2025-12-26T05:00:00Z'), 8, US)).toBe(false);
    expect(barsMissingBetween(t('2025-12-23T05:00:00Z'), t('2025-12-26T05:00:00Z'), 8, US)).toBe(true);
    // Last minute of the half day, then the Monday open.
    expect(barsMissingBetween(t('2025-11-28T17:59:00Z'), t('2025-12-01T14:30:00Z'), 1, US)).toBe(false);
    expect(barsMissingBetween(t('2025-11-28T17:57:00Z'), t('2025-12-01T14:30:00Z'), 1, US)).toBe(true);
  });

  it('does not count lunch breaks', () => {
    expect(barsMissingBetween(t('2025-11-24T03:59:00Z'), t('2025-11-24T05:00:00Z'), 1, HK)).toBe(false);
    expect(barsMissingBetween(t('2025-11-24T03:29:00Z'), t('2025-11-24T05:00:00Z'), 1, CN)).toBe(false);
    expect(barsMissingBetween(t('2025-11-24T03:29:00Z'), t('2025-11-24T05:00:00Z') + MIN, 1, CN)).toBe(true);
  });

  it('does not count Lunar New Year or a week without sessions for A-share weekly bars', () => {
    expect(barsMissingBetween(t('2025-01-27T00:00:00Z'), t('2025-02-05T00:00:00Z'), 8, CN)).toBe(false);
    // 2026-02-16..20 is closed: the week of the 9th is followed by the week of the 23rd.
    expect(barsMissingBetween(t('2026-02-08T16:00:00Z'), t('2026-02-22T16:00:00Z'), 9, CN)).toBe(false);
    expect(barsMissingBetween(t('2026-01-25T16:00:00Z'), t('2026-02-08T16:00:00Z'), 9, CN)).toBe(true);
  });

  it('does not count the forex weekend for daily or minute bars (EURGBP)', () => {
    expect(barsMissingBetween(t('2025-11-21T00:00:00Z'), t('2025-11-24T00:00:00Z'), 8, FX)).toBe(false);
    expect(barsMissingBetween(t('2025-11-20T00:00:00Z'), t('2025-11-24T00:00:00Z'), 8, FX)).toBe(true);
    // Provider weeks: New York close to Sunday evening, or to Monday 00:00 UTC.
    expect(barsMissingBetween(t('2025-11-21T21:59:00Z'), t('2025-11-23T22:00:00Z'), 1, FX)).toBe(false);
    expect(barsMissingBetween(t('2025-11-21T23:59:00Z'), t('2025-11-24T00:00:00Z'), 1, FX)).toBe(false);
    expect(barsMissingBetween(t('2025-11-21T20:00:00Z'), t('2025-11-24T00:00:00Z'), 1, FX)).toBe(true);
    expect(barsMissingBetween(t('2025-11-24T00:00:00Z'), t('2025-11-24T00:02:00Z'), 1, FX)).toBe(true);
  });

  it('keeps crypto around the clock', () => {
    const BTC = calendarOf('BTCUSDT');
    expect(barsMissingBetween(t('2025-11-21T00:00:00Z'), t('2025-11-23T00:00:00Z'), 8, BTC)).toBe(true);
  });
});

describe('the service trades where the calendar says it does not (issue 28 item 3)', () => {
  const aapl = calendarOf('AAPL.US');
  it('dateCalendarMisses names the date of a bar on a calendar holiday, under every labelling', () => {
    // Thanksgiving 2026 (NYSE closed): a daily bar labelled midnight UTC, New York midnight or the open.
    for (const label of ['2026-11-26T00:00:00Z', '2026-11-26T05:00:00Z', '2026-11-26T14:30:00Z'])
      expect(dateCalendarMisses(Date.parse(label), 8, aapl)).toBe('2026-11-26');
    expect(dateCalendarMisses(Date.parse('2026-11-25T00:00:00Z'), 8, aapl)).toBeUndefined();
    expect(dateCalendarMisses(Date.parse('2026-11-25T15:00:00Z'), 1, aapl)).toBeUndefined();
    // A minute bar after the calendar's close of that day.
    expect(dateCalendarMisses(Date.parse('2026-11-25T21:30:00Z'), 1, aapl)).toBe('2026-11-25');
    expect(dateCalendarMisses(Date.parse('2026-11-26T15:00:00Z'), 1, calendarOf('BTCUSDT'))).toBeUndefined();
  });

  it('a bar on a day the calendar calls a holiday is final by the end of that local day, not the next session', () => {
    // Good Friday 2026-04-03: the calendar has no session, the service served minute bars.
    const friday = Date.parse('2026-04-03T15:00:00Z');
    expect(barFinalAfterMs(friday, 1, aapl)).toBe(Date.parse('2026-04-04T04:00:00Z')); // New York midnight
    // Read on the Saturday: final (it was held until Monday's close, 2026-04-06T20:00Z).
    expect(finalReadFromMs(friday, 1, aapl, 15_000)).toBeLessThan(Date.parse('2026-04-04T12:00:00Z'));
    // Days the calendar agrees with keep their session's close.
    const thursday = Date.parse('2026-04-02T15:00:00Z');
    expect(barFinalAfterMs(thursday, 1, aapl)).toBe(Date.parse('2026-04-02T20:00:00Z'));
  });
});
