/**
 * Research on the Parquet dataset with DuckDB: sync a few series, then ask DuckDB for daily
 * returns and realised volatility straight from the Hive-partitioned files (no import step).
 *
 *   QUOTEFLOW_BASE_URL=http://127.0.0.1:8080 QUOTEFLOW_TOKEN=demo pnpm start
 */
import { pathToFileURL } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { QuoteflowClient, type Plan } from '@quoteflow/core';
import { klineSync } from '@quoteflow/pipelines';

export interface Options {
  readonly baseUrl: string;
  readonly token: string;
  readonly plan: Plan;
  readonly out: string;
  readonly codes?: readonly string[];
}

export interface CodeStats {
  readonly code: string;
  readonly days: number;
  readonly firstDay: string;
  readonly lastDay: string;
  readonly totalReturnPct: number;
  readonly dailyVolPct: number;
}

/** Backfills 250 daily bars per code into `out`, then computes per-code statistics with DuckDB. */
export async function main(o: Options): Promise<CodeStats[]> {
  const client = new QuoteflowClient({ baseUrl: o.baseUrl, token: o.token, plan: o.plan });
  try {
    await klineSync({
      client,
      codes: o.codes ?? ['BTCUSDT', 'ETHUSDT', 'AAPL.US', '700.HK'],
      klineTypes: [8],
      bars: 250,
      files: { dir: o.out },
      live: false,
    }).done;
  } finally {
    await client.close();
  }
  const db = await DuckDBInstance.create(':memory:');
  const con = await db.connect();
  try {
    // The partition directories' files: not the Delta checkpoints in `kline/_delta_log/`.
    const glob = `${o.out.replaceAll("'", "''")}/kline/kline_type=*/**/*.parquet`;
    const reader = await con.runAndReadAll(`
      WITH bars AS (
        SELECT code, ts, close FROM read_parquet('${glob}', hive_partitioning = true) WHERE kline_type = 8
      ), r AS (
        SELECT code, ts, close, ln(close / lag(close) OVER (PARTITION BY code ORDER BY ts)) AS lr FROM bars
      )
      SELECT code, count(*)::INTEGER AS days, strftime(min(ts), '%Y-%m-%d') AS first_day, strftime(max(ts), '%Y-%m-%d') AS last_day,
             round((arg_max(close, ts) / arg_min(close, ts) - 1) * 100, 2)::DOUBLE AS total_return_pct,
             round(stddev_samp(lr) * 100, 3)::DOUBLE AS daily_vol_pct
      FROM r GROUP BY code ORDER BY code`);
    return reader.getRowObjectsJS().map((row) => ({
      code: String(row['code']),
      days: Number(row['days']),
      firstDay: String(row['first_day']),
      lastDay: String(row['last_day']),
      totalReturnPct: Number(row['total_return_pct']),
      dailyVolPct: Number(row['daily_vol_pct']),
    }));
  } finally {
    con.closeSync();
    db.closeSync();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const stats = await main({
    baseUrl: process.env['QUOTEFLOW_BASE_URL'] ?? 'http://127.0.0.1:8080',
    token: process.env['QUOTEFLOW_TOKEN'] ?? 'demo',
    plan: (process.env['QUOTEFLOW_PLAN'] ?? 'professional') as Plan,
    out: process.env['OUT'] ?? './research-data',
  });
  console.table(stats);
}
