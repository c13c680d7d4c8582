import { SIM_CALENDARS, type SimCalendar } from './calendars.js';
import { hash32, hashString, unit } from './internal/hash.js';

/** Product classes of the simulated catalogue. */
export const SIM_PRODUCT_CLASSES = [
  'us-stock',
  'hk-stock',
  'cn-stock',
  'index',
  'forex',
  'metal',
  'energy',
  'crypto',
  'cfd',
  'commodity',
] as const;
export type SimProductClass = (typeof SIM_PRODUCT_CLASSES)[number];

/** Stock market suffixes; a code with one of them is served by the stock family. */
export type SimStockMarket = 'US' | 'HK' | 'SH' | 'SZ';

/** One product of the simulated catalogue. */
export interface SimProduct {
  /** Case-sensitive product code as the service lists it (`AAPL.US`, `Silver`). */
  readonly code: string;
  readonly productClass: SimProductClass;
  /** Endpoint family: `stock` (`/quote-stock-b-api`) or `general` (`/quote-b-api`). */
  readonly family: 'stock' | 'general';
  /** Market suffix of stock-family codes, `undefined` for general-family products. */
  readonly market: SimStockMarket | undefined;
  readonly calendar: SimCalendar;
  /** Price level around which the random walk moves. */
  readonly basePrice: number;
  /** Decimals of price strings. */
  readonly priceDecimals: number;
  /** Daily volatility of the log price (0.02 = 2 %). */
  readonly dailyVol: number;
  /** Typical volume per trading minute; 0 = the product reports no volume (CFD indices). */
  readonly minuteVolume: number;
  /** Decimals of volume strings (0 for share counts). */
  readonly volumeDecimals: number;
  /** Maximum depth levels per side (spec, depth table). */
  readonly depthLevels: number;
  /** Market ms between order-book changes (larger = less active). */
  readonly bookIntervalMs: number;
  /** Static info fields (stocks and indexes only); absent keys are absent in `/static_info`. */
  readonly staticInfo: Readonly<Record<string, string>> | undefined;
}

interface ClassDefaults {
  decimals: number;
  vol: number;
  minuteVolume: number;
  volumeDecimals: number;
  levels: number;
  bookIntervalMs: number;
  calendar: SimCalendar;
}

const CLASS: Readonly<Record<SimProductClass, ClassDefaults>> = {
  'us-stock': {
    decimals: 2,
    vol: 0.018,
    minuteVolume: 20_000,
    volumeDecimals: 0,
    levels: 1,
    bookIntervalMs: 2_000,
    calendar: SIM_CALENDARS.us,
  },
  'hk-stock': {
    decimals: 2,
    vol: 0.02,
    minuteVolume: 40_000,
    volumeDecimals: 0,
    levels: 10,
    bookIntervalMs: 3_000,
    calendar: SIM_CALENDARS.hk,
  },
  'cn-stock': {
    decimals: 2,
    vol: 0.02,
    minuteVolume: 30_000,
    volumeDecimals: 0,
    levels: 5,
    bookIntervalMs: 3_000,
    calendar: SIM_CALENDARS.cn,
  },
  index: {
    decimals: 2,
    vol: 0.012,
    minuteVolume: 1_000_000,
    volumeDecimals: 0,
    levels: 1,
    bookIntervalMs: 5_000,
    calendar: SIM_CALENDARS.us,
  },
  forex: {
    decimals: 5,
    vol: 0.005,
    minuteVolume: 50,
    volumeDecimals: 2,
    levels: 1,
    bookIntervalMs: 1_000,
    calendar: SIM_CALENDARS.weekdays,
  },
  metal: {
    decimals: 2,
    vol: 0.01,
    minuteVolume: 30,
    volumeDecimals: 2,
    levels: 1,
    bookIntervalMs: 1_500,
    calendar: SIM_CALENDARS.weekdays,
  },
  energy: {
    decimals: 3,
    vol: 0.02,
    minuteVolume: 40,
    volumeDecimals: 2,
    levels: 1,
    bookIntervalMs: 1_500,
    calendar: SIM_CALENDARS.weekdays,
  },
  crypto: {
    decimals: 2,
    vol: 0.03,
    minuteVolume: 12,
    volumeDecimals: 5,
    levels: 5,
    bookIntervalMs: 1_000,
    calendar: SIM_CALENDARS.crypto,
  },
  cfd: {
    decimals: 1,
    vol: 0.012,
    minuteVolume: 0,
    volumeDecimals: 0,
    levels: 1,
    bookIntervalMs: 1_500,
    calendar: SIM_CALENDARS.weekdays,
  },
  commodity: {
    decimals: 2,
    vol: 0.015,
    minuteVolume: 20,
    volumeDecimals: 2,
    levels: 1,
    bookIntervalMs: 3_000,
    calendar: SIM_CALENDARS.weekdays,
  },
};

