import type { Bar, KlineType } from '@quoteflow/core';

/** 2023-11-14T22:00:00Z: an hour-aligned instant for 24-hour test series. */
export const T0 = 1_700_000_000_000 - (1_700_000_000_000 % 3_600_000);
export const MIN = 60_000;

/**
 * A valid bar; `close` also sets open/high/low unless given. Unless `extra` says otherwise it was
 * read 1 s after its start and received 1 ms later: a read of the forming bar that proves nothing.
 */
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
    readAtMs: tsMs + 1000,
    receivedAtMs: tsMs + 1001,
    ...extra,
  };
}

/** When an answer's request left and when the answer arrived. */
export interface AnswerStamps {
  readonly readAtMs: number;
  readonly receivedAtMs: number;
}

/**
 * The bars of one answer of the service: every bar stamped with the same `readAtMs` and
 * `receivedAtMs` (a number is `readAtMs`, received 1 ms later).
 */
export function answer(at: number | AnswerStamps, ...bars: readonly Bar[]): Bar[] {
  const stamps = typeof at === 'number' ? { readAtMs: at, receivedAtMs: at + 1 } : at;
  return bars.map((b) => ({ ...b, readAtMs: stamps.readAtMs, receivedAtMs: stamps.receivedAtMs }));
}
