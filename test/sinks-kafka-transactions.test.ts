/**
 * KafkaKlineSink's transactions against the real broker, with each driver, read back with kcat
 * (librdkafka) as a read_committed consumer: a zombie (two sinks with one transactional id) fails
 * loudly and shows nothing of its open transaction; fence() takes a dead worker's id and ends its
 * transaction at once; open() waits for a transaction open on the watermark topic, boundedly, and
 * reads only committed watermarks however many transactions a producer aborted, and of each series
 * only the newest (as compaction keeps them; the topic it creates rolls hourly); a transaction
 * whose answers were lost (a send's, a commit's that landed or not) is redone with a new producer
 * and each bar is committed once; at least once takes every bar, so a replay repeats bars that
 * key + kline_type + ts tell apart.
 */
import {
  KafkaKlineSink,
  KAFKA_DRIVERS,
  type KafkaDriverName,
  type KafkaKlineSinkOptions,
  type KafkaKlineSinkError,
  type KafkaTransactionalDriver,
  type KafkaTransactionalDriverFactory,
} from '@quoteflow/sinks';
import { KafkajsDriver, klineWatermarkMessage, PlatformaticKafkaDriver } from '@quoteflow/sinks/internal';
import kafkajs from 'kafkajs';
import {
  kafkajsClientConfig,
  kafkajsProducerConfig,
} from '../packages/sinks/src/kafka/internal/kafkajs-config.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { BARS_T0, BAR_MS, expectedKlineValue, klineBar } from './support/kafka-kline-bars.js';
import { consumeWithKcat, kafkaBrokers, uniquePrefix } from './support/kafka.js';

let brokers: string;
beforeAll(async () => {
  brokers = await kafkaBrokers();
});

function openSink(
  driver: KafkaDriverName,
  prefix: string,
  options: Partial<KafkaKlineSinkOptions> = {},
): Promise<KafkaKlineSink> {
  return KafkaKlineSink.open({
    brokers,
    driver,
    topicPrefix: prefix,
    ...(options.delivery === 'at-least-once' ? {} : { transactionalId: `${prefix}-w1` }),
    partitions: 3,
    replicationFactor: 1,
    watermarkReadTimeoutMs: 20_000,
    ...options,
  });
}

function writeBars(sink: KafkaKlineSink, code: string, from: number, to: number): void {
  for (let i = from; i < to; i++) sink.write(klineBar(code, i));
}

/** The bar indexes of `code`'s final bars in `topic`, in the order read, as kcat reads them. */
async function finalBars(
  prefix: string,
  code: string,
  isolation: 'read_committed' | 'read_uncommitted' = 'read_committed',
): Promise<number[]> {
  const messages = await consumeWithKcat(brokers, `${prefix}.kline`, 30_000, isolation);
  return messages
    .filter((m) => m.key === code)
    .map((m) => JSON.parse(m.value) as Record<string, unknown>)
    .filter((v) => v['final'] === true)
    .map((v) => {
      const i = (Date.parse(String(v['ts'])) - BARS_T0) / BAR_MS;
      expect(v).toEqual(expectedKlineValue(code, i));
      return i;
    });
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, k) => from + k);

async function rejection(p: Promise<unknown>): Promise<KafkaKlineSinkError> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e as KafkaKlineSinkError,
  );
}

/** What a broker restart does to a request: the connection drops, the answer is lost. */
function connectionLost(): Error {
  return Object.assign(new Error('Connection error: read ECONNRESET (injected)'), {
    name: 'KafkaJSConnectionError',
    code: 'ECONNRESET',
  });
}

/**
 * The built-in driver, with answers lost: the `send`s and `commit`s (counted over every driver the
 * sink makes) listed in `lost` reach the broker and take effect, then fail as a dropped connection;
 * those in `refused` fail so before they are sent.
 */