type Entry = [code: string, price: number, nameEn: string, nameCn?: string, decimals?: number];

// Realistic codes; every example code of provider-facts.md is here (note `Silver`'s case).
const US: Entry[] = [
  ['AAPL.US', 189.5, 'Apple Inc.', '苹果'],
  ['GOOGL.US', 141.2, 'Alphabet Inc. Class A', '谷歌-A'],
  ['UNH.US', 521.3, 'UnitedHealth Group Inc.', '联合健康'],
  ['MSFT.US', 378.9, 'Microsoft Corp.', '微软'],
  ['AMZN.US', 146.1, 'Amazon.com Inc.', '亚马逊'],
  ['TSLA.US', 235.6, 'Tesla Inc.', '特斯拉'],
  ['NVDA.US', 480.2, 'NVIDIA Corp.', '英伟达'],
  ['META.US', 334.7, 'Meta Platforms Inc.', 'Meta'],
  ['JPM.US', 156.4, 'JPMorgan Chase & Co.', '摩根大通'],
  ['KO.US', 58.3, 'Coca-Cola Co.', '可口可乐'],
];
const HK: Entry[] = [
  ['700.HK', 318.2, 'Tencent Holdings Ltd.', '腾讯控股', 1],
  ['857.HK', 5.12, 'PetroChina Co. Ltd.', '中国石油股份', 2],
  ['5.HK', 62.85, 'HSBC Holdings plc', '汇丰控股', 2],
  ['9988.HK', 72.4, 'Alibaba Group Holding Ltd.', '阿里巴巴-W', 2],
  ['3690.HK', 88.6, 'Meituan', '美团-W', 2],
  ['1299.HK', 68.9, 'AIA Group Ltd.', '友邦保险', 2],
  ['941.HK', 66.1, 'China Mobile Ltd.', '中国移动', 2],
  ['1810.HK', 15.3, 'Xiaomi Corp.', '小米集团-W', 2],
];
const CN: Entry[] = [
  ['600416.SH', 7.85, 'Xiangtan Electric Manufacturing', '湘电股份'],
  ['600519.SH', 1712.0, 'Kweichow Moutai', '贵州茅台'],
  ['601318.SH', 43.2, 'Ping An Insurance', '中国平安'],
  ['600036.SH', 31.5, 'China Merchants Bank', '招商银行'],
  ['000627.SZ', 3.12, 'Tianmao Group', '天茂集团'],
  ['000001.SZ', 10.45, 'Ping An Bank', '平安银行'],
  ['000858.SZ', 142.3, 'Wuliangye Yibin', '五粮液'],
  ['300750.SZ', 168.9, 'Contemporary Amperex Technology', '宁德时代'],
];
const INDEXES: [code: string, price: number, nameEn: string, nameCn: string, cal: SimCalendar][] = [
  ['DJI.US', 35_200, 'Dow Jones Industrial Average', '道琼斯指数', SIM_CALENDARS.us],
  ['IXIC.US', 14_100, 'NASDAQ Composite', '纳斯达克综合指数', SIM_CALENDARS.us],
  ['SPX.US', 4_550, 'S&P 500', '标普500', SIM_CALENDARS.us],
  ['HSI.HK', 17_400, 'Hang Seng Index', '恒生指数', SIM_CALENDARS.hk],
  ['HSTECH.HK', 3_850, 'Hang Seng TECH Index', '恒生科技指数', SIM_CALENDARS.hk],
  ['000001.SH', 3_050, 'SSE Composite Index', '上证指数', SIM_CALENDARS.cn],
  ['000300.SH', 3_580, 'CSI 300 Index', '沪深300', SIM_CALENDARS.cn],
  ['399001.SZ', 9_900, 'SZSE Component Index', '深证成指', SIM_CALENDARS.cn],
];
const GENERAL: [code: string, cls: SimProductClass, price: number, decimals?: number][] = [
  ['BTCUSDT', 'crypto', 37_500, 2],
  ['ETHUSDT', 'crypto', 2_050, 2],
  ['SOLUSDT', 'crypto', 58.4, 3],
  ['BNBUSDT', 'crypto', 232.1, 2],
  ['XRPUSDT', 'crypto', 0.6123, 4],
  ['DOGEUSDT', 'crypto', 0.07812, 5],
  ['ADAUSDT', 'crypto', 0.3821, 4],
  ['LTCUSDT', 'crypto', 70.25, 2],
  ['AUDUSD', 'forex', 0.6551],
  ['EURGBP', 'forex', 0.8702],
  ['EURUSD', 'forex', 1.0885],
  ['GBPUSD', 'forex', 1.2512],
  ['USDJPY', 'forex', 149.62, 3],
  ['USDCHF', 'forex', 0.8841],
  ['USDCAD', 'forex', 1.3705],
  ['NZDUSD', 'forex', 0.6021],
  ['USDCNH', 'forex', 7.1532, 4],
  ['EURJPY', 'forex', 162.85, 3],
  ['GOLD', 'metal', 1_990.5, 2],
  ['Silver', 'metal', 23.45, 3],
  ['XAUUSD', 'metal', 1_990.6, 2],
  ['XAGUSD', 'metal', 23.46, 3],
  ['USOIL', 'energy', 76.12, 2],
  ['UKOIL', 'energy', 81.03, 2],
  ['NGAS', 'energy', 2.851, 3],
  ['US30', 'cfd', 35_210, 1],
  ['NAS100', 'cfd', 15_950, 1],
  ['US500', 'cfd', 4_552, 1],
  ['GER40', 'cfd', 16_010, 1],
  ['UK100', 'cfd', 7_480, 1],
  ['JP225', 'cfd', 33_450, 0],
  ['HK50', 'cfd', 17_420, 0],
  ['CORN', 'commodity', 482.25, 2],
  ['WHEAT', 'commodity', 561.5, 2],
  ['SUGAR', 'commodity', 26.12, 2],
];

