import { hash32, hashString, unit } from './internal/hash.js';
import { DAY_MS, formatWallClock, fromLocalDay, toLocal, weekdayOfDay } from './internal/zoned-time.js';

/** The three exchanges of the suspension endpoints (`/api/suspension/{exchange}`). */
export const SIM_EXCHANGES = ['sse', 'nyse', 'nasdaq'] as const;
export type SimExchange = (typeof SIM_EXCHANGES)[number];

/** Exchange-local zone of each exchange's wall-clock strings (provider-facts.md). */
export const SIM_EXCHANGE_TIME_ZONES: Readonly<Record<SimExchange, string>> = {
  sse: 'Asia/Shanghai',
  nyse: 'America/New_York',
  nasdaq: 'America/New_York',
};

/** One suspension record as the wire carries it: strings, or `null` where the spec allows. */
export type SimSuspensionRecord = Record<string, string | null>;

const SSE_SYMBOLS = [
  '600416',
  '600519',
  '601318',
  '600036',
  '600000',
  '600104',
  '600309',
  '600585',
  '600900',
  '601012',
  '601888',
  '603259',
  '688981',
  '688111',
  '600745',
  '600733',
  '601099',
  '603986',
  '600276',
  '601166',
];
const SSE_NAMES = [
  '湘电股份',
  '贵州茅台',
  '中国平安',
  '招商银行',
  '浦发银行',
  '上汽集团',
  '万华化学',
  '海螺水泥',
  '长江电力',
  '隆基绿能',
  '中国中免',
  '药明康德',
  '中芯国际',
  '金山办公',
  '闻泰科技',
  '北汽蓝谷',
  '太平洋',
  '兆易创新',
  '恒瑞医药',
  '兴业银行',
];
const SSE_REASONS = [
  '重要事项未公告',
  '拟筹划重大资产重组',
  '股票交易异常波动',
  '停牌一天',
  '刊登重要公告',
  '临时停牌',
  '股东大会召开',
];
const SSE_PERIODS = ['全天', '上午', '下午', '09:30-10:30', '连续停牌'];
const US_SYMBOLS = [
  'AAPL',
  'GOOGL',
  'UNH',
  'TSLA',
  'NVDA',
  'AMC',
  'GME',
  'BBBY',
  'MULN',
  'FFIE',
  'NKLA',
  'SPCE',
  'RIVN',
  'LCID',
  'PLTR',
  'SOFI',
  'COIN',
  'HOOD',
  'AFRM',
  'UPST',
  'CVNA',
  'IONQ',
  'SNAP',
  'WISH',
  'BYND',
];
const US_REASONS = ['LUDP', 'T1', 'T2', 'T12', 'H10', 'H11', 'M', 'LUDS', 'MWC1', 'IPO1'];
const SOURCE: Readonly<Record<'nyse' | 'nasdaq', readonly string[]>> = {
  nyse: ['N', 'A', 'P'],
  nasdaq: ['Q', 'Z'],
};

/** A record with the instant it was published (the sort key of the list). */
export interface PublishedRecord {
  publishMs: number;
  record: SimSuspensionRecord;
}

/** `null` or `""`, deterministically: the spec's Nullable = Yes allows both. */
function nothing(h: number, i: number): string | null {
  return hash32(h, 0xe3, i) % 2 === 0 ? null : '';
}

/**
 * About a year of suspension records of `exchange` as of market time `nowMs`, deterministic per
 * `seed`, sorted by `publishDate` descending (latest first). Each exchange carries its own fields
 * (spec, Suspension record table); nullable fields are sometimes `null`, sometimes `""`; a halt
 * whose resumption lies after `nowMs` has empty resumption fields, which fill in once it resumes.
 * `extra` records (the `halts` option's) are sorted in among them.
 */
