/**
 * Every dataset kind written by @quoteflow/sinks is read back by real readers (pyarrow, Polars,
 * DuckDB and Spark from PyPI, in `.venv`), with the schema and every value checked exactly,
 * including a depth `seq` above 2^63 (uint64) and bars in 1900 and 2200.
 */
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import type { Bar, DepthTick, Level, SuspensionRecord } from '../packages/core/src/index.js';
import { isDeepStrictEqual } from 'node:util';
import { DatasetWriter, type DatasetFormat, type WrittenFile } from '../packages/sinks/src/index.js';
import { createColumnBuilder } from '../packages/sinks/src/files/internal/column-builders.js';
import { encodeBatches } from '../packages/sinks/src/files/internal/encode-worker.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ensurePython,
  parquetMeta,
  readDataset,
  readDatasets,
  type ParquetMeta,
  type PythonReader,
  type ReadBack,
} from './support/python.js';

const READERS: PythonReader[] = ['pyarrow', 'polars', 'duckdb', 'spark'];

/** How each reader names the contract's types. */
const TYPE = {
  utf8: { pyarrow: 'string', polars: 'String', duckdb: 'VARCHAR', spark: 'string' },
  // Spark's `timestamp` is an instant (TIMESTAMP_LTZ), microseconds: it holds every ms exactly.
  ts: {
    pyarrow: 'timestamp[ms, tz=UTC]',
    polars: "Datetime(time_unit='ms', time_zone='UTC')",
    duckdb: 'TIMESTAMP WITH TIME ZONE',
    spark: 'timestamp',
  },
  float64: { pyarrow: 'double', polars: 'Float64', duckdb: 'DOUBLE', spark: 'double' },
  // Spark has no unsigned integers: it reads UINT64 as decimal(20,0), which holds every value exactly.
  uint64: { pyarrow: 'uint64', polars: 'UInt64', duckdb: 'UBIGINT', spark: 'decimal(20,0)' },
  levels: {
    pyarrow: 'list<item: struct<price: double not null, volume: double> not null>',
    polars: "List(Struct({'price': Float64, 'volume': Float64}))",
    duckdb: 'STRUCT(price DOUBLE, volume DOUBLE)[]',
    spark: 'array<struct<price:double,volume:double>>',
  },
  /** Hive keys: integers inferred per reader, strings stay strings. */
  hiveInt: { pyarrow: 'int32', polars: 'Int64', duckdb: 'BIGINT', spark: 'int' },
  hiveDate: { pyarrow: 'string', polars: 'Date', duckdb: 'DATE', spark: 'date' },
} as const;

const T0 = Date.UTC(2026, 0, 30, 14, 30);
const MIN = 60_000;
const DAY = 86_400_000;

const bar = (code: string, klineType: 1 | 8, tsMs: number, i: number, nulls = false): Bar => ({
  type: 'bar',
  code,
  klineType,
  tsMs,
  open: 100 + i * 0.25,
  high: 101.5 + i,
  low: 99.125,
  close: 100.75 + i / 8,
  volume: nulls ? null : 1000 * (i + 1),
  turnover: nulls ? null : 123456.5 + i,
  // Not a whole number of minutes after ts, so a reader truncating to seconds would show.
  readAtMs: tsMs + 86_400_000 + 1_234 + i,
  receivedAtMs: tsMs + 86_400_000 + 1_500 + i,
});

// 1-minute bars across a month boundary (two `month=` partitions) and daily bars, with the
// provider's empty-string volume/turnover (null) on some rows.
const BARS: Bar[] = [
  ...['AAPL.US', '700.HK', '600519.SH'].flatMap((code) =>
    Array.from({ length: 6 }, (_, i) =>
      bar(code, 1, T0 + i * 2 * DAY + i * MIN, i, code === '700.HK' && i === 2),
    ),
  ),
  ...Array.from({ length: 4 }, (_, i) => bar('BTCUSDT', 8, Date.UTC(2026, 0, 27) + i * DAY, i, i === 3)),
  // Far from today: before 1970 (negative epoch ms) and after 2038 (beyond 32-bit seconds).
  bar('IBM.US', 8, Date.UTC(1900, 0, 2), 7),
  bar('IBM.US', 8, Date.UTC(2200, 11, 31), 9),
];

