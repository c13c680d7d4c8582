import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection, type DuckDBResultReader } from '@duckdb/node-api';
import { KLINE_PERIOD_MS, KLINE_TYPES, calendarOf, isKlineType, type KlineType } from '@quoteflow/core';
import { candleLengthOf, periodOf, type Candle, type CandleList } from './candles.js';
import {
  unexplainedGap,
  type DatasetHalt,
  type SeriesGap,
  type SeriesInspection,
} from '@quoteflow/pipelines';

/** What one series of a Parquet kline dataset holds in the report's range, from {@link KlineScan}. */
export interface ScannedSeries extends SeriesInspection {
  /** When the newest bar's values were read (epoch ms), if the files say. */
  readonly lastReadMs: number | undefined;
  /** Runs `[first, last]` of heatmap buckets that hold bars of the series, in order. */
  readonly heldBuckets: readonly (readonly [number, number])[];
}

/** What a series holds in the range, before its gaps are known. */
export interface SeriesTotals {
  readonly code: string;
  readonly klineType: KlineType;
  readonly rows: number;
  readonly firstMs: number;
  readonly lastMs: number;
  readonly lastReadMs: number | undefined;
}

/** Which rows a scan reads. */
export interface KlineScanRange {
  readonly codes?: readonly string[];
  readonly fromMs?: number;
  readonly toMs?: number;
}

/**
 * The report's reader for a Parquet kline dataset too large for a row-by-row pass (10,000 series
 * × a month of 1-minute bars is 432 M rows): DuckDB aggregates the files in place, and only rows
 * that can hold a gap or a duplicate reach JavaScript, where the calendar (core's, the same
 * `unexplainedGap` that `inspect` uses) decides.
 *
 * How: per series and heatmap bucket, DuckDB takes the row count, the first and last start, the
 * phases (start mod period) and the first three power sums of the starts counted in periods. A
 * bucket of n starts of one phase that span exactly n periods and have the power sums of n
 * consecutive periods holds one bar per period, nothing missing and nothing twice (a duplicate and
 * a missing bar that balance each other in all three sums take four of each in one bucket). So
 * only two kinds of consecutive starts can be more or less than one period apart: the last of a
 * bucket and the first of the next (from the aggregates), and those inside the other buckets (a
 * window over their rows alone). Only those pairs reach JavaScript. Daily and longer bars have no
 * fixed period: every bucket holding two or more is read (they are few).
 */
export class KlineScan {
  private seriesTotals: SeriesTotals[] | undefined;

  private constructor(
    private readonly connection: DuckDBConnection,
    private readonly close$: () => void,
  ) {}

