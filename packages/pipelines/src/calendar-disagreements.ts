import { calendarOf, type KlineType, type TradingCalendar } from '@quoteflow/core';
import { dateCalendarMisses } from '@quoteflow/core/internal';

/**
 * Where the service's bars and the market calendar disagree (a bar on a day the calendar calls a
 * holiday, or after its close): each (calendar, date) said once. The bars win (core's
 * `dateCalendarMisses`: calendars go out of date); this only says so.
 *
 * @example
 * ```ts
 * const disagreements = new CalendarDisagreements();
 * for (const bar of bars) {
 *   const warning = disagreements.note(bar.code, bar.klineType, bar.tsMs);
 *   if (warning !== undefined) console.warn(warning);
 * }
 * ```
 */
export class CalendarDisagreements {
  readonly #said = new Set<string>();

  constructor(private readonly calendarFor: (code: string) => TradingCalendar = calendarOf) {}

  /** The warning for a bar the calendar does not expect, the first time its calendar and date come up. */
  note(code: string, klineType: KlineType, tsMs: number): string | undefined {
    const calendar = this.calendarFor(code);
    const date = dateCalendarMisses(tsMs, klineType, calendar);
    if (date === undefined) return undefined;
    const key = `${calendar.id}|${date}`;
    if (this.#said.has(key)) return undefined;
    this.#said.add(key);
    return `the service has ${code} bars on ${date} where the ${calendar.id} calendar has no trading (a holiday, or after its close): its bars are taken as they are (dates and finality by the data; the calendar may be out of date)`;
  }
}
