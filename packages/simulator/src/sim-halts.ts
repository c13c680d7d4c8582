import { formatWallClock } from './internal/zoned-time.js';
import {
  SIM_EXCHANGE_TIME_ZONES,
  type PublishedRecord,
  type SimExchange,
  type SimSuspensionRecord,
} from './suspension-records.js';

/**
 * A halt the simulator is told to serve: the product has no bars starting in `[fromMs, toMs)`, and
 * the suspension records of its exchange carry it (published at `fromMs`).
 */
export interface SimHalt {
  /** A Shanghai (`600000.SH`) or US (`AAPL.US`) stock code. */
  readonly code: string;
  /** When trading stopped, epoch ms. */
  readonly fromMs: number;
  /** When it resumed, epoch ms. */
  readonly toMs: number;
  /** The suspension endpoint that reports it. @defaultValue `sse` for `.SH`, `nyse` for `.US` */
  readonly exchange?: SimExchange;
}

/** The exchange whose suspension records carry `halt`, or `undefined` for a code none covers. */
export function exchangeOfSimHalt(halt: SimHalt): SimExchange | undefined {
  if (halt.exchange !== undefined) return halt.exchange;
  if (halt.code.endsWith('.SH')) return 'sse';
  if (halt.code.endsWith('.US')) return 'nyse';
  return undefined;
}

/** Whether a bar of `code` starting at `startMs` falls in one of `halts` (and so is not served). */
export function isHaltedBar(halts: readonly SimHalt[], code: string, startMs: number): boolean {
  return halts.some((h) => h.code === code && startMs >= h.fromMs && startMs < h.toMs);
}

/**
 * The records of `halts` that `exchange` has published by market time `nowMs`, in the shape of
 * that exchange's generated records; the resumption fields stay empty until `toMs` has passed.
 */
export function simHaltRecords(
  halts: readonly SimHalt[],
  exchange: SimExchange,
  nowMs: number,
): PublishedRecord[] {
  const tz = SIM_EXCHANGE_TIME_ZONES[exchange];
  return halts
    .filter((h) => exchangeOfSimHalt(h) === exchange && h.fromMs <= nowMs)
    .map((h) => {
      const [date, time] = formatWallClock(h.fromMs, tz).split(' ') as [string, string];
      const resumed = h.toMs <= nowMs;
      const [rDate, rTime] = formatWallClock(h.toMs, tz).split(' ') as [string, string];
      const symbol = h.code.slice(0, h.code.lastIndexOf('.'));
      const record: SimSuspensionRecord =
        exchange === 'sse'
          ? {
              symbol,
              symbolName: null,
              haltReason: '临时停牌',
              haltDate: date,
              haltTime: time,
              haltPeriod: null,
              resumeDate: resumed ? rDate : null,
              resumeTime: resumed ? rTime : null,
              publishDate: `${date} ${time}`,
            }
          : {
              symbol,
              symbolName: null,
              haltReason: 'T1',
              haltDate: date,
              haltTime: time,
              haltDateTime: `${date} ${time}`,
              resumeDate: resumed ? rDate : null,
              resumeTime: resumed ? rTime : null,
              resumeDateTime: resumed ? `${rDate} ${rTime}` : null,
              sourceExchange: exchange === 'nyse' ? 'N' : 'Q',
              publishDate: `${date} ${time}`,
            };
      return { publishMs: h.fromMs, record };
    });
}