  /**
   * Opens a scan over the kline files `files` (relative to `dir`; `.parquet` only) restricted to
   * `range`.
   */
  static async open(dir: string, files: readonly string[], range: KlineScanRange = {}): Promise<KlineScan> {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    const list = files.map((f) => sqlString(join(dir, f))).join(', ');
    const where = [
      `kline_type::INTEGER IN (${KLINE_TYPES.join(', ')})`,
      range.codes === undefined ? undefined : `code IN (${range.codes.map(sqlString).join(', ') || 'NULL'})`,
      range.fromMs === undefined ? undefined : `epoch_ms(ts) >= ${Math.trunc(range.fromMs)}`,
      range.toMs === undefined ? undefined : `epoch_ms(ts) < ${Math.trunc(range.toMs)}`,
    ].filter((w) => w !== undefined);
    await connection.run(
      `CREATE TEMP VIEW k AS SELECT code, kline_type::INTEGER AS kt, epoch_ms(ts) AS t, epoch_ms(read_at) AS r,
         ${periodSql('kline_type::INTEGER')} AS p, open, high, low, close, volume, turnover
       FROM read_parquet([${list}], hive_partitioning = true, union_by_name = true)
       ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`}`,
    );
    return new KlineScan(connection, () => {
      connection.closeSync();
      instance.closeSync();
    });
  }

  /**
   * Rows, first and last start and newest read per series (a cheap pass: one group per series),
   * kept for {@link KlineScan.series}; what sizes the heatmap.
   */
  async totals(): Promise<SeriesTotals[]> {
    await this.connection.run(
      `CREATE OR REPLACE TEMP TABLE totals AS
       SELECT code, kt, count(*)::DOUBLE AS n, min(t)::DOUBLE AS lo, max(t)::DOUBLE AS hi, max(r)::DOUBLE AS r
       FROM k GROUP BY code, kt`,
    );
    const result = await this.connection.runAndReadAll(`SELECT * FROM totals ORDER BY code, kt`);
    const [codes, types, rows, firsts, lasts, reads] = columnsOf(result) as [
      string[],
      number[],
      number[],
      number[],
      number[],
      (number | null)[],
    ];
    const out: SeriesTotals[] = [];
    for (let i = 0; i < codes.length; i++) {
      const klineType = types[i]!;
      if (!isKlineType(klineType)) continue;
      out.push({
        code: codes[i]!,
        klineType,
        rows: rows[i]!,
        firstMs: firsts[i]!,
        lastMs: lasts[i]!,
        lastReadMs: reads[i] ?? undefined,
      });
    }
    this.seriesTotals = out;
    return out;
  }

  /**
   * Every series with its gaps and duplicates (as `inspect` finds them) and the runs of heatmap
   * buckets (`[fromMs + i * bucketMs, …)`) it holds bars in.
   */
  async series(fromMs: number, bucketMs: number, halts: readonly DatasetHalt[]): Promise<ScannedSeries[]> {
    const bucket = (t: string) => `(${t} - ${Math.trunc(fromMs)}) // ${Math.trunc(bucketMs)}`;
    // One pass over the rows: per series and bucket the count, first and last start, the phases
    // (start mod period) and the first three power sums of y, the start in periods after the
    // bucket's own start (so y < bucketMs / p: the sums stay far inside 64 bits).
    const y = `(((t - ${Math.trunc(fromMs)}) % ${Math.trunc(bucketMs)}) // p)`;
    await this.connection.run(
      `CREATE OR REPLACE TEMP TABLE b AS
       SELECT code, kt, any_value(p) AS p, ${bucket('t')} AS i, count(*) AS n, min(t) AS lo, max(t) AS hi,
         min(t % p) AS ph0, max(t % p) AS ph1, sum(${y}) AS s1, sum(${y} * ${y}) AS s2,
         sum(${y} * ${y} * ${y}) AS s3
       FROM k GROUP BY code, kt, i`,
    );
    // A bucket is one bar per period when its n starts share a phase, span n periods and have the
    // power sums of y0, y0 + 1, …, y0 + n − 1 (duplicates and missing bars that balance each
    // other in all three sums take four of each in one bucket).
    const y0 = `(((lo - ${Math.trunc(fromMs)}) % ${Math.trunc(bucketMs)}) // p)::HUGEINT`;
    const m1 = 'n::HUGEINT * (n - 1) // 2';
    const m2 = '(n::HUGEINT - 1) * n * (2 * n - 1) // 6';
    await this.connection.run(
      `CREATE OR REPLACE TEMP TABLE w AS SELECT code, kt, i FROM b
       WHERE n > 1 AND NOT (p IS NOT NULL AND ph0 = ph1 AND n = (hi - lo) // p + 1
         AND s1 = n * ${y0} + ${m1}
         AND s2 = n * ${y0} * ${y0} + 2 * ${y0} * ${m1} + ${m2}
         AND s3 = n * ${y0} * ${y0} * ${y0} + 3 * ${y0} * ${y0} * ${m1} + 3 * ${y0} * ${m2} + (${m1}) * (${m1}))`,
    );
    const runs = await this.connection.runAndReadAll(
      `SELECT code, kt, min(i)::DOUBLE, max(i)::DOUBLE FROM (
         SELECT code, kt, i, i - row_number() OVER (PARTITION BY code, kt ORDER BY i) AS run FROM b)
       GROUP BY code, kt, run ORDER BY code, kt, 3`,
    );
    // Consecutive starts not one period apart: across buckets from the aggregates, inside a bucket
    // from its rows, read only where the bucket is not one bar per period.
    const pairs = await this.connection.runAndReadAll(
      `WITH edges AS (
         SELECT code, kt, p, lag(hi) OVER (PARTITION BY code, kt ORDER BY i) AS a, lo AS z FROM b),
       inside AS (
         SELECT code, kt, p, lag(t) OVER (PARTITION BY code, kt, i ORDER BY t) AS a, t AS z
         FROM (SELECT code, kt, p, ${bucket('t')} AS i, t FROM k) x
         SEMI JOIN w ON x.code = w.code AND x.kt = w.kt AND x.i = w.i)
       SELECT code, kt, a::DOUBLE, z::DOUBLE FROM (SELECT * FROM edges UNION ALL SELECT * FROM inside)
       WHERE a IS NOT NULL AND (p IS NULL OR z - a <> p)
       ORDER BY code, kt, z, a`,
    );
    const totals = this.seriesTotals ?? (await this.totals());
    const [runCodes, runTypes, runFirsts, runLasts] = columnsOf(runs) as [
      string[],
      number[],
      number[],
      number[],
    ];
    const [pairCodes, pairTypes, pairFrom, pairTo] = columnsOf(pairs) as [
      string[],
      number[],
      number[],
      number[],
    ];
    const haltsOf = new Map<string, DatasetHalt[]>();
    for (const h of halts) haltsOf.set(h.code, [...(haltsOf.get(h.code) ?? []), h]);
    const out: ScannedSeries[] = [];
    let p = 0; // cursors into the pairs and runs, in the same order as the series
    let q = 0;
    for (const t of totals) {
      const { code, klineType } = t;
      const same = (c: string[], k: number[], j: number) => c[j] === code && k[j] === klineType;
      const gaps: SeriesGap[] = [];
      let duplicates = 0;
      const calendar = calendarOf(code);
      const codeHalts = haltsOf.get(code) ?? [];
      for (; p < pairCodes.length && same(pairCodes, pairTypes, p); p++) {
        const a = pairFrom[p]!;
        const z = pairTo[p]!;
        if (a === z) duplicates++;
        else {
          const gap = unexplainedGap(code, klineType, a, z, codeHalts, calendar);
          if (gap !== undefined) gaps.push(gap);
        }
      }
      const held: [number, number][] = [];
      for (; q < runCodes.length && same(runCodes, runTypes, q); q++)
        held.push([runFirsts[q]!, runLasts[q]!]);
      out.push({ ...t, duplicates, gaps, heldBuckets: held });
    }
    return out;
  }