const CURRENCY: Readonly<Record<SimStockMarket, string>> = { US: 'USD', HK: 'HKD', SH: 'CNY', SZ: 'CNY' };
const EXCHANGE: Readonly<Record<SimStockMarket, string>> = {
  US: 'NASDAQ',
  HK: 'SEHK',
  SH: 'SSE',
  SZ: 'SZSE',
};
const BOARD: Readonly<Record<SimStockMarket, string>> = {
  US: 'US Main',
  HK: 'Main Board',
  SH: 'SH Main Board',
  SZ: 'SZ Main Board',
};
const CALENDAR_OF: Readonly<Record<SimStockMarket, SimCalendar>> = {
  US: SIM_CALENDARS.us,
  HK: SIM_CALENDARS.hk,
  SH: SIM_CALENDARS.cn,
  SZ: SIM_CALENDARS.cn,
};

function marketOf(code: string): SimStockMarket | undefined {
  const suffix = code.slice(code.lastIndexOf('.') + 1);
  return suffix === 'US' || suffix === 'HK' || suffix === 'SH' || suffix === 'SZ' ? suffix : undefined;
}

function fmt(n: number, decimals: number): string {
  return n.toFixed(decimals);
}

/** Static info of a stock, with a deterministic subset of fields left out ("some fields absent"). */
function stockStaticInfo(
  code: string,
  market: SimStockMarket,
  price: number,
  nameEn: string,
  nameCn: string | undefined,
): Record<string, string> {
  const h = hashString(code);
  const r = (i: number) => unit(hash32(h, i));
  const totalShares = Math.round((1 + r(1) * 20) * 1e8) * (market === 'US' ? 10 : 1);
  const info: Record<string, string> = {
    symbol: code,
    name_en: nameEn,
    exchange: EXCHANGE[market],
    currency: CURRENCY[market],
    board: BOARD[market],
    lot_size:
      market === 'HK' ? String([100, 200, 500, 1000][Math.floor(r(2) * 4)]) : market === 'US' ? '1' : '100',
    total_shares: String(totalShares),
    circulating_shares: String(Math.round(totalShares * (0.6 + r(3) * 0.4))),
    eps: fmt(price / (8 + r(4) * 30), 4),
    eps_ttm: fmt(price / (8 + r(5) * 30), 4),
    bps: fmt(price / (1 + r(6) * 6), 4),
    dividend_yield: fmt(r(7) * 4, 2),
  };
  if (nameCn !== undefined) info['name_cn'] = nameCn;
  if (market === 'HK') {
    info['name_hk'] = nameCn ?? nameEn;
    info['hk_shares'] = String(Math.round(totalShares * (0.3 + r(8) * 0.7)));
  }
  // Fields the provider does not fill for every product.
  const optional = ['dividend_yield', 'eps_ttm', 'bps', 'board', 'name_cn', 'circulating_shares'];
  for (let i = 0; i < optional.length; i++) if (r(20 + i) < 0.25) delete info[optional[i]!];
  return info;
}