export function suspensionRecords(
  exchange: SimExchange,
  nowMs: number,
  seed: number,
  extra: readonly PublishedRecord[] = [],
): SimSuspensionRecord[] {
  const tz = SIM_EXCHANGE_TIME_ZONES[exchange];
  const today = toLocal(nowMs, tz).dayNumber;
  const oldest = nowMs - 365 * DAY_MS;
  const events: PublishedRecord[] = [...extra];
  const wc = (ms: number) => formatWallClock(ms, tz);
  for (let d = today; d >= today - 367; d--) {
    const wd = weekdayOfDay(d);
    if (wd === 0 || wd === 6) continue;
    const hd = hash32(seed, hashString(exchange), d);
    const count = exchange === 'sse' ? hd % 4 : hd % 3;
    for (let i = 0; i < count; i++) {
      const h = hash32(hd, i, 0x5a5);
      const r = (k: number) => unit(hash32(h, k));
      const haltMs =
        fromLocalDay(d, exchange === 'sse' ? 9.5 * 3_600_000 : (9.5 + r(1) * 6.4) * 3_600_000, tz) +
        Math.floor(r(2) * 60) * 1000;
      const durationMs =
        exchange === 'sse' ? (1 + Math.floor(r(3) * 5)) * DAY_MS : (5 + Math.floor(r(3) * 55)) * 60_000;
      const resumeMs = haltMs + durationMs;
      // The Shanghai exchange announces the evening before; US halts are published as they happen.
      const publishMs =
        exchange === 'sse'
          ? haltMs - 14 * 3_600_000 + Math.floor(r(4) * 3_600) * 1000
          : haltMs + Math.floor(r(4) * 30) * 1000;
      if (publishMs > nowMs || publishMs < oldest) continue;
      const resumed = resumeMs <= nowMs;
      const [date, time] = wc(haltMs).split(' ') as [string, string];
      const [rDate, rTime] = wc(resumeMs).split(' ') as [string, string];
      const or = (v: string, k: number): string | null => (resumed ? v : nothing(h, k));
      let record: SimSuspensionRecord;
      if (exchange === 'sse') {
        const idx = Math.floor(r(5) * SSE_SYMBOLS.length);
        record = {
          symbol: SSE_SYMBOLS[idx]!,
          symbolName: r(6) < 0.1 ? nothing(h, 1) : SSE_NAMES[idx]!,
          haltReason: r(7) < 0.1 ? nothing(h, 2) : SSE_REASONS[Math.floor(r(8) * SSE_REASONS.length)]!,
          haltDate: date,
          haltTime: time,
          haltPeriod: r(9) < 0.15 ? nothing(h, 3) : SSE_PERIODS[Math.floor(r(10) * SSE_PERIODS.length)]!,
          resumeDate: or(rDate, 4),
          resumeTime: or(rTime, 5),
          publishDate: wc(publishMs),
        };
      } else {
        const sym = US_SYMBOLS[Math.floor(r(5) * US_SYMBOLS.length)]!;
        const reason = US_REASONS[Math.floor(r(8) * US_REASONS.length)]!;
        const src = SOURCE[exchange];
        record = {
          symbol: sym,
          // The New York and electronic-exchange samples omit symbolName; here it is mostly empty.
          symbolName: r(6) < 0.7 ? nothing(h, 1) : `${sym} Inc.`,
          haltReason: r(7) < 0.05 ? nothing(h, 2) : reason,
          haltDate: date,
          haltTime: time,
          haltDateTime: `${date} ${time}`,
          resumeDate: or(rDate, 4),
          resumeTime: or(rTime, 5),
          resumeDateTime: or(`${rDate} ${rTime}`, 6),
          sourceExchange: r(11) < 0.1 ? nothing(h, 7) : src[Math.floor(r(12) * src.length)]!,
          ...(exchange === 'nasdaq'
            ? {
                pauseThresholdPrice:
                  reason.startsWith('LUD') && r(13) < 0.8 ? (2 + r(14) * 200).toFixed(2) : nothing(h, 8),
              }
            : {}),
          publishDate: wc(publishMs),
        };
      }
      events.push({ publishMs, record });
    }
  }
  events.sort((a, b) => b.publishMs - a.publishMs);
  return events.map((e) => e.record);
}
