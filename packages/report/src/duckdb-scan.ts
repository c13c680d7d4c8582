import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection, type DuckDBResultReader } from '@duckdb/node-api';
import { KLINE_TYPES, calendarOf, isKlineType, type KlineType } from '@quoteflow/core';
import { KLINE_PERIOD_MS } from '@quoteflow/core/internal';
import { periodOf, type Candle, type CandleList } from './candles.js';
import { barEndMs } from './coverage.js';
import { type SeriesGap, type SeriesInspection } from '@quoteflow/pipelines';
import { clipGap, unexplainedGap, type DatasetHalt } from '@quoteflow/pipelines/internal';

/** What one series of a Parquet kline dataset holds in the report's range, from {@link KlineScan}. */
export interface ScannedSeries extends SeriesInspection {
  /** When the newest bar's values were read (epoch ms), if the files say. */
  readonly lastReadMs: number | undefined;
  /** Runs `[first, last]` of heatmap buckets that hold bars of the series, in order. */
  readonly heldBuckets: readonly (readonly [number, number])[];
}

/** The columns of the scan's per-series totals: code, kline type, period, rows, first, last, newest read. */
type TotalsColumns = [string[], number[], (number | null)[], number[], number[], number[], (number | null)[]];
/** The columns of the starts next to each other that are not one period apart: code, kline type, from, to. */
type PairColumns = [string[], number[], number[], number[]];

/** Heatmap buckets: `[fromMs + i * bucketMs, …)` for `0 <= i < buckets`. */
export interface HeatmapGrid {
  readonly fromMs: number;
  readonly bucketMs: number;
  readonly buckets: number;
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
 * How: per series and slice of time (about 1/120 of the span), DuckDB takes the row count, the
 * first and last start, the phases (start mod period) and the first three power sums of the
 * starts counted in periods, batch of files by batch of files (a group-by pays for its groups,
 * and files written over one span of time hold few), then merges the batches. A slice of n starts
 * of one phase that span exactly n periods and have the power sums of n consecutive periods holds
 * one bar per period, nothing missing and nothing twice (a duplicate and a missing bar that
 * balance each other in all three sums take four of each in one slice); one that spans n + k
 * periods and lacks exactly the sums of k consecutive periods holds one hole, found without its
 * rows. So consecutive starts more or less than one period apart are found three ways: the last
 * of a slice and the first of the next (from the aggregates), a slice's single hole (from its
 * sums), and a window over the rows of the few other slices. Only those pairs reach JavaScript;
 * between them a series holds a bar every period, which is all the heatmap needs. Daily and
 * longer bars have no fixed period: every slice holding two or more is read (they are few).
 */
export class KlineScan {
  private constructor(
    private readonly connection: DuckDBConnection,
    /** The files as SQL lists of about {@link BATCH_ROWS} rows each, in the order given. */
    private readonly batches: readonly string[],
    private readonly close$: () => void,
    /** The time window read, if any: gaps crossing its edges count their part inside it. */
    private readonly window: { readonly fromMs?: number; readonly toMs?: number },
  ) {}

