import { describe, expect, it } from 'vitest';
import { SIM_CALENDARS, simBarPeriodAt } from './calendars.js';
import { segmentsOfDay } from './sim-trading-days.js';

const H = 3_600_000;
const M = 60_000;
const dayOf = (date: string) => Date.parse(`${date}T00:00:00Z`) / 86_400_000;

describe('segmentsOfDay (the simulator holidays, from the holidays package)', () => {
  it('closes New York on Christmas Day 2025 and serves no daily bar that day', () => {
    expect(segmentsOfDay(SIM_CALENDARS.us, dayOf('2025-12-25'))).toEqual([]);
    expect(simBarPeriodAt(Date.parse('2025-12-25T16:00:00Z'), 8, SIM_CALENDARS.us)).toBeUndefined();
    expect(simBarPeriodAt(Date.parse('2025-12-25T16:00:00Z'), 1, SIM_CALENDARS.us)).toBeUndefined();
  });

  it('closes New York at 13:00 on the day after Thanksgiving 2025', () => {
    expect(segmentsOfDay(SIM_CALENDARS.us, dayOf('2025-11-28'))).toEqual([[9 * H + 30 * M, 13 * H]]);
  });

  it('keeps the Hong Kong morning session only on Lunar New Year eve and closes the three days after', () => {
    expect(segmentsOfDay(SIM_CALENDARS.hk, dayOf('2025-01-28'))).toEqual([[9 * H + 30 * M, 12 * H]]);
    expect(segmentsOfDay(SIM_CALENDARS.hk, dayOf('2025-01-29'))).toEqual([]);
  });

  it('keeps the lunch break on a regular day and trades no weekend', () => {
    expect(segmentsOfDay(SIM_CALENDARS.cn, dayOf('2025-11-24'))).toEqual([
      [9 * H + 30 * M, 11 * H + 30 * M],
      [13 * H, 15 * H],
    ]);
    expect(segmentsOfDay(SIM_CALENDARS.cn, dayOf('2025-11-22'))).toEqual([]);
  });

  it('assumes a regular session on weekdays past the generated years', () => {
    expect(segmentsOfDay(SIM_CALENDARS.cn, dayOf('2031-02-03'))).toHaveLength(2);
  });
});
