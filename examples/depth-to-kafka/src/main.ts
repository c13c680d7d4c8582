/**
 * Depth to Kafka: poll order books at the plan's pace, drop repeated `seq`, produce each new tick
 * to `<prefix>.depth` keyed by product code (idempotent producer, acks=all).
 *
 *   QUOTEFLOW_BASE_URL=http://127.0.0.1:8080 QUOTEFLOW_TOKEN=demo KAFKA_BROKERS=127.0.0.1:9092 pnpm start
 */
import { pathToFileURL } from 'node:url';
import { QuoteflowClient, type Clock, type Plan } from '@quoteflow/core';
import { depthCapture, type DepthCaptureSummary } from '@quoteflow/pipelines';

export interface Options {
  readonly baseUrl: string;
  readonly token: string;
  readonly plan: Plan;
  readonly brokers: string;
  readonly topicPrefix?: string;
  readonly codes?: readonly string[];
  /** How long to capture, in `clock`'s time. */
  readonly durationMs?: number;
  /** The clock of the client and of the duration (a test's accelerated one, shared with its simulator). */
  readonly clock?: Clock;
}

export async function main(o: Options): Promise<DepthCaptureSummary> {
  const client = new QuoteflowClient({
    baseUrl: o.baseUrl,
    token: o.token,
    plan: o.plan,
    ...(o.clock === undefined ? {} : { clock: o.clock }),
  });
  const capture = depthCapture({
    client,
    codes: o.codes ?? ['BTCUSDT', 'ETHUSDT', '700.HK', 'AAPL.US'],
    kafka: { brokers: o.brokers, topicPrefix: o.topicPrefix ?? 'quoteflow' },
  });
  const timer = client.clock.setTimeout(() => void capture.stop(), o.durationMs ?? 60_000);
  try {
    return await capture.done; // every tick acknowledged by the broker
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
    brokers: process.env['KAFKA_BROKERS'] ?? '127.0.0.1:9092',
  });
  console.log(
    `${summary.ticks} ticks produced (${summary.repeated} repeated dropped) in ${summary.polls} polls`,
  );
}
