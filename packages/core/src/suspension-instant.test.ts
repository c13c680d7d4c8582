import { describe, expect, it } from 'vitest';
import { suspensionInstant } from './suspension-instant.js';

const NY = 'America/New_York';
const SH = 'Asia/Shanghai';

describe('suspensionInstant', () => {
  it('reads the date-time field in the exchange zone first', () => {
    expect(suspensionInstant('2026-03-02 09:30:00', '2026-01-01', '00:00:00', NY)).toBe(
      Date.UTC(2026, 2, 2, 14, 30),
    );
  });

  it('joins the date and time fields, and honours daylight saving time', () => {
    expect(suspensionInstant(undefined, '2026-07-01', '09:30:00', NY)).toBe(Date.UTC(2026, 6, 1, 13, 30));
    expect(suspensionInstant(undefined, '2026-07-01', '09:30:00', SH)).toBe(Date.UTC(2026, 6, 1, 1, 30));
  });

  it('takes a full date-time found in the time field', () => {
    expect(suspensionInstant(undefined, undefined, '2026-07-01 15:00:00', SH)).toBe(Date.UTC(2026, 6, 1, 7));
  });

  it('falls back to the date alone, and gives undefined when nothing parses', () => {
    expect(suspensionInstant(undefined, '2026-07-01', undefined, SH)).toBe(Date.UTC(2026, 5, 30, 16));
    expect(suspensionInstant('not a time', undefined, 'later', SH)).toBeUndefined();
    expect(suspensionInstant(undefined, undefined, undefined, SH)).toBeUndefined();
  });
});
