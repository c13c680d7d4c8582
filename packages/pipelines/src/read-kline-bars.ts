import { isKlineType, type Bar, type KlineType } from '@quoteflow/core';
import { epochMsOf, forEachKlineRow, listDataFiles } from '@quoteflow/sinks/internal';

/** One row of a kline dataset, as {@link readKlineBars} returns it: a bar's values as written. */
export type DatasetBar = Pick<
  Bar,
  'code' | 'klineType' | 'tsMs' | 'open' | 'high' | 'low' | 'close' | 'volume' | 'turnover'
> & {
  /** When the request that returned the bar's values was sent (epoch ms), if the file says. */
  readonly readAtMs: number | undefined;
};

/** Which rows {@link readKlineBars} returns. */
export interface ReadKlineBarsOptions {
  readonly codes?: readonly string[];
  readonly klineTypes?: readonly KlineType[];
  /** Bars starting at or after this instant (epoch ms). */
  readonly fromMs?: number;
  /** Bars starting before this instant (epoch ms). */
  readonly toMs?: number;
}

const MONTH = /(?:^|\/)month=(\d{4})-(\d{2})(?:\/|$)/;
const TYPE = /(?:^|\/)kline_type=(\d+)(?:\/|$)/;

/**
 * The rows of the kline dataset under `dir` (Parquet, Arrow IPC or NDJSON files, the contract's
 * Hive layout), filtered, sorted by code, kline type and start. Files of other kline types or of
 * months outside the range are not opened. No request is made.
 *
 * @example
 * ```ts
 * const bars = await readKlineBars('./data', { codes: ['BTCUSDT'], klineTypes: [1] });
 * ```
 */
export async function readKlineBars(dir: string, options: ReadKlineBarsOptions = {}): Promise<DatasetBar[]> {
  const codes = options.codes === undefined ? undefined : new Set(options.codes);
  const types = options.klineTypes === undefined ? undefined : new Set<number>(options.klineTypes);
  const fromMs = options.fromMs ?? Number.NEGATIVE_INFINITY;
  const toMs = options.toMs ?? Number.POSITIVE_INFINITY;
  const out: DatasetBar[] = [];
  for (const { rel, type } of await filesOf(dir, types, fromMs, toMs)) {
    await forEachKlineRow(dir, rel, (code, tsMs, value) => {
      if ((codes !== undefined && !codes.has(code)) || tsMs < fromMs || tsMs >= toMs) return;
      out.push({
        code,
        klineType: type,
        tsMs,
        open: Number(value('open')),
        high: Number(value('high')),
        low: Number(value('low')),
        close: Number(value('close')),
        volume: numberOrNull(value('volume')),
        turnover: numberOrNull(value('turnover')),
        readAtMs: readAt(value('read_at')),
      });
    });
  }
  return out.sort((a, b) =>
    a.code !== b.code ? (a.code < b.code ? -1 : 1) : a.klineType - b.klineType || a.tsMs - b.tsMs,
  );
}

const numberOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

function readAt(v: unknown): number | undefined {
  const ms = epochMsOf(v);
  return Number.isFinite(ms) ? ms : undefined;
}

/** One series' bar starts (ascending) and when its newest values were read, as {@link readSeriesStarts} returns them. */
export interface SeriesStarts {
  readonly code: string;
  readonly klineType: KlineType;
  /** Bar starts, epoch ms, ascending. */
  readonly starts: number[];
  /** The latest `read_at` of its rows (epoch ms), if the files say. */
  lastReadMs: number | undefined;
}

/**
 * Per (code, kline type) of the kline dataset under `dir`: the bar starts and the latest read
 * instant, decoding only the `code`, `ts` and `read_at` columns (no row objects): what a
 * coverage view or a freshness table needs, at a fraction of {@link readKlineBars}' memory.
 * Keyed by `code + "\u0000" + klineType`. No request is made.
 */
export async function readSeriesStarts(
  dir: string,
  options: ReadKlineBarsOptions = {},
): Promise<Map<string, SeriesStarts>> {
  const codes = options.codes === undefined ? undefined : new Set(options.codes);
  const types = options.klineTypes === undefined ? undefined : new Set<number>(options.klineTypes);
  const fromMs = options.fromMs ?? Number.NEGATIVE_INFINITY;
  const toMs = options.toMs ?? Number.POSITIVE_INFINITY;
  const out = new Map<string, SeriesStarts>();
  for (const { rel, type } of await filesOf(dir, types, fromMs, toMs)) {
    await forEachKlineRow(
      dir,
      rel,
      (code, tsMs, value) => {
        if ((codes !== undefined && !codes.has(code)) || tsMs < fromMs || tsMs >= toMs) return;
        const key = `${code}\u0000${type}`;
        let series = out.get(key);
        if (series === undefined)
          out.set(key, (series = { code, klineType: type, starts: [], lastReadMs: undefined }));
        series.starts.push(tsMs);
        const read = readAt(value('read_at'));
        if (read !== undefined && (series.lastReadMs === undefined || read > series.lastReadMs))
          series.lastReadMs = read;
      },
      ['read_at'],
    );
  }
  for (const series of out.values()) series.starts.sort((a, b) => a - b);
  return out;
}

/** The kline files under `dir` of the wanted types whose month can hold bars in `[fromMs, toMs)`. */
async function filesOf(
  dir: string,
  types: ReadonlySet<number> | undefined,
  fromMs: number,
  toMs: number,
): Promise<{ rel: string; type: KlineType }[]> {
  const files: { rel: string; type: KlineType }[] = [];
  for (const rel of await listDataFiles(dir, 'kline')) {
    const type = Number(TYPE.exec(rel)?.[1]);
    if (!isKlineType(type) || (types !== undefined && !types.has(type))) continue;
    const month = MONTH.exec(rel);
    if (month !== null) {
      const start = Date.UTC(Number(month[1]), Number(month[2]) - 1, 1);
      const end = Date.UTC(Number(month[1]), Number(month[2]), 1);
      if (end <= fromMs || start >= toMs) continue;
    }
    files.push({ rel, type });
  }
  return files;
}