  /**
   * Candles of these series (see `candleLengthOf`), folded by DuckDB: at most about `maxCandles`
   * rows per series reach JavaScript, however many bars it holds.
   */
  async candles(
    series: readonly {
      readonly code: string;
      readonly klineType: KlineType;
      readonly rows: number;
      readonly firstMs: number;
      readonly lastMs: number;
    }[],
    maxCandles: number,
  ): Promise<Map<string, CandleList>> {
    const out = new Map<string, CandleList>();
    if (series.length === 0) return out;
    const lengths = new Map<string, number>();
    const wanted = series.map((s) => {
      const candleMs = candleLengthOf(s.klineType, s.rows, s.lastMs - s.firstMs, maxCandles);
      lengths.set(`${s.code}\u0000${s.klineType}`, candleMs);
      const onePerBar = candleMs === periodOf(s.klineType);
      return `(${sqlString(s.code)}, ${s.klineType}, ${candleMs}, ${onePerBar})`;
    });
    const result = await this.connection.runAndReadAll(
      `SELECT code, kt, (s // 1000)::DOUBLE, arg_min(open, t), max(high), min(low), arg_max(close, t),
         sum(coalesce(volume, 0))
       FROM (SELECT k.*, CASE WHEN w.one THEN k.t ELSE k.t // w.cm * w.cm END AS s
             FROM k JOIN (VALUES ${wanted.join(', ')}) w(code, kt, cm, one) ON k.code = w.code AND k.kt = w.kt)
       GROUP BY code, kt, s ORDER BY code, kt, s`,
    );
    const [codes, types, starts, opens, highs, lows, closes, volumes] = columnsOf(result) as [
      string[],
      number[],
      ...number[][],
    ];
    for (let i = 0; i < codes.length; i++) {
      const key = `${codes[i]!}\u0000${types[i]!}`;
      let list = out.get(key);
      if (list === undefined) out.set(key, (list = { candleMs: lengths.get(key)!, candles: [] }));
      (list.candles as Candle[]).push([
        starts![i]!,
        opens![i]!,
        highs![i]!,
        lows![i]!,
        closes![i]!,
        volumes![i]!,
      ]);
    }
    return out;
  }

  close(): void {
    this.close$();
  }
}

/** The bar period (ms) of a kline type as SQL; NULL for daily and longer bars (no fixed length). */
function periodSql(klineType: string): string {
  const cases = Object.entries(KLINE_PERIOD_MS)
    .filter(([, ms]) => typeof ms === 'number')
    .map(([type, ms]) => `WHEN ${Number(type)} THEN ${ms}`);
  return `(CASE ${klineType} ${cases.join(' ')} ELSE NULL END)::BIGINT`;
}

/** A SQL string literal. */
function sqlString(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

/** A result's columns as JavaScript values; an empty result has every column, empty. */
function columnsOf(result: DuckDBResultReader): unknown[][] {
  const columns = result.getColumnsJS() as unknown[][];
  return Array.from({ length: result.columnCount }, (_, i) => columns[i] ?? []);
}
