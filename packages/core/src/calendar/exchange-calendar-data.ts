/** The exchanges whose sessions quoteflow knows (ISO 10383 market identifier codes). */
export const EXCHANGE_IDS = ['XNYS', 'XNAS', 'XHKG', 'XSHG', 'XSHE'] as const;
export type ExchangeId = (typeof EXCHANGE_IDS)[number];

/**
 * How an exchange's holidays become known: `'rules'` (fixed rules or a lunar calendar, generated
 * years ahead) or `'yearly'` (China's State Council publishes next year's holidays each autumn, so
 * the data reaches the end of the last published year only).
 */
export type HolidayPublishing = 'rules' | 'yearly';

/** One exchange's generated calendar data (`exchange-calendar-data.generated.ts`). */
export interface ExchangeCalendarData {
  /** The package the data was generated from, with its version. */
  readonly source: string;
  readonly timeZone: string;
  /** First and last local dates (`YYYY-MM-DD`) the holidays and special sessions cover. */
  readonly firstDate: string;
  readonly lastDate: string;
  readonly publishing: HolidayPublishing;
  /** Regular local hours, `HH:MM`; the lunch break is `null` where there is none. */
  readonly regular: {
    readonly open: string;
    readonly breakStart: string | null;
    readonly breakEnd: string | null;
    readonly close: string;
  };
  /** Weekdays without a session. */
  readonly holidays: readonly string[];
  /** Sessions that close before the regular close: date → local close `HH:MM`. */
  readonly earlyCloses: Readonly<Record<string, string>>;
  /** Sessions that open after the regular open: date → local open `HH:MM`. */
  readonly lateOpens: Readonly<Record<string, string>>;
  readonly firstSession: string;
}
