/**
 * KafkaKlineSink, exactly once (transactions + watermark records) against at least once (the
 * idempotent producer), same run, same broker, same driving loop: bars per second, the commit time
 * of each checkpoint (watermark records + EndTxn, p50/p95) and of the whole checkpoint() call, and
 * what open() costs (connect, InitProducerId, reading the watermark topic back read_committed) and
 * refresh() (the read alone) with many series committed, beside a kafkajs consumer joining a new
 * group to read the same topic (the test broker's group.initial.rebalance.delay.ms is 0; a broker's
 * default, 3 s, adds that much to it). Target: exactly once >= 0.8x at least once.
 *
 * The loop writes final bars of 500 series (and a forming update per 4 finals) in slices of 1,000
 * records, checkpoints every `checkpointEveryMs` (1 s, the default) and waits for acknowledgements
 * (`flush`) whenever half of `maxBufferedRecords` is unacknowledged.
 *
 * Run: `pnpm bench kafka` (with kafka.bench.ts) or `pnpm bench kafka-kline` (this one only). Uses the
 * cluster in `KAFKA_BROKERS`, else starts a broker with scripts/kafka/broker.sh (instance
 * `.cache/kafka/instances/bench-kline`) and stops it. `KAFKA_KLINE_BENCH_BARS` (default 200000),
 * `KAFKA_KLINE_BENCH_ROUNDS` (default 3) and `KAFKA_KLINE_BENCH_DRIVERS` (default kafkajs,platformatic).
 */
import { randomBytes } from 'node:crypto';
import type { BarUpdate } from '@quoteflow/core';
import {
  KAFKA_KLINE_SINK_DEFAULTS,
  KafkaKlineSink,
  type KafkaDelivery,
  type KafkaDriverName,
} from '@quoteflow/sinks';
import kafkajs from 'kafkajs';
import { benchBroker } from './bench-broker.js';

const N = Number(process.env['KAFKA_KLINE_BENCH_BARS'] ?? 200_000);
const ROUNDS = Number(process.env['KAFKA_KLINE_BENCH_ROUNDS'] ?? 3);
const DRIVERS = (process.env['KAFKA_KLINE_BENCH_DRIVERS'] ?? 'kafkajs,platformatic').split(
  ',',
) as KafkaDriverName[];
const SERIES = 500;
const SLICE = 1_000;
const PARTITIONS = 6;
const OPEN_SERIES = [500, 10_000];

const broker = benchBroker('bench-kline');
const brokers = broker.brokers;

const T0 = Date.UTC(2026, 0, 5);
const codes = Array.from({ length: SERIES }, (_, i) => `K${i}.US`);
/** Record `n` of the stream: a final bar, or every 5th a forming update of the next one. */
function record(n: number): BarUpdate {
  const code = codes[n % SERIES]!;
  const i = Math.floor(n / SERIES);
  const forming = n % 5 === 4;
  const price = 100 + (n % 97) / 8;
  return {
    type: 'bar-update',
    code,
    klineType: 1,
    tsMs: T0 + (forming ? i + 1 : i) * 60_000,
    open: price,
    high: price + 0.5,
    low: price - 0.5,
    close: price + 0.25,
    volume: 1_000 + i,
    turnover: (1_000 + i) * price,
    readAtMs: T0 + (i + 1) * 60_000 + 500,
    receivedAtMs: T0 + (i + 1) * 60_000 + 520,
    final: !forming,
    revision: forming ? 0 : 1,
  };
}
const stream = Array.from({ length: N }, (_, n) => record(n));

const open = (driver: KafkaDriverName, delivery: KafkaDelivery, prefix: string): Promise<KafkaKlineSink> =>
  KafkaKlineSink.open({
    brokers,
    driver,
    delivery,
    topicPrefix: prefix,
    clientId: 'qf-bench',
    partitions: PARTITIONS,
    ...(delivery === 'exactly-once' ? { transactionalId: `${prefix}-w1` } : {}),
  });

interface Run {
  readonly seconds: number;
  readonly commitMs: number[];
  readonly checkpointMs: number[];
}

async function run(driver: KafkaDriverName, delivery: KafkaDelivery): Promise<Run> {
  const prefix = `qfb-kline-${delivery === 'exactly-once' ? 'eos' : 'alo'}-${randomBytes(3).toString('hex')}`;
  const sink = await open(driver, delivery, prefix);
  const commitMs: number[] = [];
  const checkpointMs: number[] = [];
  const checkpoint = async (): Promise<void> => {
    const c0 = performance.now();
    await sink.checkpoint();
    checkpointMs.push(performance.now() - c0);
    const last = sink.stats().lastCommitMs;
    if (delivery === 'exactly-once' && last !== undefined) commitMs.push(last);
  };
  const t0 = performance.now();
  let lastCheckpoint = t0;
  for (let n = 0; n < N; n += SLICE) {
    for (let k = n; k < Math.min(N, n + SLICE); k++) sink.write(stream[k]!);
    if (sink.stats().buffered > KAFKA_KLINE_SINK_DEFAULTS.maxBufferedRecords / 2) await sink.flush();
    if (performance.now() - lastCheckpoint >= sink.checkpointEveryMs) {
      await checkpoint();
      lastCheckpoint = performance.now();
    }
    // Let the sink's batches go out between slices, as a pipeline's event loop would.
    await new Promise((resolve) => setImmediate(resolve));
  }
  await checkpoint();
  const seconds = (performance.now() - t0) / 1000;
  const stats = sink.stats();
  await sink.close();
  if (stats.committed !== N - N / 5)
    throw new Error(`${driver} ${delivery}: ${stats.committed} bars committed of ${N - N / 5}`);
  return { seconds, commitMs, checkpointMs };
}

