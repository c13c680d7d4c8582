/**
 * K-line sync into a Parquet dataset: history first, then live through /batch-kline, closed bars
 * written exactly once; a state file makes a restart continue without gap or duplicate.
 *
 *   QUOTEFLOW_BASE_URL=http://127.0.0.1:8080 QUOTEFLOW_TOKEN=demo QUOTEFLOW_PLAN=professional pnpm start
 */
import { pathToFileURL } from 'node:url';
import { QuoteflowClient, type Clock, type KlineType, type Plan } from '@quoteflow/core';
import { klineSync, type KlineSyncSummary } from '@quoteflow/pipelines';

export interface Options {
  readonly baseUrl: string;
  readonly token: string;
  readonly plan: Plan;
  readonly out: string;
  readonly codes?: readonly string[];
  readonly klineTypes?: readonly KlineType[];
  /** How long to sync, in `clock`'s time. */
  readonly durationMs?: number;
  /** Files flushed and state written this often, in `clock`'s time. @defaultValue 2,000 ms */
  readonly checkpointMs?: number;
  /**
   * The clock of the client and the pipeline (a test's accelerated one, shared with its simulator).
   * @defaultValue the system clock
   */
  readonly clock?: Clock;
}

export async function main(o: Options): Promise<KlineSyncSummary> {
  const client = new QuoteflowClient({
    baseUrl: o.baseUrl,
    token: o.token,
    plan: o.plan,
    ...(o.clock === undefined ? {} : { clock: o.clock }),
  });
  const sync = klineSync({
    client,
    codes: o.codes ?? ['BTCUSDT', 'ETHUSDT', 'AAPL.US'],
    klineTypes: o.klineTypes ?? [1, 5],
    bars: 200,
    files: { dir: o.out, format: 'parquet' },
    statePath: `${o.out}/state.json`,
    checkpointMs: o.checkpointMs ?? 2_000,
  });
  const timer = client.clock.setTimeout(() => void sync.stop(), o.durationMs ?? 30_000);
  process.once('SIGINT', () => void sync.stop());
  try {
    return await sync.done; // flushed and state written
  } finally {
    client.clock.clearTimeout(timer);
    await client.close();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const summary = await main({
    baseUrl: process.env['QUOTEFLOW_BASE_URL'] ?? 'http://127.0.0.1:8080',
    token: process.env['QUOTEFLOW_TOKEN'] ?? 'demo',
    plan: (process.env['QUOTEFLOW_PLAN'] ?? 'professional') as Plan,
    out: process.env['OUT'] ?? './kline-data',
  });
  console.log(`${summary.closedBars} closed bars in ${summary.fileCount} files`);
}
