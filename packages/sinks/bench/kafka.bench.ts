/**
 * Messages per second through the Kafka sink against the raw client with the same settings, in
 * the same run, against a real single-node Apache Kafka broker on 127.0.0.1.
 *
 * Baselines: raw kafkajs (`producer.sendBatch` of `maxBatchRecords` messages, one request in
 * flight, awaited in turn) and raw @platformatic/kafka (`producer.send`, same batching), each with
 * exactly the producer settings the sink's driver uses (idempotent, acks=all, same compression).
 * Both sides map the same depth ticks to the contract's messages (`toKafkaMessage`) inside the
 * timed part, so the difference is the sink's own cost: batching, the in-flight bound, one promise
 * per record, topic bookkeeping. Target: the sink >= 90% of the raw kafkajs rate.
 *
 * Avro against JSON: the sink's `write()` with the contract's JSON values (the default) and with
 * Avro values in the Confluent wire format (`SchemaRegistrySerializer`, its schema registered
 * before the timed part), against an Apicurio Registry the bench starts (scripts/registry) unless
 * `SCHEMA_REGISTRY_URL` names one; the mean value size of each is printed too.
 *
 * Run: `pnpm bench kafka` (builds first). Uses the cluster in `KAFKA_BROKERS`, else starts a
 * broker with scripts/kafka/broker.sh (instance `.cache/kafka/instances/bench`) and stops it.
 * `KAFKA_BENCH_MESSAGES` (default 200000) and `KAFKA_BENCH_ROUNDS` (default 3) size the run;
 * `KAFKA_BENCH_COMPRESSIONS` (default `none,gzip,lz4`) picks the codecs.
 *
 * Then, on a broker the bench started, the sink's `write()` over the SASL_SSL listener (TLS plus a
 * SCRAM-SHA-512 login) against the same over PLAINTEXT, per driver, interleaved rounds (the first
 * compression only); `KAFKA_BENCH_SECURITY=0` leaves it out.
 */
import { randomBytes } from 'node:crypto';
import { Producer } from '@platformatic/kafka';
import type { DepthTick } from '@quoteflow/core';
import {
  KAFKA_SINK_DEFAULTS,
  KafkaSink,
  SchemaRegistrySerializer,
  toKafka,
  type KafkaCompression,
  type KafkaDriverName,
  type KafkaDriverOptions,
  type KafkaValueSerializer,
} from '@quoteflow/sinks';
import { toKafkaMessage } from '@quoteflow/sinks/internal';
import kafkajs from 'kafkajs';
// The sink's own client settings (internal: their types are the clients'), so the baselines run with exactly them.
import {
  kafkajsClientConfig,
  kafkajsCompression,
  kafkajsProducerConfig,
  kafkajsTopicMessages,
} from '../src/kafka/internal/kafkajs-config.js';
import { platformaticProducerOptions } from '../src/kafka/internal/platformatic-producer-options.js';
import { benchBroker } from './bench-broker.js';
import { benchRegistry, type BenchRegistry } from './bench-registry.js';
import { from, lastValueFrom } from 'rxjs';

const N = Number(process.env['KAFKA_BENCH_MESSAGES'] ?? 200_000);
const ROUNDS = Number(process.env['KAFKA_BENCH_ROUNDS'] ?? 3);
const COMPRESSIONS = (process.env['KAFKA_BENCH_COMPRESSIONS'] ?? 'none,gzip,lz4').split(
  ',',
) as KafkaCompression[];
const PARTITIONS = 6;
const BATCH = KAFKA_SINK_DEFAULTS.maxBatchRecords;

// --- broker -------------------------------------------------------------------------------
const broker = benchBroker('bench');
const brokers = broker.brokers;

// --- data ---------------------------------------------------------------------------------
const codes = Array.from({ length: 200 }, (_, i) => `B${i}.US`);
const ticks: DepthTick[] = Array.from({ length: N }, (_, i) => ({
  type: 'depth',
  code: codes[i % codes.length]!,
  seq: BigInt(i),
  tickTimeMs: Date.UTC(2026, 10, 21) + i,
  bids: [
    { price: 100 + (i % 50) / 100, volume: 300, priceRaw: '', volumeRaw: '300' },
    { price: 99.9 + (i % 50) / 100, volume: 500, priceRaw: '', volumeRaw: '500' },
  ],
  asks: [{ price: 100.1 + (i % 50) / 100, volume: 200, priceRaw: '', volumeRaw: '200' }],
}));