  /**
   * Opens a scan over the kline files `files` (relative to `dir`; `.parquet` only) restricted to
   * `range`, aggregated in batches of files of about `batchRows` rows.
   */
  static async open(
    dir: string,
    files: readonly string[],
    range: KlineScanRange = {},
    batchRows = BATCH_ROWS,
  ): Promise<KlineScan> {
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
      `CREATE TEMP MACRO rows_of(files) AS TABLE
       SELECT code, kline_type::INTEGER AS kt, epoch_ms(ts) AS t, epoch_ms(read_at) AS r,
         ${periodSql('kline_type::INTEGER')} AS p, open, high, low, close, volume, turnover
       FROM read_parquet(files, hive_partitioning = true, union_by_name = true)
       ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`}`,
    );
    await connection.run(`CREATE TEMP VIEW k AS SELECT * FROM rows_of([${list}])`);
    // The same series at any time: the bars next to the window's edges.
    await connection.run(
      `CREATE TEMP VIEW k_all AS SELECT code, kline_type::INTEGER AS kt, epoch_ms(ts) AS t
       FROM read_parquet([${list}], hive_partitioning = true, union_by_name = true)
       WHERE ${where.filter((w) => !w.startsWith('epoch_ms(ts)')).join(' AND ')}`,
    );
    // Σ_{j<k} (a + j)^e for e = 1, 2, 3: the power sums of k consecutive periods from a.
    await connection.run(`CREATE TEMP MACRO ps1(a, k) AS k * a + k * (k - 1) // 2`);
    await connection.run(
      `CREATE TEMP MACRO ps2(a, k) AS k * a * a + a * k * (k - 1) + (k - 1) * k * (2 * k - 1) // 6`,
    );
    await connection.run(
      `CREATE TEMP MACRO ps3(a, k) AS k * a * a * a + 3 * a * a * (k * (k - 1) // 2)
         + 3 * a * ((k - 1) * k * (2 * k - 1) // 6) + (k * (k - 1) // 2) * (k * (k - 1) // 2)`,
    );
    const sizes = await connection.runAndReadAll(
      `SELECT file_name, num_rows::DOUBLE FROM parquet_file_metadata([${list}])`,
    );
    const [names, counts] = columnsOf(sizes) as [string[], number[]];
    const rowsOf = new Map(names.map((name, i) => [name, counts[i]!]));
    const batches: string[][] = [];
    let rows = Infinity;
    for (const file of files.map((f) => join(dir, f))) {
      if (rows >= batchRows) {
        batches.push([]);
        rows = 0;
      }
      batches[batches.length - 1]!.push(sqlString(file));
      rows += rowsOf.get(file) ?? 0;
    }
    return new KlineScan(
      connection,
      batches.map((b) => `[${b.join(', ')}]`),
      () => {
        connection.closeSync();
        instance.closeSync();
      },
      {
        ...(range.fromMs === undefined ? {} : { fromMs: range.fromMs }),
        ...(range.toMs === undefined ? {} : { toMs: range.toMs }),
      },
    );
  }

  /**
   * The first and last start per kline type (one cheap pass, a handful of groups): what sizes the
   * heatmap before {@link KlineScan.series} aggregates by series and bucket.
   */
  async span(): Promise<{ klineType: KlineType; firstMs: number; lastMs: number }[]> {
    const result = await this.connection.runAndReadAll(
      `SELECT kt, min(t)::DOUBLE, max(t)::DOUBLE FROM k GROUP BY kt ORDER BY kt`,
    );
    const [types, firsts, lasts] = columnsOf(result) as [number[], number[], number[]];
    return types.flatMap((klineType, i) =>
      isKlineType(klineType) ? [{ klineType, firstMs: firsts[i]!, lastMs: lasts[i]! }] : [],
    );
  }

  /**
   * Every series with its rows, first and last bar, newest read, gaps and duplicates (as `inspect`
   * finds them) and the runs of heatmap buckets (`[fromMs + i * bucketMs, …)`, `0 <= i < buckets`)
   * it holds bars in: of `gridOf(klineType)` where given (the heatmap's panel of its kline type),
   * else of the grid that also sizes the scan's slices.
   */
  async series(
    fromMs: number,
    bucketMs: number,
    buckets: number,
    halts: readonly DatasetHalt[],
    gridOf?: (klineType: KlineType) => HeatmapGrid,
  ): Promise<ScannedSeries[]> {
    const from = Math.trunc(fromMs);
    // Rows are aggregated in slices of about 1/120 of the span (never finer than the heatmap): the
    // number of groups, not of rows, is what a group-by pays for (10,000 series × a month: 6-hour
    // slices take 32 s where the heatmap's hours take 47 s), and a slice rarely holds two holes.
    const width = Math.max(
      Math.trunc(bucketMs),
      Math.ceil((buckets * bucketMs) / SLICES / SHORTEST_PERIOD_MS) * SHORTEST_PERIOD_MS,
    );
    // The power sums of a slice's starts stay below 3 (width / p)^4: BIGINT while a slice holds
    // fewer than 40,000 periods of the shortest fixed bar (28 days of 1-minute bars).
    const number = width / SHORTEST_PERIOD_MS < 40_000 ? 'BIGINT' : 'HUGEINT';
    const grid: SliceGrid = { from, width, number };
    await this.#aggregateSlices(grid);
    const totals = await this.connection.runAndReadAll(
      `SELECT code, kt, any_value(p)::DOUBLE, sum(n)::DOUBLE, min(lo)::DOUBLE, max(hi)::DOUBLE, max(r)::DOUBLE
       FROM b GROUP BY code, kt ORDER BY code, kt`,
    );
    await this.#findMissingRuns();
    const pairs = await this.#breaks(grid);
    const haltsOf = new Map<string, DatasetHalt[]>();
    for (const h of halts) haltsOf.set(h.code, [...(haltsOf.get(h.code) ?? []), h]);
    const scanGrid = { fromMs: from, bucketMs: Math.trunc(bucketMs), buckets: Math.max(1, buckets) };
    const out = scannedSeriesOf(totals, pairs, haltsOf, (klineType) => gridOf?.(klineType) ?? scanGrid);
    return this.#withEdgeGaps(out, haltsOf);
  }

  /**
   * Tables `a` (per batch of files) and `b` (merged): per series and slice, its rows' count,
   * first and last start, newest read, phases, power sums, and whether it holds one bar per period.
   */
  async #aggregateSlices({ from, width, number }: SliceGrid): Promise<void> {
    const slice = (t: string) => sliceSql(t, from, width);
    // One pass over the rows: per series and slice the count, first and last start, newest read,
    // the phases (start mod period) and the first three power sums of y, the start in periods
    // after the slice's own start (y < width / p). Then, per slice, y0 (the first start's y), the
    // periods it spans, and whether it holds one bar per period: its n starts share a phase, span
    // n periods and have the power sums of n consecutive periods (unless duplicates and missing
    // bars that balance each other in all three sums hide in it: four of each).
    // Batch by batch of files, then merged: a group-by pays for its groups, and a batch of files
    // written over one span of time holds few (10,000 series × a month: 48 s in one group-by).
    const partial = (files: string) =>
      `SELECT code, kt, any_value(p) AS p, i, count(*) AS n, min(t) AS lo, max(t) AS hi, max(r) AS r,
         min(t % p) AS ph0, max(t % p) AS ph1, sum(y) AS s1, sum(y * y) AS s2, sum(y * y * y) AS s3
       FROM (SELECT code, kt, p, t, r, ${slice('t')} AS i, (((t - ${from}) % ${width}) // p)::${number} AS y
             FROM rows_of(${files}))
       GROUP BY code, kt, i`;
    await this.connection.run(
      `CREATE OR REPLACE TEMP TABLE a AS ${partial(this.batches[0] ?? '[]')} LIMIT 0`,
    );
    for (const files of this.batches) await this.connection.run(`INSERT INTO a ${partial(files)}`);
    await this.connection.run(
      `CREATE OR REPLACE TEMP TABLE b AS
       SELECT *, one_phase AND n = span AND s1 = ps1(y0, span) AND s2 = ps2(y0, span) AND s3 = ps3(y0, span)
         AS whole
       FROM (SELECT *, (((lo - ${from}) % ${width}) // p)::${number} AS y0, ((hi - lo) // p + 1)::${number} AS span
             FROM (SELECT code, kt, any_value(p) AS p, i, sum(n)::BIGINT AS n, min(lo) AS lo, max(hi) AS hi,
                     max(r) AS r, min(ph0) = max(ph1) AS one_phase, sum(s1)::${number} AS s1,
                     sum(s2)::${number} AS s2, sum(s3)::${number} AS s3
                   FROM a GROUP BY code, kt, i))`,
    );
  }

  /** Table `v`: the slices that are not whole, each with the one run of missing bars it holds, if that is all. */
  async #findMissingRuns(): Promise<void> {
    // A slice that is not whole holds one run of k missing bars and nothing else when its starts
    // share a phase, span n + k periods, and what the full span's sums exceed theirs by are the
    // sums of k consecutive periods strictly inside (its first and last start are held); certain
    // as above. Nested CASEs, since DuckDB evaluates a branch only for the rows that reach it: the
    // run's sums are taken only once it lies inside the slice, so they stay as small as the slice's.
    await this.connection.run(
      `CREATE OR REPLACE TEMP TABLE v AS
       SELECT code, kt, i, p, lo, hi, k,
         CASE WHEN k >= 1 AND (m1 - k * (k - 1) // 2) % k = 0 THEN
           CASE WHEN r0 > y0 AND r0 + k < y0 + span THEN
             CASE WHEN m2 = ps2(r0, k) AND m3 = ps3(r0, k) THEN r0 - y0 END
           END
         END AS gap_at
       FROM (SELECT *, CASE WHEN k >= 1 THEN (m1 - k * (k - 1) // 2) // k END AS r0
             FROM (SELECT *, span - n AS k, ps1(y0, span) - s1 AS m1, ps2(y0, span) - s2 AS m2,
                     ps3(y0, span) - s3 AS m3
                   FROM b WHERE n > 1 AND NOT coalesce(whole, false) AND p IS NOT NULL AND one_phase)
             UNION ALL BY NAME
             SELECT * FROM b WHERE n > 1 AND NOT coalesce(whole, false) AND (p IS NULL OR NOT one_phase))`,
    );
  }

  /** Per series, in order, the consecutive starts that are not one period apart (a == z: a duplicate). */
  async #breaks({ from, width }: SliceGrid): Promise<DuckDBResultReader> {
    const slice = (t: string) => sliceSql(t, from, width);
    // Consecutive starts not one period apart: across slices from the aggregates, inside a slice
    // from its single missing run, else from its rows (read only for those slices and the span of
    // time they cover, so a time-ordered dataset skips most of its row groups).
    const [[scanFrom, scanTo] = []] = (
      await this.connection.runAndReadAll(
        `SELECT min(lo)::DOUBLE, max(hi)::DOUBLE FROM v WHERE gap_at IS NULL`,
      )
    ).getRowsJS() as (number | null)[][];
    const inside =
      scanFrom === null || scanFrom === undefined
        ? ''
        : `UNION ALL SELECT code, kt, p, lag(t) OVER (PARTITION BY code, kt, i ORDER BY t) AS a, t AS z
           FROM (SELECT code, kt, p, ${slice('t')} AS i, t FROM k WHERE t >= ${scanFrom} AND t <= ${scanTo}) x
           SEMI JOIN (SELECT * FROM v WHERE gap_at IS NULL) w ON x.code = w.code AND x.kt = w.kt AND x.i = w.i`;
    return this.connection.runAndReadAll(
      `SELECT code, kt, a::DOUBLE, z::DOUBLE FROM (
         SELECT code, kt, p, lag(hi) OVER (PARTITION BY code, kt ORDER BY i) AS a, lo AS z FROM b
         UNION ALL SELECT code, kt, p, lo + (gap_at - 1) * p, lo + (gap_at + k) * p FROM v WHERE gap_at IS NOT NULL
         ${inside})
       WHERE a IS NOT NULL AND (p IS NULL OR z - a <> p)
       ORDER BY code, kt, z, a`,
    );
  }

  /** The series with the gaps that cross the window's edges, cut to the window, added. */
  async #withEdgeGaps(
    series: ScannedSeries[],
    haltsOf: ReadonlyMap<string, readonly DatasetHalt[]>,
  ): Promise<ScannedSeries[]> {
    const edges = await this.#edges();
    return series.map((s) => {
      const edge = edges.get(`${s.code}\u0000${s.klineType}`);
      if (edge === undefined) return s;
      const halts = haltsOf.get(s.code) ?? [];
      const before = edgeGap(s.code, s.klineType, edge.before, s.firstMs, halts, this.window);
      const after = edgeGap(s.code, s.klineType, s.lastMs, edge.after, halts, this.window);
      return {
        ...s,
        gaps: [...(before === undefined ? [] : [before]), ...s.gaps, ...(after === undefined ? [] : [after])],
      };
    });
  }

  /**
   * Per series (`code\u0000klineType`), the last start before the window and the first at or after
   * its end: a gap between one of them and the window's own bars crosses the edge.
   */
  async #edges(): Promise<Map<string, { before: number | undefined; after: number | undefined }>> {
    const out = new Map<string, { before: number | undefined; after: number | undefined }>();
    const { fromMs, toMs } = this.window;
    if (fromMs === undefined && toMs === undefined) return out;
    const result = await this.connection.runAndReadAll(
      `SELECT code, kt, ${fromMs === undefined ? 'NULL' : `max(t) FILTER (WHERE t < ${Math.trunc(fromMs)})`}::DOUBLE,
         ${toMs === undefined ? 'NULL' : `min(t) FILTER (WHERE t >= ${Math.trunc(toMs)})`}::DOUBLE
       FROM k_all GROUP BY code, kt`,
    );
    const [codes, types, befores, afters] = columnsOf(result) as [
      string[],
      number[],
      (number | null)[],
      (number | null)[],
    ];
    for (let i = 0; i < codes.length; i++)
      out.set(`${codes[i]!}\u0000${types[i]!}`, {
        before: befores[i] ?? undefined,
        after: afters[i] ?? undefined,
      });
    return out;
  }

  /**
   * Candles of these series: one per bar of the series' own period, the newest `maxCandles` of
   * each (see `candlesOf`); at most that many rows per series reach JavaScript, however many bars
   * it holds.
   */
  async candles(
    series: readonly { readonly code: string; readonly klineType: KlineType }[],
    maxCandles: number,
  ): Promise<Map<string, CandleList>> {
    const out = new Map<string, CandleList>();
    if (series.length === 0) return out;
    const wanted = series.map((s) => `(${sqlString(s.code)}, ${s.klineType})`);
    const result = await this.connection.runAndReadAll(
      `SELECT code, kt, (t // 1000)::DOUBLE, arg_min(open, t), max(high), min(low), arg_max(close, t),
         sum(coalesce(volume, 0))
       FROM (SELECT k.* FROM k JOIN (VALUES ${wanted.join(', ')}) w(code, kt) ON k.code = w.code AND k.kt = w.kt)
       GROUP BY code, kt, t
       QUALIFY row_number() OVER (PARTITION BY code, kt ORDER BY t DESC) <= ${Math.max(1, Math.trunc(maxCandles))}
       ORDER BY code, kt, t`,
    );
    const [codes, types, starts, opens, highs, lows, closes, volumes] = columnsOf(result) as [
      string[],
      number[],
      ...number[][],
    ];
    for (let i = 0; i < codes.length; i++) {
      const key = `${codes[i]!}\u0000${types[i]!}`;
      let list = out.get(key);
      if (list === undefined)
        out.set(key, (list = { candleMs: periodOf(types[i] as KlineType), candles: [] }));
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

/** The scanned series from the totals and the break pairs (both in series order). */
function scannedSeriesOf(
  totals: DuckDBResultReader,
  pairs: DuckDBResultReader,
  haltsOf: ReadonlyMap<string, readonly DatasetHalt[]>,
  gridOf: (klineType: KlineType) => HeatmapGrid,
): ScannedSeries[] {
  const [codes, types, periods, rows, firsts, lasts, reads] = columnsOf(totals) as TotalsColumns;
  const [pairCodes, pairTypes, pairFrom, pairTo] = columnsOf(pairs) as PairColumns;
  const out: ScannedSeries[] = [];
  let p = 0; // cursor into the pairs, in the same order as the series
  for (let s = 0; s < codes.length; s++) {
    const code = codes[s]!;
    const klineType = types[s]!;
    if (!isKlineType(klineType)) continue;
    const gaps: SeriesGap[] = [];
    const breaks: [number, number][] = [];
    let duplicates = 0;
    const calendar = calendarOf(code);
    const codeHalts = haltsOf.get(code) ?? [];
    for (; p < pairCodes.length && pairCodes[p] === code && pairTypes[p] === klineType; p++) {
      const a = pairFrom[p]!;
      const z = pairTo[p]!;
      if (a === z) duplicates++;
      else {
        breaks.push([a, z]);
        const gap = unexplainedGap(code, klineType, a, z, codeHalts, calendar);
        if (gap !== undefined) gaps.push(gap);
      }
    }
    out.push({
      code,
      klineType,
      rows: rows[s]!,
      firstMs: firsts[s]!,
      lastMs: lasts[s]!,
      lastReadMs: reads[s] ?? undefined,
      duplicates,
      gaps,
      heldBuckets: heldBucketsOf(
        klineType,
        firsts[s]!,
        lasts[s]!,
        periods[s] ?? undefined,
        breaks,
        gridOf(klineType),
      ),
    });
  }
  return out;
}

/** A slice of the scan: rows are aggregated per `width` ms from `from`, power sums in `number`. */
interface SliceGrid {
  readonly from: number;
  readonly width: number;
  readonly number: 'BIGINT' | 'HUGEINT';
}

/** The SQL of the slice index of start `t`. */
function sliceSql(t: string, from: number, width: number): string {
  return `(${t} - ${from}) // ${width}`;
}

/**
 * The gap between a bar outside the scan's window and the window's first or last bar (`a < z`),
 * cut to the window: the part of a gap crossing an edge that lies inside.
 */
function edgeGap(
  code: string,
  klineType: KlineType,
  a: number | undefined,
  z: number | undefined,
  halts: readonly DatasetHalt[],
  window: { readonly fromMs?: number; readonly toMs?: number },
): SeriesGap | undefined {
  if (a === undefined || z === undefined) return undefined;
  const gap = unexplainedGap(code, klineType, a, z, halts, calendarOf(code));
  return gap === undefined
    ? undefined
    : clipGap(code, klineType, gap, window.fromMs ?? -Infinity, window.toMs ?? Infinity);
}

/** Rows per batch of files aggregated at once (see {@link KlineScan.series}). */
const BATCH_ROWS = 16 * 1024 * 1024;

/** Slices of its span a series is aggregated in (see {@link KlineScan.series}). */
const SLICES = 120;

/** The shortest fixed bar period (ms). */
const SHORTEST_PERIOD_MS = Math.min(
  ...Object.values(KLINE_PERIOD_MS).filter((ms): ms is number => typeof ms === 'number'),
);

/**
 * Runs `[first, last]` of the heatmap buckets a series holds bars in, from its first and last
 * start and its breaks (consecutive starts not one period apart, in order): between breaks it
 * holds a start every period. Without a fixed period every start is the end of a break.
 */
function heldBucketsOf(
  klineType: KlineType,
  firstMs: number,
  lastMs: number,
  periodMs: number | undefined,
  breaks: readonly (readonly [number, number])[],
  grid: HeatmapGrid,
): [number, number][] {
  const runs: [number, number][] = [];
  const hold = (first: number, last: number) => {
    const lo = Math.max(0, first);
    const hi = Math.min(grid.buckets - 1, last);
    if (lo > hi) return;
    const previous = runs[runs.length - 1];
    if (previous !== undefined && lo <= previous[1] + 1) previous[1] = Math.max(previous[1], hi);
    else runs.push([lo, hi]);
  };
  const bucketOf = (ms: number) => Math.floor((ms - grid.fromMs) / grid.bucketMs);
  // A bar holds every bucket it covers, by its own period (coverage's barEndMs).
  const bar = (t: number) => hold(bucketOf(t), bucketOf(barEndMs(klineType, t) - 1));
  const segment = (start: number, end: number) => {
    if (periodMs === undefined) {
      bar(start);
      bar(end);
    } else hold(bucketOf(start), bucketOf(end + periodMs - 1));
  };
  let start = firstMs;
  for (const [a, z] of breaks) {
    segment(start, a);
    start = z;
  }
  segment(start, lastMs);
  return runs;
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
