import { describe, expect, it } from 'vitest';
import { CalendarDisagreements } from './calendar-disagreements.js';

describe('CalendarDisagreements', () => {
  it('says once per calendar and date that the service has bars the calendar does not expect', () => {
    const d = new CalendarDisagreements();
    const friday = Date.parse('2026-04-03T15:00:00Z'); // Good Friday: no NYSE session
    expect(d.note('AAPL.US', 1, friday)).toMatch(
      /AAPL\.US bars on 2026-04-03 where the .* calendar has no trading/,
    );
    expect(d.note('AAPL.US', 1, friday + 60_000)).toBeUndefined();
    expect(d.note('MSFT.US', 1, friday)).toBeUndefined(); // same exchange, same date
    expect(d.note('AAPL.US', 1, Date.parse('2026-04-02T15:00:00Z'))).toBeUndefined();
    expect(d.note('BTCUSDT', 1, friday)).toBeUndefined();
  });
});
