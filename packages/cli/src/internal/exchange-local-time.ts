import { calendarOf } from '@quoteflow/core';

/** `ms` in the exchange-local time of `code`'s market: `2026-03-09 09:31 America/New_York`. */
export function exchangeLocalTime(ms: number, code: string): string {
  const timeZone = calendarOf(code).timeZone;
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    })
      .formatToParts(ms)
      .map((p) => [p.type, p.value]),
  );
  return `${parts['year']}-${parts['month']}-${parts['day']} ${parts['hour']}:${parts['minute']} ${timeZone}`;
}