function stock(entry: Entry, productClass: SimProductClass): SimProduct {
  const [code, price, nameEn, nameCn, decimals] = entry;
  const market = marketOf(code)!;
  const d = CLASS[productClass];
  return {
    code,
    productClass,
    family: 'stock',
    market,
    calendar: CALENDAR_OF[market],
    basePrice: price,
    priceDecimals: decimals ?? (market === 'US' && price < 1 ? 4 : d.decimals),
    dailyVol: d.vol,
    minuteVolume: d.minuteVolume * (0.3 + unit(hashString(code)) * 2),
    volumeDecimals: d.volumeDecimals,
    depthLevels: d.levels,
    bookIntervalMs: d.bookIntervalMs,
    staticInfo: stockStaticInfo(code, market, price, nameEn, nameCn),
  };
}

function general(code: string, productClass: SimProductClass, price: number, decimals?: number): SimProduct {
  const d = CLASS[productClass];
  return {
    code,
    productClass,
    family: 'general',
    market: undefined,
    calendar: d.calendar,
    basePrice: price,
    priceDecimals: decimals ?? d.decimals,
    dailyVol: d.vol,
    minuteVolume: d.minuteVolume * (0.3 + unit(hashString(code)) * 2),
    volumeDecimals: d.volumeDecimals,
    depthLevels: d.levels,
    bookIntervalMs: d.bookIntervalMs,
    staticInfo: undefined,
  };
}

/**
 * The default catalogue: a few products of every class with realistic codes, including every
 * example code of provider-facts.md (`AAPL.US`, `GOOGL.US`, `UNH.US`, `700.HK`, `857.HK`,
 * `600416.SH`, `000627.SZ`, `BTCUSDT`, `ETHUSDT`, `AUDUSD`, `EURGBP`, `GOLD`, `Silver`, `USOIL`,
 * `UKOIL`), indexes (stock family) and CFD indices (`US30`, `NAS100`, …).
 */
export function defaultCatalogue(): SimProduct[] {
  const out: SimProduct[] = [];
  for (const e of US) out.push(stock(e, 'us-stock'));
  for (const e of HK) out.push(stock(e, 'hk-stock'));
  for (const e of CN) out.push(stock(e, 'cn-stock'));
  for (const [code, price, nameEn, nameCn, cal] of INDEXES) {
    const market = marketOf(code)!;
    out.push({
      ...stock([code, price, nameEn, nameCn], 'index'),
      calendar: cal,
      staticInfo: {
        symbol: code,
        name_en: nameEn,
        name_cn: nameCn,
        exchange: EXCHANGE[market],
        currency: CURRENCY[market],
      },
    });
  }
  for (const [code, cls, price, decimals] of GENERAL) out.push(general(code, cls, price, decimals));
  return out;
}

/** Options of {@link syntheticCatalogue}. */
export interface SyntheticCatalogueOptions {
  /** Number of products to generate. */
  readonly count: number;
  /** Classes to cycle through. @defaultValue `['us-stock', 'hk-stock', 'cn-stock', 'crypto']` */
  readonly classes?: readonly ('us-stock' | 'hk-stock' | 'cn-stock' | 'crypto')[];
}

/**
 * A large synthetic universe for benchmarks (for example 10,000 series): codes that follow each
 * class's shape (`SYN123.US`, `80123.HK`, `680123.SH`, `SYN123USDT`) and never collide with the
 * default catalogue.
 */
export function syntheticCatalogue(options: SyntheticCatalogueOptions): SimProduct[] {
  const { count } = options;
  if (!Number.isInteger(count) || count < 0 || count > 1_000_000) {
    throw new RangeError(`syntheticCatalogue: "count" must be an integer from 0 to 1000000, got ${count}`);
  }
  const classes = options.classes ?? ['us-stock', 'hk-stock', 'cn-stock', 'crypto'];
  const out: SimProduct[] = [];
  for (let i = 0; i < count; i++) {
    const cls = classes[i % classes.length]!;
    const price = 5 + unit(hash32(i, 77)) * 300;
    const n = i + 1;
    if (cls === 'us-stock') out.push(stock([`SYN${n}.US`, price, `Synthetic ${n}`], cls));
    else if (cls === 'hk-stock') out.push(stock([`${80000 + n}.HK`, price, `Synthetic ${n}`], cls));
    else if (cls === 'cn-stock')
      out.push(
        stock(
          [
            `${String(680000 + (n % 320000)).padStart(6, '0')}${n >= 320000 ? `${Math.floor(n / 320000)}` : ''}.SH`,
            price,
            `Synthetic ${n}`,
          ],
          cls,
        ),
      );
    else out.push(general(`SYN${n}USDT`, 'crypto', price, 4));
  }
  return out;
}
