/**
 * Compose it yourself, exactly once: K-line bars of a universe from the service into a Parquet
 * dataset and a Kafka topic, built from the library's public pieces (the `klineUpdates` source,
 * the `commitTo` operator, the `DatasetSink` and `KafkaKlineSink` committing sinks). Kill it at
 * any moment and start it again: neither the files nor a `read_committed` consumer of the topic
 * gets a closed bar twice or misses one, because each sink commits its bars with its own
 * watermarks and the source resumes from them.
 *
 *   QUOTEFLOW_BASE_URL=http://127.0.0.1:8080 QUOTEFLOW_TOKEN=demo KAFKA_BROKERS=127.0.0.1:9092 \
 *     OUT=./data pnpm start        # SIGINT/SIGTERM stops it: every sink commits, then it exits
 */
import { pathToFileURL } from 'node:url';
import { QuoteflowClient, type KlineType, type Plan } from '@quoteflow/core';
import { klineUpdates } from '@quoteflow/pipelines';
import { commitTo, DatasetSink, KafkaKlineSink } from '@quoteflow/sinks';
import { fromEvent, merge, takeUntil, timer } from 'rxjs';

export interface Options {
  readonly baseUrl: string;
  readonly token: string;
  readonly plan: Plan;
  readonly brokers: string;
  readonly topicPrefix: string;
  /** The dataset directory. */
  readonly out: string;
  readonly codes: readonly string[];
  readonly klineTypes: readonly KlineType[];
  readonly bars: number;
  /** Stops by itself after this long (ms); otherwise on SIGINT/SIGTERM only. */
  readonly durationMs?: number;
}

/** Runs until stopped; resolves once every sink committed what it took. */
export async function main(o: Options): Promise<void> {
  const client = new QuoteflowClient({ baseUrl: o.baseUrl, token: o.token, plan: o.plan });
  const files = await DatasetSink.open({ dir: o.out });
  const kafka = await KafkaKlineSink.open({
    brokers: o.brokers,
    topicPrefix: o.topicPrefix,
    // Stable across restarts of this program: a restart fences the dead one's open transaction.
    transactionalId: `compose-example.${o.topicPrefix}`,
  });
  const sinks = [files, kafka];
  const stop$ = merge(
    fromEvent(process, 'SIGINT'),
    fromEvent(process, 'SIGTERM'),
    ...(o.durationMs === undefined ? [] : [timer(o.durationMs)]),
  );
  try {
    await new Promise<void>((resolve, reject) =>
      klineUpdates(client, { codes: o.codes, klineTypes: o.klineTypes, bars: o.bars, resumeFrom: sinks })
        .pipe(takeUntil(stop$), commitTo(sinks))
        .subscribe({
          next: (c) => console.error(`${c.sink}: ${c.closedBars} closed bars committed`),
          error: reject,
          complete: resolve,
        }),
    );
  } finally {
    await Promise.all(sinks.map((s) => s.close()));
    await client.close();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const env = process.env;
  await main({
    baseUrl: env['QUOTEFLOW_BASE_URL'] ?? 'http://127.0.0.1:8080',
    token: env['QUOTEFLOW_TOKEN'] ?? 'demo',
    plan: (env['QUOTEFLOW_PLAN'] ?? 'professional') as Plan,
    brokers: env['KAFKA_BROKERS'] ?? '127.0.0.1:9092',
    topicPrefix: env['TOPIC_PREFIX'] ?? 'md',
    out: env['OUT'] ?? './data',
    codes: (env['CODES'] ?? 'BTCUSDT,ETHUSDT,AAPL.US').split(','),
    klineTypes: [1],
    bars: Number(env['BARS'] ?? 500),
    ...(env['DURATION_MS'] === undefined ? {} : { durationMs: Number(env['DURATION_MS']) }),
  });
}