function losingAnswers(
  driver: KafkaDriverName,
  lost: readonly string[],
  refused: readonly string[] = [],
): KafkaTransactionalDriverFactory {
  const count = new Map<string, number>();
  const fault = async <T>(op: string, run: () => Promise<T>): Promise<T> => {
    const at = `${op} ${(count.get(op) ?? 0) + 1}`;
    count.set(op, (count.get(op) ?? 0) + 1);
    if (refused.includes(at)) throw connectionLost();
    const result = await run();
    if (lost.includes(at)) throw connectionLost();
    return result;
  };
  return (o) => {
    const d: KafkaTransactionalDriver =
      driver === 'kafkajs' ? new KafkajsDriver(o) : new PlatformaticKafkaDriver(o);
    return {
      name: d.name,
      connect: () => d.connect(),
      ensureTopics: (topics) => d.ensureTopics(topics),
      begin: () => d.begin(),
      send: (messages) => fault('send', () => d.send(messages)),
      commit: () => fault('commit', () => d.commit()),
      abort: () => d.abort(),
      fence: (ids) => d.fence(ids),
      readCommitted: (topic, waitMs) => d.readCommitted(topic, waitMs),
      close: () => d.close(),
    };
  };
}

/** A plain client's options on the test broker (a kafkajs producer of the test's own). */
function rawOptions() {
  return {
    brokers: brokers.split(','),
    clientId: 'qft-raw',
    compression: 'none' as const,
    requestTimeoutMs: 30_000,
    retryMaxDelayMs: 500,
    connectTimeoutMs: 5_000,
    deliveryTimeoutMs: 30_000,
  };
}

/** A connected kafkajs producer with `transactionalId`, as another worker's sink would hold it. */
async function transactionalProducer(transactionalId: string): Promise<kafkajs.Producer> {
  const options = rawOptions();
  const producer = new kafkajs.Kafka(kafkajsClientConfig(options)).producer(
    kafkajsProducerConfig({ ...options, transactionalId, transactionTimeoutMs: 60_000 }),
  );
  await producer.connect();
  return producer;
}

/** A watermark record of `code|1` on `topic`, as the sink of `transactionalId` writes it. */
function watermarkOf(topic: string, transactionalId: string) {
  return (code: string, last: number, rows: number) => {
    const m = klineWatermarkMessage(
      topic,
      `${code}|1`,
      { first: BARS_T0, last, rows },
      transactionalId,
      Date.now(),
    );
    return { key: m.key, value: m.value };
  };
}