const lv = (price: number, volume: number | undefined): Level => ({
  price,
  volume,
  priceRaw: String(price),
  volumeRaw: volume === undefined ? undefined : String(volume),
});
const DEPTH: DepthTick[] = [
  {
    type: 'depth',
    code: 'AAPL.US',
    seq: 9007199254740993n,
    tickTimeMs: T0,
    bids: [lv(189.5, 300), lv(189.49, 1200)],
    asks: [lv(189.51, 100)],
  },
  // limit-up: no asks; a CFD index: no volumes
  {
    type: 'depth',
    code: '600519.SH',
    seq: 2n ** 62n + 5n,
    tickTimeMs: T0 + 1500,
    bids: [lv(1700, 5)],
    asks: [],
  },
  {
    type: 'depth',
    code: 'US500',
    seq: 12n,
    tickTimeMs: T0 + 2 * DAY,
    bids: [lv(5000.25, undefined)],
    asks: [lv(5000.5, undefined)],
  },
  { type: 'depth', code: 'EMPTY.US', seq: undefined, tickTimeMs: T0 + 3000, bids: [], asks: [] },
  // Above 2^63 (a signed int64 would wrap them negative): the fixture's 2^64 - 1 and 2^63 + 1.
  {
    type: 'depth',
    code: 'BTCUSDT',
    seq: 2n ** 64n - 1n,
    tickTimeMs: Date.UTC(2200, 0, 1),
    bids: [lv(18, 2)],
    asks: [],
  },
  {
    type: 'depth',
    code: 'ETHUSDT',
    seq: 2n ** 63n + 1n,
    tickTimeMs: Date.UTC(1900, 0, 1),
    bids: [],
    asks: [],
  },
];

const susp = (
  exchange: 'sse' | 'nyse',
  symbol: string,
  over: Partial<SuspensionRecord>,
): SuspensionRecord => ({
  type: 'suspension',
  exchange,
  symbol,
  symbolName: undefined,
  haltReason: undefined,
  haltDate: undefined,
  haltTime: undefined,
  haltPeriod: undefined,
  haltDateTime: undefined,
  resumeDate: undefined,
  resumeTime: undefined,
  resumeDateTime: undefined,
  sourceExchange: undefined,
  pauseThresholdPrice: undefined,
  publishDate: '2026-01-30 08:00:00',
  haltAtMs: undefined,
  resumeAtMs: undefined,
  publishAtMs: Date.UTC(2026, 0, 30, 0),
  ...over,
});
const SUSPENSIONS: SuspensionRecord[] = [
  susp('sse', '600000', {
    symbolName: '浦发银行',
    haltReason: '重大事项',
    haltDate: '2026-01-30',
    haltTime: '09:30:00',
    haltPeriod: '全天',
    haltAtMs: Date.UTC(2026, 0, 30, 1, 30),
    resumeDate: '2026-02-02',
    resumeTime: '09:30:00',
    resumeAtMs: Date.UTC(2026, 1, 2, 1, 30),
  }),
  susp('nyse', 'XYZ', {
    haltDateTime: '2026-01-29 10:15:00',
    haltAtMs: Date.UTC(2026, 0, 29, 15, 15),
    sourceExchange: 'N',
    publishDate: '2026-01-29 10:16:00',
    publishAtMs: Date.UTC(2026, 0, 29, 15, 16),
  }),
];

let root: string;
const written: Record<DatasetFormat, WrittenFile[]> = { parquet: [], arrow: [], ndjson: [] };

