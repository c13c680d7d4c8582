import { EXCHANGE_IDS, type ExchangeId, type HolidayPublishing } from './exchange-calendar-data.js';
import { exchangeCalendarData } from './trading-calendar.js';

/** The dates an exchange's generated holiday data covers, and where it came from. */
export interface CalendarDataCoverage {
  readonly exchange: ExchangeId;
  readonly firstDate: string;
  readonly lastDate: string;
  readonly publishing: HolidayPublishing;
  readonly source: string;
}

/** Coverage of every exchange's holiday and early-close data, `YYYY-MM-DD` local dates. */
export function calendarDataCoverage(): readonly CalendarDataCoverage[] {
  return EXCHANGE_IDS.map((exchange) => {
    const d = exchangeCalendarData(exchange);
    return {
      exchange,
      firstDate: d.firstDate,
      lastDate: d.lastDate,
      publishing: d.publishing,
      source: d.source,
    };
  });
}

const warned = new Set<ExchangeId>();

/**
 * Warns once per exchange and process (a Node process warning, code `QF_CALENDAR_DATA_ENDED`, which
 * Node prints to stderr) that `date` lies past the exchange's holiday data: from there on every
 * weekday counts as a full regular session, so holidays look like missing bars and half days
 * close late until quoteflow is updated with newer data.
 */
export function warnPastCalendarData(exchange: ExchangeId, date: string): void {
  if (warned.has(exchange)) return;
  warned.add(exchange);
  const { lastDate, publishing } = exchangeCalendarData(exchange);
  const why = publishing === 'yearly' ? ' (its holidays are published one year at a time)' : '';
  globalThis.process?.emitWarning(
    `quoteflow calendar: ${exchange} holiday data ends ${lastDate}${why}; ${date} and later weekdays ` +
      'are assumed to be full regular sessions (holidays will look like missing bars, half days ' +
      'close late). Update quoteflow for newer calendar data (scripts/calendars/generate.py).',
    { code: 'QF_CALENDAR_DATA_ENDED' },
  );
}