describe.each(KAFKA_DRIVERS)('KafkaKlineSink transactions (%s)', (driver) => {
  it('redoes a transaction whose answers were lost with a new producer: a send’s, a commit’s that landed, one’s that did not; each bar once', async () => {
    const prefix = uniquePrefix(`eos-redo-${driver}`);
    const sink = await openSink(driver, prefix, {
      // The first batch reaches the broker, its answer is lost; the first commit is not sent (the
      // connection dropped first); the second lands, its answer is lost.
      driver: losingAnswers(driver, ['send 1', 'commit 3'], ['commit 1']),
      maxBatchRecords: 5,
      retryMaxDelayMs: 100,
    });
    writeBars(sink, 'AAPL.US', 0, 10);
    await sink.checkpoint();
    expect(sink.stats().retries).toBe(2);
    expect(await finalBars(prefix, 'AAPL.US')).toEqual(range(0, 10));
    writeBars(sink, 'AAPL.US', 10, 20);
    await sink.checkpoint();
    expect(sink.stats()).toMatchObject({ retries: 3, committed: 20, checkpoints: 2 });
    expect(sink.watermarks()?.get('AAPL.US|1')).toEqual({
      first: BARS_T0,
      last: BARS_T0 + 19 * BAR_MS,
      rows: 20,
    });
    await sink.close();

    // kcat, read_committed: each bar once, the second transaction not sent again.
    expect(await finalBars(prefix, 'AAPL.US')).toEqual(range(0, 20));
    // read_uncommitted: the aborted attempts of the first transaction show (bars 0-4 before the
    // lost send's redo, then 0-9 before the refused commit's), so the redo did send them again.
    const all = await finalBars(prefix, 'AAPL.US', 'read_uncommitted');
    expect(all.filter((i) => i < 10)).toHaveLength(25);
    expect(all.filter((i) => i >= 10)).toEqual(range(10, 20));
    const reopened = await openSink(driver, prefix);
    expect(reopened.watermarks()?.get('AAPL.US|1')?.rows).toBe(20);
    await reopened.close();
  });

  it('a zombie (the older of two sinks with one transactional id) fails its checkpoint loudly; nothing of its open transaction shows', async () => {
    const prefix = uniquePrefix(`eos-zombie-${driver}`);
    const zombie = await openSink(driver, prefix);
    writeBars(zombie, 'AAPL.US', 0, 10);
    await zombie.checkpoint();
    writeBars(zombie, 'AAPL.US', 10, 20);
    await zombie.flush(); // on the broker, in the open transaction

    const successor = await openSink(driver, prefix); // the same id: fences the zombie, aborts its transaction
    expect(successor.watermarks()?.get('AAPL.US|1')).toEqual({
      first: BARS_T0,
      last: BARS_T0 + 9 * BAR_MS,
      rows: 10,
    });
    const err = await rejection(zombie.checkpoint());
    expect(err.code).toBe('QF_FENCED');
    expect(err.message).toContain(`another producer took transactional id "${prefix}-w1"`);
    expect(() => zombie.write(klineBar('AAPL.US', 20))).toThrow(err.message);
    expect(await finalBars(prefix, 'AAPL.US')).toEqual(range(0, 10));

    writeBars(successor, 'AAPL.US', 0, 15); // a replay from the start: 0-9 are dropped
    await successor.checkpoint();
    expect(await finalBars(prefix, 'AAPL.US')).toEqual(range(0, 15));
    await Promise.all([zombie.close(), successor.close()]);
  });

  it('fence() of another worker’s id aborts its open transaction at once; its later commit fails', async () => {
    const prefix = uniquePrefix(`eos-fence-${driver}`);
    // The dead worker's transaction would hold read_committed readers back for a minute.
    const dead = await openSink(driver, prefix, {
      transactionalId: `${prefix}-w2`,
      transactionTimeoutMs: 60_000,
    });
    writeBars(dead, '700.HK', 0, 5);
    await dead.checkpoint();
    writeBars(dead, '700.HK', 5, 10);
    await dead.flush();
    expect(await finalBars(prefix, '700.HK', 'read_uncommitted')).toEqual(range(0, 10));

    const taker = await openSink(driver, prefix);
    const t0 = Date.now();
    await taker.fence([`${prefix}-w2`]);
    expect(Date.now() - t0).toBeLessThan(30_000);
    // Resolved at once: a watermark read that may wait 2 s, and readers see the partition's end.
    await taker.refresh();
    expect(taker.watermarks()?.get('700.HK|1')).toEqual({
      first: BARS_T0,
      last: BARS_T0 + 4 * BAR_MS,
      rows: 5,
    });
    expect(await finalBars(prefix, '700.HK')).toEqual(range(0, 5));
    expect((await rejection(dead.checkpoint())).code).toBe('QF_FENCED');

    writeBars(taker, '700.HK', 3, 8);
    await taker.checkpoint();
    expect(await finalBars(prefix, '700.HK')).toEqual(range(0, 8));
    await expect(taker.fence([`${prefix}-w1`])).rejects.toMatchObject({ code: 'QF_INVALID_OPTION' });
    await Promise.all([dead.close(), taker.close()]);
  });

  it('open() waits for a transaction open on the watermark topic, boundedly, and reads committed watermarks only', async () => {
    const prefix = uniquePrefix(`eos-open-${driver}`);
    const topic = `${prefix}.kline.watermarks`;
    const first = await openSink(driver, prefix); // creates the topics
    await first.close();
    const other = `${prefix}-other`;
    const producer = await transactionalProducer(other);
    const mark = watermarkOf(topic, other);
    // One producer, two transactions aborted between committed ones.
    for (const [n, commit] of [true, false, false, true, false].entries()) {
      const t = await producer.transaction();
      await t.send({ topic, messages: [mark('EURUSD', BARS_T0 + n * BAR_MS, n + 1)] });
      await (commit ? t.commit() : t.abort());
    }
    const open = await producer.transaction();
    await open.send({ topic, messages: [mark('BTCUSDT', BARS_T0, 1)] });

    const err = await rejection(openSink(driver, prefix, { watermarkReadTimeoutMs: 1_500 }));
    expect(err.code).toBe('QF_KAFKA_WATERMARKS');
    expect(err.message).toContain(
      `${topic} partition 0 on ${brokers} still holds a transaction open after 1500 ms`,
    );

    const opening = openSink(driver, prefix);
    await open.commit();
    const sink = await opening;
    expect(Object.fromEntries(sink.watermarks() ?? [])).toEqual({
      'EURUSD|1': { first: BARS_T0, last: BARS_T0 + 3 * BAR_MS, rows: 4 },
      'BTCUSDT|1': { first: BARS_T0, last: BARS_T0, rows: 1 },
    });
    await Promise.all([sink.close(), producer.disconnect()]);
  });

  it('reads its watermark topic as compaction keeps it (the newest committed record of each key, a tombstone too), a topic it creates rolling hourly', async () => {
    const prefix = uniquePrefix(`eos-newest-${driver}`);
    const topic = `${prefix}.kline.watermarks`;
    await (await openSink(driver, prefix)).close(); // creates the topics
    const admin = new kafkajs.Kafka(kafkajsClientConfig(rawOptions())).admin();
    await admin.connect();
    const described = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [
        {
          type: kafkajs.ConfigResourceTypes.TOPIC,
          name: topic,
          configNames: ['segment.ms', 'cleanup.policy'],
        },
      ],
    });
    await admin.disconnect();
    const configs = Object.fromEntries(
      described.resources[0]!.configEntries.map((e) => [e.configName, e.configValue]),
    );
    // Compaction never touches the active segment, which the broker's default rolls after 7 days.
    expect(configs).toEqual({ 'segment.ms': '3600000', 'cleanup.policy': 'compact' });

    const other = `${prefix}-other`;
    const producer = await transactionalProducer(other);
    const mark = watermarkOf(topic, other);
    const transactions: [messages: kafkajs.Message[], commit: boolean][] = [
      [[mark('EURUSD', BARS_T0, 1), mark('BTCUSDT', BARS_T0, 1)], true],
      [[mark('EURUSD', BARS_T0 + BAR_MS, 2)], true],
      [[{ key: 'BTCUSDT|1', value: null }], true],
      [[mark('ETHUSDT', BARS_T0, 1)], true],
      [[mark('EURUSD', BARS_T0 + 9 * BAR_MS, 10)], false],
    ];
    for (const [messages, commit] of transactions) {
      const t = await producer.transaction();
      await t.send({ topic, messages });
      await (commit ? t.commit() : t.abort());
    }
    await producer.disconnect();
    const options = { ...rawOptions(), clientId: `${prefix}-reader` };
    const reader = driver === 'kafkajs' ? new KafkajsDriver(options) : new PlatformaticKafkaDriver(options);
    const records = await reader.readCommitted(topic, 20_000);
    await reader.close();
    // One record a key, in the order of their offsets; the aborted EURUSD is not one of them.
    expect(
      records.map((r) => [
        r.key,
        r.value === undefined ? null : (JSON.parse(r.value) as { rows: number }).rows,
      ]),
    ).toEqual([
      ['EURUSD|1', 2],
      ['BTCUSDT|1', null],
      ['ETHUSDT|1', 1],
    ]);
    const sink = await openSink(driver, prefix);
    expect(Object.fromEntries(sink.watermarks() ?? [])).toEqual({
      'EURUSD|1': { first: BARS_T0, last: BARS_T0 + BAR_MS, rows: 2 },
      'ETHUSDT|1': { first: BARS_T0, last: BARS_T0, rows: 1 },
    });
    await sink.close();
  });

  it('at least once: no watermarks, every final bar taken, so a replay repeats bars (consumers dedupe on key + kline_type + ts)', async () => {
    const prefix = uniquePrefix(`alo-${driver}`);
    const options = { delivery: 'at-least-once' } as const;
    const sink = await openSink(driver, prefix, options);
    expect(sink.watermarks()).toBeUndefined();
    writeBars(sink, 'TSLA.US', 0, 10);
    sink.write(klineBar('TSLA.US', 10, false));
    expect((await sink.checkpoint()).closedBars).toBe(10);
    await sink.close();
    const restarted = await openSink(driver, prefix, options);
    writeBars(restarted, 'TSLA.US', 6, 12); // replays from before the crash point
    await restarted.checkpoint();
    await restarted.close();

    const read = await finalBars(prefix, 'TSLA.US');
    expect(read).toEqual([...range(0, 10), ...range(6, 12)]);
    expect([...new Set(read)]).toEqual(range(0, 12));
    const admin = new kafkajs.Kafka({
      brokers: brokers.split(','),
      logLevel: kafkajs.logLevel.NOTHING,
    }).admin();
    await admin.connect();
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
    await admin.disconnect();
    expect(topics).toEqual([`${prefix}.kline`]); // no watermark topic
  });
});