beforeAll(async () => {
  ensurePython();
  root = await mkdtemp(join(tmpdir(), 'qf-interop-'));
  for (const format of ['parquet', 'arrow', 'ndjson'] as const) {
    // Small files, so the Hive read spans several files per partition: kept as written (no upkeep
    // merging them), as the tests read each file the writer reported.
    await using w = new DatasetWriter({ dir: join(root, format), format, maxRowsPerFile: 4, upkeep: false });
    await w.write([...BARS, ...DEPTH, ...SUSPENSIONS]);
    written[format] = await w.flush();
  }
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const sortBy =
  (...keys: string[]) =>
  (a: Record<string, unknown>, b: Record<string, unknown>): number => {
    for (const k of keys) {
      const x = String(a[k]);
      const y = String(b[k]);
      if (x !== y) return x < y ? -1 : 1;
    }
    return 0;
  };

const month = (ms: number): string => new Date(ms).toISOString().slice(0, 7);
const date = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

const expectedKline = BARS.map((b) => ({
  code: b.code,
  ts: b.tsMs,
  open: b.open,
  high: b.high,
  low: b.low,
  close: b.close,
  volume: b.volume,
  turnover: b.turnover,
  read_at: b.readAtMs,
  kline_type: String(b.klineType),
  month: month(b.tsMs),
})).sort(sortBy('kline_type', 'code', 'ts'));

const expectedDepth = DEPTH.map((d) => ({
  code: d.code,
  seq: d.seq === undefined ? null : String(d.seq),
  tick_time: d.tickTimeMs ?? null,
  bids: d.bids.map((l) => ({ price: l.price, volume: l.volume ?? null })),
  asks: d.asks.map((l) => ({ price: l.price, volume: l.volume ?? null })),
  date: date(d.tickTimeMs!),
})).sort(sortBy('code'));

const RAW = [
  ['symbol', 'raw_symbol'],
  ['symbolName', 'raw_symbol_name'],
  ['haltReason', 'raw_halt_reason'],
  ['haltDate', 'raw_halt_date'],
  ['haltTime', 'raw_halt_time'],
  ['haltPeriod', 'raw_halt_period'],
  ['haltDateTime', 'raw_halt_date_time'],
  ['resumeDate', 'raw_resume_date'],
  ['resumeTime', 'raw_resume_time'],
  ['resumeDateTime', 'raw_resume_date_time'],
  ['sourceExchange', 'raw_source_exchange'],
  ['pauseThresholdPrice', 'raw_pause_threshold_price'],
  ['publishDate', 'raw_publish_date'],
] as const;

const expectedSuspension = SUSPENSIONS.map((s) => ({
  symbol: s.symbol,
  symbol_name: s.symbolName ?? null,
  halt_at: s.haltAtMs ?? null,
  resume_at: s.resumeAtMs ?? null,
  publish_date: s.publishAtMs,
  halt_reason: s.haltReason ?? null,
  ...Object.fromEntries(RAW.map(([f, name]) => [name, s[f] ?? null])),
  exchange: s.exchange,
})).sort(sortBy('symbol'));

type Kind = 'kline' | 'depth' | 'suspension';
/** Each reader's view of the three datasets of a format, read once (Spark: one JVM for all three). */
const reads = new Map<string, Promise<Partial<Record<Kind, ReadBack>>>>();
function datasets(
  reader: PythonReader,
  format: 'parquet' | 'ndjson' = 'parquet',
  kinds: readonly Kind[] = ['kline', 'depth', 'suspension'],
): Promise<Partial<Record<Kind, ReadBack>>> {
  const key = `${reader}:${format}:${kinds.join()}`;
  let got = reads.get(key);
  if (got === undefined) {
    got = readDatasets(kinds.map((k) => ({ reader, path: join(root, format, k), hive: true, format }))).then(
      (backs) => Object.fromEntries(kinds.map((k, i) => [k, backs[i]!])),
    );
    reads.set(key, got);
  }
  return got;
}

describe.each(READERS)('Parquet datasets read by %s', (reader) => {
  it('reads DIR/kline as one Hive-partitioned table with the contract types and every value', async () => {
    const got = (await datasets(reader)).kline!;
    expect(got.columns.map((c) => [c.name, c.type])).toEqual([
      ['code', TYPE.utf8[reader]],
      ['ts', TYPE.ts[reader]],
      ...['open', 'high', 'low', 'close', 'volume', 'turnover'].map((n) => [n, TYPE.float64[reader]]),
      ['read_at', TYPE.ts[reader]],
      ['kline_type', TYPE.hiveInt[reader]],
      ['month', TYPE.utf8[reader]],
    ]);
    expect(got.rows.sort(sortBy('kline_type', 'code', 'ts'))).toEqual(expectedKline);
  });

  it('reads DIR/depth with uint64 seq up to 2^64 - 1, empty book sides and null volumes', async () => {
    const got = (await datasets(reader)).depth!;
    expect(got.columns.map((c) => [c.name, c.type])).toEqual([
      ['code', TYPE.utf8[reader]],
      ['seq', TYPE.uint64[reader]],
      ['tick_time', TYPE.ts[reader]],
      ['bids', TYPE.levels[reader]],
      ['asks', TYPE.levels[reader]],
      // DuckDB, Polars and Spark read `date=2026-01-30` as a date; pyarrow keeps the string.
      ['date', TYPE.hiveDate[reader]],
    ]);
    expect(got.rows.sort(sortBy('code'))).toEqual(expectedDepth);
  });

  it('reads DIR/suspension with nullable times, the raw wire fields and the exchange from the directory', async () => {
    const got = (await datasets(reader)).suspension!;
    expect(got.columns.map((c) => [c.name, c.type])).toEqual([
      ['symbol', TYPE.utf8[reader]],
      ['symbol_name', TYPE.utf8[reader]],
      ['halt_at', TYPE.ts[reader]],
      ['resume_at', TYPE.ts[reader]],
      ['publish_date', TYPE.ts[reader]],
      ['halt_reason', TYPE.utf8[reader]],
      ...RAW.map(([, name]) => [name, TYPE.utf8[reader]]),
      ['exchange', TYPE.utf8[reader]],
    ]);
    expect(got.rows.sort(sortBy('symbol'))).toEqual(expectedSuspension);
  });
});

describe('Parquet files', () => {
  const dir = 'parquet';
  it('carry exact logical types, zstd, and a dictionary-encoded code column', async () => {
    const kline = written[dir].find((f) => f.kind === 'kline')!;
    const meta = await parquetMeta(kline.path);
    const byPath = Object.fromEntries(meta.columns.map((c) => [c.path, c]));
    expect(byPath['code']).toMatchObject({ physical: 'BYTE_ARRAY', logical: 'String' });
    expect(byPath['code']?.encodings).toContain('RLE_DICTIONARY');
    expect(byPath['ts']).toMatchObject({ physical: 'INT64' });
    expect(byPath['ts']?.logical).toMatch(/^Timestamp\(isAdjustedToUTC=true, timeUnit=milliseconds/);
    expect(byPath['volume']).toMatchObject({ physical: 'DOUBLE', logical: 'None' });
    expect(byPath['read_at']).toMatchObject({ physical: 'INT64' });
    expect(byPath['read_at']?.logical).toMatch(/^Timestamp\(isAdjustedToUTC=true, timeUnit=milliseconds/);
    for (const c of meta.columns) expect(c.compression).toEqual(['ZSTD']);
    const depth = await parquetMeta(written[dir].find((f) => f.kind === 'depth')!.path);
    expect(depth.columns.find((c) => c.path === 'seq')?.logical).toBe('Int(bitWidth=64, isSigned=false)');
    expect(depth.columns.map((c) => [c.path, c.physical])).toEqual([
      ['code', 'BYTE_ARRAY'],
      ['seq', 'INT64'],
      ['tick_time', 'INT64'],
      ['bids.list.item.price', 'DOUBLE'],
      ['bids.list.item.volume', 'DOUBLE'],
      ['asks.list.item.price', 'DOUBLE'],
      ['asks.list.item.volume', 'DOUBLE'],
    ]);
  });

  it('sit only in partition directories, with no partition key inside a file', async () => {
    const entries = await readdir(join(root, dir), { recursive: true, withFileTypes: true });
    // Data files, and beside them each table's Delta log (its commits name those files).
    const files = entries
      .filter((e) => e.isFile() && !e.parentPath.split(sep).includes('_delta_log'))
      .map((e) => relative(join(root, dir), join(e.parentPath, e.name)));
    expect(files.length).toBe(written[dir].length);
    expect(await readdir(join(root, dir))).not.toContain('.staging'); // closed: no empty staging left
    for (const f of files)
      expect(f).toMatch(
        /^(kline\/kline_type=\d+\/month=\d{4}-\d{2}|depth\/date=[\d-]+|suspension\/exchange=\w+)\/part-[^/]+\.parquet$/,
      );
    const one = await readDataset('pyarrow', written[dir].find((f) => f.kind === 'kline')!.path);
    expect(one.columns.map((c) => c.name)).toEqual([
      'code',
      'ts',
      'open',
      'high',
      'low',
      'close',
      'volume',
      'turnover',
      'read_at',
    ]);
    expect(one.columns.map((c) => c.nullable)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
      true,
      true,
      false,
    ]);
  });

  it('carry column statistics pyarrow trusts for pruning (min, max, null count)', async () => {
    // BTCUSDT's daily bars: 4 rows, one with null volume and turnover.
    const kline = written[dir].find((f) => f.kind === 'kline' && f.relativePath.includes('kline_type=8'))!;
    const meta = (await parquetMeta(kline.path)) as ParquetMeta & {
      columns: { path: string; stats: ({ has_min_max: boolean; null_count: number | null } | null)[] }[];
    };
    const got = await readDataset('pyarrow', kline.path);
    for (const c of meta.columns) {
      const values = got.rows.map((r) => r[c.path]);
      const present = values.filter((v) => v !== null) as (number | string)[];
      const stats = c.stats[0]!;
      expect(stats, c.path).toMatchObject({
        has_min_max: true,
        null_count: values.length - present.length,
      });
      const sorted = [...present].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      expect(stats).toMatchObject({ min: sorted[0], max: sorted.at(-1) });
    }
  });
});

describe('Parquet kline files of many pages and row groups', () => {
  // 30,000 rows in batches of 7,000: pages of at most 16 KiB, row groups of 16,000 rows
  // (16,000 + 14,000, cut inside a batch), float dictionaries capped at 12 KiB so the prices switch
  // to PLAIN mid row group; 10 codes of 3,000 bars (ts falls back at every code change, a day gap
  // inside), random-walk prices, a high-cardinality turnover, nulls scattered through volume and
  // turnover.
  const N = 30_000;
  const bars: Bar[] = [];
  let seed = 7;
  const rnd = (): number => (seed = Math.imul(seed, 48271) >>> 0) / 4294967296;
  for (let k = 0; k < 10; k++) {
    let p = 50 + k;
    for (let i = 0; i < N / 10; i++) {
      const open = p;
      p = Math.round(p * (1 + (rnd() - 0.5) * 0.01) * 100) / 100;
      const vol = Math.floor(rnd() * 5000);
      bars.push({
        type: 'bar',
        code: `K${k}.US`,
        klineType: 1,
        tsMs: Date.UTC(2026, 0, 5) + i * 60_000 + (i > 1000 ? 86_400_000 : 0),
        open,
        high: Math.max(open, p) + 0.01,
        low: Math.min(open, p) - 0.01,
        close: p,
        volume: i % 97 === 5 ? null : vol,
        turnover: i % 89 === 3 ? null : Math.round(vol * p * 1000) / 1000,
        // One request per code and day half, as a backfill pages: repeated values, a step back at
        // each code change.
        readAtMs: Date.UTC(2026, 0, 7) + k * 1_000 + (i > 1500 ? 250 : 0),
        receivedAtMs: Date.UTC(2026, 0, 7) + k * 1_000 + (i > 1500 ? 250 : 0) + 1,
      });
    }
  }
  const expected = bars.map((b) => ({
    code: b.code,
    ts: b.tsMs,
    open: b.open,
    high: b.high,
    low: b.low,
    close: b.close,
    volume: b.volume,
    turnover: b.turnover,
    read_at: b.readAtMs,
  }));
  let file: string;
  beforeAll(async () => {
    const batches = [];
    for (let i = 0; i < N; i += 7000) {
      const b = createColumnBuilder('kline');
      for (const bar of bars.slice(i, i + 7000)) b.append(bar);
      batches.push(b.build());
    }
    file = join(root, 'pages.parquet');
    const layout = {
      maxRowGroupRows: 16_000,
      dataPageBytes: 16 * 1024,
      dictionaryPageBytes: 12 * 1024,
      writeBatchRows: 1024,
    };
    await writeFile(file, encodeBatches(batches, 'parquet', layout));
  });

  it.each(READERS)('are read back exactly by %s, types included, in order', async (reader) => {
    const got = await readDataset(reader, file);
    expect(got.columns.map((c) => [c.name, c.type])).toEqual([
      ['code', TYPE.utf8[reader]],
      ['ts', TYPE.ts[reader]],
      ...['open', 'high', 'low', 'close', 'volume', 'turnover'].map((n) => [n, TYPE.float64[reader]]),
      ['read_at', TYPE.ts[reader]],
    ]);
    expect(got.rows.length).toBe(N);
    for (let i = 0; i < N; i++)
      if (!isDeepStrictEqual(got.rows[i], expected[i])) expect([i, got.rows[i]]).toEqual([i, expected[i]]);
  });

  it('hold two row groups and dictionary then PLAIN pages for prices', async () => {
    const meta = await parquetMeta(file);
    expect(meta.row_groups).toBe(2);
    const enc = Object.fromEntries(meta.columns.map((c) => [c.path, c.encodings]));
    expect(enc['code']).toContain('RLE_DICTIONARY');
    expect(enc['close']).toEqual(expect.arrayContaining(['PLAIN', 'RLE_DICTIONARY']));
    expect(enc['turnover']).toContain('PLAIN');
  });
});

describe('Arrow IPC datasets', () => {
  it.each(['pyarrow', 'polars'] as const)(
    'are read back by %s as one Hive table with exact types',
    async (reader) => {
      const got = await readDataset(reader, join(root, 'arrow', 'kline'), { hive: true, format: 'arrow' });
      expect(got.columns.slice(0, 9).map((c) => [c.name, c.type])).toEqual([
        ['code', TYPE.utf8[reader]],
        ['ts', TYPE.ts[reader]],
        ...['open', 'high', 'low', 'close', 'volume', 'turnover'].map((n) => [n, TYPE.float64[reader]]),
        ['read_at', TYPE.ts[reader]],
      ]);
      const rows = got.rows.sort(sortBy('kline_type', 'code', 'ts'));
      expect(rows).toEqual(expectedKline);
    },
  );

  it.each(['pyarrow', 'polars'] as const)(
    'hold depth (uint64 seq) and suspension files %s reads exactly',
    async (reader) => {
      const depth = await readDataset(reader, join(root, 'arrow', 'depth'), { hive: true, format: 'arrow' });
      expect(depth.columns.slice(0, 5).map((c) => c.type)).toEqual([
        TYPE.utf8[reader],
        TYPE.uint64[reader],
        TYPE.ts[reader],
        TYPE.levels[reader],
        TYPE.levels[reader],
      ]);
      // Polars reads the Hive date of an IPC file as a string too.
      const dates = depth.rows.map((r) => ({ ...r, date: String(r['date']) }));
      expect(dates.sort(sortBy('code'))).toEqual(expectedDepth);
      const s = await readDataset(reader, join(root, 'arrow', 'suspension'), { hive: true, format: 'arrow' });
      expect(s.rows.sort(sortBy('symbol'))).toEqual(expectedSuspension);
    },
  );
});

/** NDJSON carries no types: ISO-8601 times come back as timestamps or strings, per reader. */
const ms = (v: unknown): unknown => (typeof v === 'string' ? Date.parse(v) : v);
const NDJSON_READERS = ['duckdb', 'polars', 'pyarrow', 'spark'] as const;

// DuckDB and Spark infer the depth files' types from all their rows; Polars and pyarrow from the
// first rows, and an empty book side (`[]`) there leaves them a list of nulls that the next file's
// levels do not fit: they read depth NDJSON with an explicit schema only (README).
const NDJSON_KINDS = {
  duckdb: ['kline', 'depth'],
  spark: ['kline', 'depth'],
  polars: ['kline'],
  pyarrow: ['kline'],
} as const satisfies Record<(typeof NDJSON_READERS)[number], readonly Kind[]>;

describe.each(NDJSON_READERS)('NDJSON datasets read by %s', (reader) => {
  // Polars' scan_ndjson has no Hive partitioning: it reads the files' own columns.
  const hiveKeys = reader === 'polars' ? [] : ['kline_type', 'month'];
  const kinds = NDJSON_KINDS[reader];

  it('read every kline value back, with every price and volume column as float64', async () => {
    const got = (await datasets(reader, 'ndjson', kinds)).kline!;
    const type = Object.fromEntries(got.columns.map((c) => [c.name, c.type]));
    for (const c of ['open', 'high', 'low', 'close', 'volume', 'turnover'])
      expect([c, type[c]]).toEqual([c, TYPE.float64[reader]]);
    const rows = got.rows.map((r) => ({ ...r, ts: ms(r['ts']), read_at: ms(r['read_at']) }));
    const expected = expectedKline.map((r) =>
      Object.fromEntries(
        Object.entries(r).filter(([k]) => !['kline_type', 'month'].includes(k) || hiveKeys.includes(k)),
      ),
    );
    const keys = reader === 'polars' ? ['code', 'ts'] : ['kline_type', 'code', 'ts'];
    expect(rows.sort(sortBy(...keys))).toEqual(expected.sort(sortBy(...keys)));
  });
});

// Depth NDJSON without a schema: the readers that infer it from all rows (see NDJSON_KINDS).
const NDJSON_DEPTH_READERS = NDJSON_READERS.filter((r) =>
  (NDJSON_KINDS[r] as readonly Kind[]).includes('depth'),
);

describe.each(NDJSON_DEPTH_READERS)('NDJSON depth datasets read by %s', (reader) => {
  const kinds = NDJSON_KINDS[reader];

  it('read depth seq as its exact decimal digits, 2^64 - 1 included', async () => {
    const got = (await datasets(reader, 'ndjson', kinds)).depth!;
    expect(got.columns.find((c) => c.name === 'seq')?.type).toBe(TYPE.utf8[reader]);
    const seqs = Object.fromEntries(got.rows.map((r) => [r['code'], r['seq']]));
    expect(seqs).toEqual(
      Object.fromEntries(DEPTH.map((d) => [d.code, d.seq === undefined ? null : String(d.seq)])),
    );
    const prices = got.rows
      .flatMap((r) => (r['bids'] as { price: number }[] | null) ?? [])
      .map((l) => l.price);
    expect(prices.sort()).toEqual(DEPTH.flatMap((d) => d.bids.map((l) => l.price)).sort());
  });
});

describe('NDJSON read by Polars across files', () => {
  it('keeps floats Float64 when the first file holds only whole values (18.0, not 18)', async () => {
    const dir = join(root, 'ndjson-whole-first');
    await using w = new DatasetWriter({ dir, format: 'ndjson', klineSubPartition: 'none' });
    const t = Date.UTC(2026, 0, 5);
    const whole = { open: 18, high: 19, low: 17, close: 18, volume: 1000, turnover: 18_000 };
    // First file: only whole values, so a reader inferring from it alone sees no fraction but ".0".
    await w.write([0, 1].map((i) => ({ ...bar('A', 1, t + i * MIN, i), ...whole })));
    await w.flush();
    await w.write([{ ...bar('A', 1, t + 2 * MIN, 2), ...whole, open: 18.87977 }]);
    await w.flush();
    const got = await readDataset('polars', join(dir, 'kline'), { hive: true, format: 'ndjson' });
    expect(got.columns.filter((c) => ['open', 'high', 'low', 'close', 'volume'].includes(c.name))).toEqual(
      ['open', 'high', 'low', 'close', 'volume'].map((name) => ({ name, type: 'Float64' })),
    );
    expect(got.rows.map((r) => r['open'])).toEqual([18, 18, 18.87977]);
  });
});
