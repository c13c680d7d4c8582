import { describe, expect, it } from 'vitest';
import {
  resolveSimLabelling,
  SIM_DAILY_LABELLINGS,
  SIM_DEFAULT_LABELLING,
  SIM_INTRADAY_LABELLINGS,
  SIM_LABELLINGS,
  SIM_PERIOD_LABELLINGS,
  type SimLabelling,
} from './sim-labelling.js';

describe('SIM_LABELLINGS', () => {
  it('uses every value of every axis at least once, the default first, with no repeats', () => {
    const used = (axis: keyof SimLabelling) => new Set(SIM_LABELLINGS.map((l) => l[axis]));
    expect(used('intraday')).toEqual(new Set(SIM_INTRADAY_LABELLINGS));
    expect(used('daily')).toEqual(new Set(SIM_DAILY_LABELLINGS));
    expect(used('weekly')).toEqual(new Set(SIM_PERIOD_LABELLINGS));
    expect(used('monthly')).toEqual(new Set(SIM_PERIOD_LABELLINGS));
    expect(SIM_LABELLINGS[0]).toEqual(SIM_DEFAULT_LABELLING);
    expect(new Set(SIM_LABELLINGS.map((l) => JSON.stringify(l))).size).toBe(SIM_LABELLINGS.length);
    expect(SIM_LABELLINGS.length).toBeLessThanOrEqual(6);
  });
});

describe('resolveSimLabelling', () => {
  it('fills missing axes with the default: session, local-midnight, calendar, calendar', () => {
    expect(resolveSimLabelling()).toEqual({
      intraday: 'session',
      daily: 'local-midnight',
      weekly: 'calendar',
      monthly: 'calendar',
    });
    expect(resolveSimLabelling({ daily: 'utc-midnight', monthly: 'first-trading-day' })).toEqual({
      intraday: 'session',
      daily: 'utc-midnight',
      weekly: 'calendar',
      monthly: 'first-trading-day',
    });
  });

  it('rejects an unknown axis or value, naming it and the allowed ones', () => {
    expect(() => resolveSimLabelling({ daily: 'noon' as 'utc-midnight' })).toThrow(
      '"labelling.daily" must be one of local-midnight, utc-midnight, session-open, in-session, got "noon"',
    );
    expect(() => resolveSimLabelling({ yearly: 'calendar' } as Partial<SimLabelling>)).toThrow(
      '"labelling" axes are intraday, daily, weekly, monthly, got "yearly"',
    );
  });
});
