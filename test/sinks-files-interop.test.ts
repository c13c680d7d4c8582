/**
 * Every dataset kind written by @quoteflow/sinks is read back by real readers (pyarrow, Polars,
 * DuckDB from PyPI, in `.venv`), with the schema and every value checked exactly.
 */
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { Bar, DepthTick, Level, SuspensionRecord } from '../packages/core/src/index.js';
import { isDeepStrictEqual } from 'node:util';
import { DatasetWriter, type ParquetEncoder, type WrittenFile } from '../packages/sinks/src/index.js';
import { createColumnBuilder } from '../packages/sinks/src/files/dataset-columns.js';
import { NativeParquetWriter } from '../packages/sinks/src/files/internal/parquet-native.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ensurePython,
  parquetMeta,
  readDataset,
  type ParquetMeta,
  type PythonReader,
} from './support/python.js';

const READERS: PythonReader[] = ['pyarrow', 'polars', 'duckdb'];

/** How each reader names the contract's types. */
const TYPE = {
  utf8: { pyarrow: 'string', polars: 'String', duckdb: 'VARCHAR' },
  ts: {
    pyarrow: 'timestamp[ms, tz=UTC]',
    polars: "Datetime(time_unit='ms', time_zone='UTC')",
    duckdb: 'TIMESTAMP WITH TIME ZONE',
  },
  float64: { pyarrow: 'double', polars: 'Float64', duckdb: 'DOUBLE' },
  int64: { pyarrow: 'int64', polars: 'Int64', duckdb: 'BIGINT' },
  levels: {
    pyarrow: 'list<item: struct<price: double not null, volume: double> not null>',
    polars: "List(Struct({'price': Float64, 'volume': Float64}))",
    duckdb: 'STRUCT(price DOUBLE, volume DOUBLE)[]',
  },
  /** Hive keys: integers inferred per reader, strings stay strings. */
  hiveInt: { pyarrow: 'int32', polars: 'Int64', duckdb: 'BIGINT' },
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

/** The Parquet encoders, and the directory under the test root each one's dataset is written to. */
const ENCODERS = [
  ['wasm', 'parquet'],
  ['native', 'parquet-native'],
] as const satisfies readonly (readonly [ParquetEncoder, string])[];
type Written = 'parquet' | 'parquet-native' | 'arrow' | 'ndjson';

let root: string;
const written: Record<Written, WrittenFile[]> = { parquet: [], 'parquet-native': [], arrow: [], ndjson: [] };

beforeAll(async () => {
  ensurePython();
  root = await mkdtemp(join(tmpdir(), 'qf-interop-'));
  for (const [dir, format, parquetEncoder] of [
    ['parquet', 'parquet', 'wasm'],
    ['parquet-native', 'parquet', 'native'],
    ['arrow', 'arrow', 'wasm'],
    ['ndjson', 'ndjson', 'wasm'],
  ] as const) {
    // Small files, so the Hive read spans several files per partition.
    await using w = new DatasetWriter({ dir: join(root, dir), format, parquetEncoder, maxRowsPerFile: 4 });
    await w.write([...BARS, ...DEPTH, ...SUSPENSIONS]);
    written[dir] = await w.flush();
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

describe.each(ENCODERS.flatMap(([enc, dir]) => READERS.map((r) => [r, enc, dir] as const)))(
  'Parquet datasets read by %s (parquetEncoder %s)',
  (reader, _encoder, dir) => {
    it('reads DIR/kline as one Hive-partitioned table with the contract types and every value', async () => {
      const got = await readDataset(reader, join(root, dir, 'kline'), { hive: true });
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

    it('reads DIR/depth with int64 seq beyond 2^53, empty book sides and null volumes', async () => {
      const got = await readDataset(reader, join(root, dir, 'depth'), { hive: true });
      expect(got.columns.map((c) => [c.name, c.type])).toEqual([
        ['code', TYPE.utf8[reader]],
        ['seq', TYPE.int64[reader]],
        ['tick_time', TYPE.ts[reader]],
        ['bids', TYPE.levels[reader]],
        ['asks', TYPE.levels[reader]],
        // DuckDB and Polars read `date=2026-01-30` as a date; pyarrow keeps the string.
        ['date', { pyarrow: 'string', polars: 'Date', duckdb: 'DATE' }[reader]],
      ]);
      expect(got.rows.sort(sortBy('code'))).toEqual(expectedDepth);
    });

    it('reads DIR/suspension with nullable times, the raw wire fields and the exchange from the directory', async () => {
      const got = await readDataset(reader, join(root, dir, 'suspension'), { hive: true });
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
  },
);

describe.each(ENCODERS)('Parquet files (parquetEncoder %s)', (encoder, dir) => {
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
    const files = entries
      .filter((e) => e.isFile())
      .map((e) => relative(join(root, dir), join(e.parentPath, e.name)));
    expect(files.length).toBe(written[dir].length);
    expect(await readdir(join(root, dir, '.staging'))).toEqual([]);
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
      expect(stats, `${encoder} ${c.path}`).toMatchObject({
        has_min_max: true,
        null_count: values.length - present.length,
      });
      const sorted = [...present].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      expect(stats).toMatchObject({ min: sorted[0], max: sorted.at(-1) });
    }
  });
});

describe('Parquet kline files of many pages and row groups, from the native writer alone', () => {
  // 30,000 rows pushed in batches of 7,000: pages of 4,000 rows, row groups of at most 16,000 rows
  // (cut between batches: 14,000 + 16,000), float dictionaries capped at 1,500 values so the prices switch to
  // PLAIN mid row group; 10 codes of 3,000 bars (ts falls back at every code change, a day gap
  // inside), random-walk prices, a high-cardinality turnover, nulls scattered through volume and
  // turnover. No ARROW:schema: the readers' types come from the Parquet schema alone.
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
        // each code change (delta packing both ways).
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
    const w = new NativeParquetWriter({ pageRows: 4000, rowGroupRows: 16_000, dictLimit: 1500 });
    for (let i = 0; i < N; i += 7000) {
      const b = createColumnBuilder('kline');
      for (const bar of bars.slice(i, i + 7000)) b.append(bar);
      w.push(b.build());
    }
    file = join(root, 'native-pages.parquet');
    await writeFile(file, w.finish());
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

  it('hold two row groups, dictionary then PLAIN pages for prices, delta-packed ts and read_at', async () => {
    const meta = await parquetMeta(file);
    expect(meta.row_groups).toBe(2);
    const enc = Object.fromEntries(meta.columns.map((c) => [c.path, c.encodings]));
    expect(enc['code']).toContain('RLE_DICTIONARY');
    expect(enc['ts']).toContain('DELTA_BINARY_PACKED');
    expect(enc['read_at']).toContain('DELTA_BINARY_PACKED');
    expect(enc['close']).toEqual(expect.arrayContaining(['PLAIN', 'RLE_DICTIONARY']));
    expect(enc['turnover']).not.toContain('RLE_DICTIONARY');
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

  it('hold depth and suspension files pyarrow reads exactly', async () => {
    const depth = await readDataset('pyarrow', join(root, 'arrow', 'depth'), { hive: true, format: 'arrow' });
    expect(depth.columns.map((c) => c.type)).toEqual([
      'string',
      'int64',
      'timestamp[ms, tz=UTC]',
      TYPE.levels.pyarrow,
      TYPE.levels.pyarrow,
      'string',
    ]);
    expect(depth.rows.sort(sortBy('code'))).toEqual(expectedDepth);
    const s = await readDataset('pyarrow', join(root, 'arrow', 'suspension'), {
      hive: true,
      format: 'arrow',
    });
    expect(s.rows.sort(sortBy('symbol'))).toEqual(expectedSuspension);
  });
});

describe('NDJSON datasets', () => {
  it('are read by DuckDB as one Hive table with the same values', async () => {
    const got = await readDataset('duckdb', join(root, 'ndjson', 'kline'), { hive: true, format: 'ndjson' });
    // NDJSON carries no types: DuckDB infers whole-number volumes as BIGINT (strings here) and
    // the ISO times as timestamps.
    const num = (v: unknown): number | null => (v === null ? null : Number(v));
    const rows = got.rows
      .map((r) => ({ ...r, volume: num(r['volume']), turnover: num(r['turnover']) }))
      .sort(sortBy('kline_type', 'code', 'ts'));
    expect(got.columns.find((c) => c.name === 'ts')?.type).toMatch(/^TIMESTAMP/);
    expect(got.columns.find((c) => c.name === 'read_at')?.type).toMatch(/^TIMESTAMP/);
    expect(rows).toEqual(expectedKline);
  });
});