const admin = new kafkajs.Kafka({
  clientId: 'qf-bench-admin',
  brokers: brokers.split(','),
  logLevel: kafkajs.logLevel.NOTHING,
}).admin();
await admin.connect();
async function freshPrefix(label: string): Promise<string> {
  const prefix = `qfb-${label}-${randomBytes(3).toString('hex')}`;
  await admin.createTopics({
    waitForLeaders: true,
    topics: [{ topic: `${prefix}.depth`, numPartitions: PARTITIONS, replicationFactor: 1 }],
  });
  return prefix;
}

const driverOptions = (compression: KafkaCompression): KafkaDriverOptions => ({
  brokers: brokers.split(','),
  clientId: 'qf-bench',
  compression,
  requestTimeoutMs: KAFKA_SINK_DEFAULTS.requestTimeoutMs,
  retryMaxDelayMs: KAFKA_SINK_DEFAULTS.retryMaxDelayMs,
  connectTimeoutMs: KAFKA_SINK_DEFAULTS.connectTimeoutMs,
  deliveryTimeoutMs: KAFKA_SINK_DEFAULTS.deliveryTimeoutMs,
});

// --- contenders: each returns the seconds its N messages took, set-up excluded -------------
type Run = (compression: KafkaCompression) => Promise<number>;

const rawKafkajs: Run = async (compression) => {
  const prefix = await freshPrefix('raw-kjs');
  const o = driverOptions(compression);
  const producer = new kafkajs.Kafka(kafkajsClientConfig(o)).producer(kafkajsProducerConfig(o));
  await producer.connect();
  const codec = kafkajsCompression(compression);
  const t0 = performance.now();
  for (let i = 0; i < N; i += BATCH) {
    const messages = ticks.slice(i, i + BATCH).map((t) => toKafkaMessage(t, prefix));
    await producer.sendBatch({
      acks: -1,
      timeout: o.requestTimeoutMs,
      compression: codec,
      topicMessages: kafkajsTopicMessages(messages),
    });
  }
  const s = (performance.now() - t0) / 1000;
  await producer.disconnect();
  return s;
};

const rawPlatformatic: Run = async (compression) => {
  const prefix = await freshPrefix('raw-plt');
  const producer = new Producer(platformaticProducerOptions(driverOptions(compression)));
  await producer.initIdempotentProducer({});
  const t0 = performance.now();
  for (let i = 0; i < N; i += BATCH) {
    const messages = ticks.slice(i, i + BATCH).map((t) => toKafkaMessage(t, prefix));
    await producer.send({ messages: messages.map((m) => ({ topic: m.topic, key: m.key, value: m.value })) });
  }
  const s = (performance.now() - t0) / 1000;
  await producer.close(true);
  return s;
};

let registry: BenchRegistry | undefined;
/** Avro values: the depth topic's schema registered under the prefix (before the timed part). */
async function avroValues(prefix: string): Promise<KafkaValueSerializer> {
  registry ??= await benchRegistry();
  return SchemaRegistrySerializer.open({ url: registry.url, topicPrefix: prefix, kinds: ['depth'] });
}

const viaSink =
  (
    driver: KafkaDriverName,
    how: 'write' | 'operator',
    values: 'json' | 'avro' = 'json',
    secured = false,
  ): Run =>
  async (compression) => {
    const prefix = await freshPrefix(`sink-${driver}-${values}`);
    const valueSerializer = values === 'avro' ? await avroValues(prefix) : undefined;
    const saslSsl = broker.saslSsl;
    const connection =
      secured && saslSsl !== undefined
        ? { brokers: saslSsl.brokers, tls: { ca: saslSsl.ca }, sasl: saslSsl.sasl }
        : { brokers };
    const sink = new KafkaSink({
      ...connection,
      driver,
      compression,
      topicPrefix: prefix,
      clientId: 'qf-bench',
      ...(valueSerializer === undefined ? {} : { valueSerializer }),
    });
    await sink.connect();
    const t0 = performance.now();
    if (how === 'write') {
      // A writer that honours the sink's backpressure: at most maxInFlightRecords writes
      // unresolved; when full it waits for the oldest (one batch's acknowledgement).
      const window = KAFKA_SINK_DEFAULTS.maxInFlightRecords;
      const ring: Promise<void>[] = new Array<Promise<void>>(window);
      for (let i = 0; i < N; i++) {
        if (i >= window) await ring[i % window];
        ring[i % window] = sink.write(ticks[i]!);
      }
      await sink.flush();
    } else {
      await lastValueFrom(from(ticks).pipe(toKafka(sink, { maxBuffered: N })));
    }
    const s = (performance.now() - t0) / 1000;
    await sink.close();
    if (sink.stats().acknowledged !== N)
      throw new Error(`sink acknowledged ${sink.stats().acknowledged} of ${N}`);
    return s;
  };