/**
 * open() of a sink whose watermark topic holds `series` series, its refresh() (the read alone), and
 * a kafkajs consumer in a new group reading that topic.
 */
async function openCost(
  driver: KafkaDriverName,
  series: number,
): Promise<{ openMs: number; refreshMs: number; groupMs: number }> {
  const prefix = `qfb-kline-open-${randomBytes(3).toString('hex')}`;
  const writer = await open(driver, 'exactly-once', prefix);
  for (let n = 0; n < series; n++) writer.write({ ...record(0), code: `K${n}.US` });
  await writer.checkpoint();
  await writer.close();
  const t0 = performance.now();
  const sink = await open(driver, 'exactly-once', prefix);
  const openMs = performance.now() - t0;
  if (sink.watermarks()?.size !== series)
    throw new Error(`open read ${sink.watermarks()?.size} of ${series} series`);
  const r0 = performance.now();
  await sink.refresh();
  const refreshMs = performance.now() - r0;
  await sink.close();

  const g0 = performance.now();
  const consumer = new kafkajs.Kafka({
    brokers: brokers.split(','),
    logLevel: kafkajs.logLevel.NOTHING,
  }).consumer({
    groupId: `${prefix}-reader`,
  });
  await consumer.connect();
  await consumer.subscribe({ topics: [`${prefix}.kline.watermarks`], fromBeginning: true });
  let read = 0;
  await new Promise<void>((resolve) => {
    void consumer.run({
      eachMessage: async () => {
        if (++read === series) resolve();
      },
    });
  });
  const groupMs = performance.now() - g0;
  await consumer.disconnect();
  return { openMs, refreshMs, groupMs };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const quantile = (xs: number[], q: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
const ms = (n: number): string => (n < 10 ? n.toFixed(1) : fmt(n));

try {
  console.log(
    `${fmt(N)} K-line records (${fmt(N - N / 5)} final bars, ${SERIES} series), ${PARTITIONS} partitions, gzip, a checkpoint every ${KAFKA_KLINE_SINK_DEFAULTS.checkpointEveryMs} ms, median of ${ROUNDS} rounds (interleaved); broker ${broker.startedHere ? 'started by the bench' : brokers}\n`,
  );
  console.log(
    '| driver | delivery | bars/s | vs at least once | commit p50 / p95 | checkpoint() p50 / p95 | checkpoints |',
  );
  console.log('|---|---|---:|---:|---:|---:|---:|');
  for (const driver of DRIVERS) {
    const runs = new Map<KafkaDelivery, Run[]>([
      ['at-least-once', []],
      ['exactly-once', []],
    ]);
    for (let r = 0; r < ROUNDS; r++) {
      for (const delivery of runs.keys()) {
        (globalThis as { gc?: () => void }).gc?.();
        runs.get(delivery)!.push(await run(driver, delivery));
      }
    }
    const rate = (d: KafkaDelivery): number => (N - N / 5) / median(runs.get(d)!.map((x) => x.seconds));
    for (const [delivery, rs] of runs) {
      const commits = rs.flatMap((x) => x.commitMs);
      const cps = rs.flatMap((x) => x.checkpointMs);
      const commit =
        commits.length === 0 ? '-' : `${ms(quantile(commits, 0.5))} / ${ms(quantile(commits, 0.95))} ms`;
      console.log(
        `| ${driver} | ${delivery} | ${fmt(rate(delivery))} | ${(rate(delivery) / rate('at-least-once')).toFixed(2)}x | ${commit} | ${ms(quantile(cps, 0.5))} / ${ms(quantile(cps, 0.95))} ms | ${cps.length} |`,
      );
    }
  }
  console.log(
    '\nopen() (exactly once): connect, InitProducerId, read the watermark topic back read_committed\n',
  );
  console.log(
    '| driver | series in the watermark topic | open() | refresh() (the read alone) | a kafkajs consumer, new group, reading the topic |',
  );
  console.log('|---|---:|---:|---:|---:|');
  for (const driver of DRIVERS) {
    for (const series of OPEN_SERIES) {
      const costs = [];
      for (let r = 0; r < ROUNDS; r++) costs.push(await openCost(driver, series));
      console.log(
        `| ${driver} | ${fmt(series)} | ${fmt(median(costs.map((c) => c.openMs)))} ms | ${fmt(median(costs.map((c) => c.refreshMs)))} ms | ${fmt(median(costs.map((c) => c.groupMs)))} ms |`,
      );
    }
  }
} finally {
  broker.stop();
}
