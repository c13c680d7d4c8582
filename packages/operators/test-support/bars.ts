import type { Bar, KlineType } from '@quoteflow/core';
import type { SchedulerLike } from 'rxjs';
import type { TestScheduler } from 'rxjs/testing';

/** 2023-11-14T22:13:20Z: a minute-aligned instant for 24-hour test series. */
export const T0 = 1_700_000_000_000 - (1_700_000_000_000 % 3_600_000);
export const MIN = 60_000;

/** A valid bar; `close` also sets open/high/low unless given. */
export function bar(
  code: string,
  klineType: KlineType,
  tsMs: number,
  close: number,
  extra: Partial<Bar> = {},
): Bar {
  return {
    type: 'bar',
    code,
    klineType,
    tsMs,
    open: close,
    high: close,
    low: close,
    close,
    volume: 1,
    turnover: close,
    ...extra,
  };
}

/** A scheduler whose clock is the test scheduler's virtual clock plus `offsetMs`. */
export function offsetScheduler(ts: TestScheduler, offsetMs: number): SchedulerLike {
  const scheduler: SchedulerLike = {
    now: () => ts.now() + offsetMs,
    schedule: ts.schedule.bind(ts) as SchedulerLike['schedule'],
  };
  return scheduler;
}