const allContenders: [string, Run][] = [
  ['raw kafkajs sendBatch (baseline)', rawKafkajs],
  ['KafkaSink kafkajs, write()', viaSink('kafkajs', 'write')],
  ['KafkaSink kafkajs, toKafka operator', viaSink('kafkajs', 'operator')],
  ['raw @platformatic/kafka send (baseline 2)', rawPlatformatic],
  ['KafkaSink platformatic, write()', viaSink('platformatic', 'write')],
  ['KafkaSink platformatic, toKafka operator', viaSink('platformatic', 'operator')],
  ['KafkaSink kafkajs, write(), Avro values (schema registry)', viaSink('kafkajs', 'write', 'avro')],
  [
    'KafkaSink platformatic, write(), Avro values (schema registry)',
    viaSink('platformatic', 'write', 'avro'),
  ],
];
// The two baselines always run (the ratios need them); KAFKA_BENCH_ONLY=text keeps the others that match.
const only = process.env['KAFKA_BENCH_ONLY'];
const contenders = allContenders.filter(
  ([name]) => !only || name.includes('baseline') || name.includes(only),
);

/** write() over SASL_SSL (SCRAM-SHA-512) against PLAINTEXT, per driver, interleaved rounds. */
async function securityTable(compression: KafkaCompression): Promise<void> {
  const rows: [string, Run, Run][] = (['kafkajs', 'platformatic'] as const).map((d) => [
    d,
    viaSink(d, 'write'),
    viaSink(d, 'write', 'json', true),
  ]);
  console.log(
    `### KafkaSink write() over SASL_SSL (TLS + SCRAM-SHA-512) vs PLAINTEXT, compression ${compression}\n`,
  );
  console.log('| driver | PLAINTEXT messages/s | SASL_SSL messages/s | SASL_SSL / PLAINTEXT |');
  console.log('|---|---:|---:|---:|');
  for (const [driver, plain, secured] of rows) {
    const p: number[] = [];
    const s: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      (globalThis as { gc?: () => void }).gc?.();
      p.push(await plain(compression));
      (globalThis as { gc?: () => void }).gc?.();
      s.push(await secured(compression));
    }
    const pr = N / median(p);
    const sr = N / median(s);
    console.log(`| ${driver} | ${fmt(pr)} | ${fmt(sr)} | ${((100 * sr) / pr).toFixed(0)}% |`);
  }
  console.log('');
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

try {
  console.log(
    `${N.toLocaleString('en-US')} depth messages, ${codes.length} keys, ${PARTITIONS} partitions, batches of ${BATCH}, idempotent, acks=all, median of ${ROUNDS} rounds (interleaved); broker ${broker.startedHere ? 'started by the bench' : brokers}\n`,
  );
  for (const compression of COMPRESSIONS) {
    const times = new Map<string, number[]>(contenders.map(([name]) => [name, []]));
    for (let r = 0; r < ROUNDS; r++) {
      for (const [name, run] of contenders) {
        (globalThis as { gc?: () => void }).gc?.();
        times.get(name)!.push(await run(compression));
      }
    }
    const rate = (name: string): number => N / median(times.get(name)!);
    const kjs = rate('raw kafkajs sendBatch (baseline)');
    const plt = rate('raw @platformatic/kafka send (baseline 2)');
    console.log(`### compression: ${compression}\n`);
    console.log('| producer | messages/s | vs raw kafkajs | vs raw platformatic |');
    console.log('|---|---:|---:|---:|');
    for (const [name] of contenders) {
      const m = rate(name);
      console.log(
        `| ${name} | ${fmt(m)} | ${((100 * m) / kjs).toFixed(0)}% | ${((100 * m) / plt).toFixed(0)}% |`,
      );
    }
    console.log('');
  }
  if (registry !== undefined) {
    const sizes = await freshPrefix('sizes');
    const avro = await avroValues(sizes);
    const mean = (f: (t: DepthTick) => number): string =>
      (ticks.reduce((n, t) => n + f(t), 0) / N).toFixed(1);
    const json = mean((t) => Buffer.byteLength(toKafkaMessage(t, sizes).value));
    const avroBytes = mean((t) => toKafkaMessage(t, sizes, avro).value.length);
    console.log(
      `mean value size: JSON ${json} bytes, Avro ${avroBytes} bytes (its 5-byte wire header included); the registry (Apicurio) served after ${registry.startMs} ms\n`,
    );
  }
  if (broker.saslSsl !== undefined && process.env['KAFKA_BENCH_SECURITY'] !== '0')
    await securityTable(COMPRESSIONS[0]!);
} finally {
  await admin.disconnect();
  broker.stop();
  registry?.stop();
}
