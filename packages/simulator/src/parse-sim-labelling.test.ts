import { describe, expect, it } from 'vitest';
import { parseSimLabelling } from './parse-sim-labelling.js';

describe('parseSimLabelling', () => {
  it('reads any subset of AXIS=VALUE pairs', () => {
    expect(
      parseSimLabelling('intraday=clock,daily=utc-midnight,weekly=first-trading-day,monthly=calendar'),
    ).toEqual({
      intraday: 'clock',
      daily: 'utc-midnight',
      weekly: 'first-trading-day',
      monthly: 'calendar',
    });
    expect(parseSimLabelling(' daily = session-open ')).toEqual({ daily: 'session-open' });
    expect(parseSimLabelling('')).toEqual({});
  });

  it('rejects an unknown axis or value, naming the flag and the allowed values', () => {
    expect(() => parseSimLabelling('hourly=clock')).toThrow(
      /^--labelling must be AXIS=VALUE pairs .* AXIS one of intraday, daily, weekly, monthly; got "hourly=clock"$/,
    );
    expect(() => parseSimLabelling('daily')).toThrow(/--labelling must be AXIS=VALUE/);
    expect(() => parseSimLabelling('intraday=hour')).toThrow(
      '--labelling intraday must be one of session, clock, got "hour"',
    );
    expect(() => parseSimLabelling('weekly=monday')).toThrow(
      '--labelling weekly must be one of calendar, first-trading-day, got "monday"',
    );
    expect(() => parseSimLabelling('daily=utc-midnight,daily=session-open')).toThrow(
      '--labelling names daily twice',
    );
  });
});
