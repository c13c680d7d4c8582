import { InvalidOptionError } from '@quoteflow/core';
import { describe, expect, it } from 'vitest';
import {
  bar,
  committedFinals,
  MINUTE,
  open,
  rejection,
  T0,
  type TestOptions,
} from '../../test-support/kline-sink-fixtures.js';
import { FakeKafkaCluster } from '../../test-support/fake-transactional-kafka.js';

describe('KafkaKlineSink, exactly once', () => {
  it('creates the data topic and a compacted watermark topic, and starts with no watermarks', async () => {
    const cluster = new FakeKafkaCluster();
    const sink = await open(cluster, { partitions: 6, replicationFactor: 3 });
    expect(cluster.createdTopics).toEqual([
      { topic: 'md.kline', partitions: 6, replicationFactor: 3 },
      {
        topic: 'md.kline.watermarks',
        partitions: 1,
        replicationFactor: 3,
        configs: { 'segment.ms': '3600000', 'cleanup.policy': 'compact' },
      },
    ]);
    expect(sink.name).toBe('kafka md.kline (exactly-once)');
    expect(sink.checkpointEveryMs).toBe(1_000);
    expect(sink.watermarks()).toEqual(new Map());
    await sink.close();
  });

  it('commits the records and one cumulative watermark per series that gained, in one transaction', async () => {
    const cluster = new FakeKafkaCluster();
    const sink = await open(cluster);
    for (let i = 0; i < 3; i++) sink.write(bar('A.US', i));
    sink.write(bar('A.US', 3, false));
    sink.write(bar('B.HK', 7));
    expect(cluster.readCommitted('md.kline')).toEqual([]); // nothing visible before the commit
    const cp = await sink.checkpoint();
    expect(cp).toEqual({
      sink: 'kafka md.kline (exactly-once)',
      closedBars: 4,
      series: new Map([
        ['A.US|1', { first: T0, last: T0 + 2 * MINUTE, rows: 3 }],
        ['B.HK|1', { first: T0 + 7 * MINUTE, last: T0 + 7 * MINUTE, rows: 1 }],
      ]),
      files: [],
    });
    expect(committedFinals(cluster)).toEqual(['A.US@0', 'A.US@1', 'A.US@2', 'B.HK@7']);
    expect(cluster.readCommitted('md.kline')).toHaveLength(5); // the forming update too

    sink.write(bar('A.US', 3));
    await sink.checkpoint();
    const marks = cluster.readCommitted('md.kline.watermarks').map((r) => [r.key, JSON.parse(r.value ?? '')]);
    expect(marks.map(([k]) => k)).toEqual(['A.US|1', 'B.HK|1', 'A.US|1']);
    expect(marks[2]![1]).toMatchObject({
      series: 'A.US|1',
      code: 'A.US',
      kline_type: 1,
      first: T0,
      last: T0 + 3 * MINUTE,
      rows: 4,
      first_ts: new Date(T0).toISOString(),
      transactional_id: 'w1',
    });
    expect(sink.watermarks()?.get('A.US|1')).toEqual({ first: T0, last: T0 + 3 * MINUTE, rows: 4 });
    expect(sink.stats()).toMatchObject({ taken: 5, committed: 5, checkpoints: 2, buffered: 0 });
    await sink.close();
  });

  it('drops final bars its watermarks cover or that it took since the last checkpoint; forming updates pass', async () => {
    const cluster = new FakeKafkaCluster();
    const first = await open(cluster);
    for (let i = 2; i <= 4; i++) first.write(bar('A.US', i));
    await first.checkpoint();
    await first.close();

    const sink = await open(cluster);
    expect(sink.watermarks()?.get('A.US|1')).toEqual({
      first: T0 + 2 * MINUTE,
      last: T0 + 4 * MINUTE,
      rows: 3,
    });
    for (let i = 0; i <= 6; i++) sink.write(bar('A.US', i)); // replay from before the watermark
    sink.write(bar('A.US', 5)); // again before the checkpoint
    sink.write(bar('A.US', 3, false)); // a forming update is not deduplicated
    await sink.checkpoint();
    expect(committedFinals(cluster)).toEqual([
      'A.US@2',
      'A.US@3',
      'A.US@4',
      'A.US@0',
      'A.US@1',
      'A.US@5',
      'A.US@6',
    ]);
    expect(sink.stats()).toMatchObject({ taken: 4, dropped: 4, forming: 1 });
    expect(sink.watermarks()?.get('A.US|1')).toEqual({ first: T0, last: T0 + 6 * MINUTE, rows: 7 });
    await sink.close();
  });

  it('puts records taken while a checkpoint commits into the next transaction', async () => {
    const cluster = new FakeKafkaCluster();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const sink = await open(cluster, {}, { onOperation: (op) => (op === 'commit' ? gate : undefined) });
    sink.write(bar('A.US', 0));
    const cp = sink.checkpoint();
    await new Promise((r) => setTimeout(r, 5));
    sink.write(bar('A.US', 0)); // taken by the committing checkpoint: dropped
    sink.write(bar('A.US', 1));
    release();
    expect((await cp).closedBars).toBe(1);
    expect(committedFinals(cluster)).toEqual(['A.US@0']);
    expect((await sink.checkpoint()).closedBars).toBe(1);
    expect(committedFinals(cluster)).toEqual(['A.US@0', 'A.US@1']);
    await sink.close();
  });

  it('sends nothing for a checkpoint with nothing taken', async () => {
    const cluster = new FakeKafkaCluster();
    const ops: string[] = [];
    const sink = await open(cluster, {}, { onOperation: (op) => void ops.push(op) });
    ops.length = 0;
    expect(await sink.checkpoint()).toEqual({ sink: sink.name, closedBars: 0, series: new Map(), files: [] });
    expect(ops).toEqual([]);
    await sink.close();
  });

  it('fails loudly with QF_FENCED once another producer took its id; nothing of its transaction is visible', async () => {
    const cluster = new FakeKafkaCluster();
    const zombie = await open(cluster);
    zombie.write(bar('A.US', 0));
    await zombie.flush(); // on the broker, in the open transaction
    const successor = await open(cluster); // same transactional id: aborts it, fences the zombie
    const err = await rejection(zombie.checkpoint());
    expect(err.code).toBe('QF_FENCED');
    expect(err.retryable).toBe(false);
    expect(err.message).toContain('another producer took transactional id "w1"');
    expect(() => zombie.write(bar('A.US', 1))).toThrow(err);
    expect(committedFinals(cluster)).toEqual([]);
    expect(successor.watermarks()).toEqual(new Map());
    successor.write(bar('A.US', 0));
    await successor.checkpoint();
    expect(committedFinals(cluster)).toEqual(['A.US@0']);
    await Promise.all([zombie.close(), successor.close()]);
  });

  it('fence() aborts another id’s open transaction at once and fences its holder; refresh() reads its commits', async () => {
    const cluster = new FakeKafkaCluster();
    const dead = await open(cluster, { transactionalId: 'w2' });
    dead.write(bar('B.HK', 0));
    await dead.checkpoint();
    dead.write(bar('B.HK', 1));
    await dead.flush();
    expect(cluster.hasOpenTransaction('md.kline')).toBe(true);
    const taker = await open(cluster);
    await taker.fence(['w2']);
    expect(cluster.hasOpenTransaction('md.kline')).toBe(false);
    expect(taker.watermarks()?.get('B.HK|1')).toEqual({ first: T0, last: T0, rows: 1 });
    await taker.refresh();
    expect((await rejection(dead.checkpoint())).code).toBe('QF_FENCED');
    await expect(taker.fence(['w1'])).rejects.toBeInstanceOf(InvalidOptionError);
    await Promise.all([dead.close(), taker.close()]);
  });

  it('reads another worker’s commits on refresh()', async () => {
    const cluster = new FakeKafkaCluster();
    const a = await open(cluster);
    const b = await open(cluster, { transactionalId: 'w2' });
    b.write(bar('B.HK', 4));
    await b.checkpoint();
    expect(a.watermarks()?.has('B.HK|1')).toBe(false);
    await a.refresh();
    expect(a.watermarks()?.get('B.HK|1')).toEqual({ first: T0 + 4 * MINUTE, last: T0 + 4 * MINUTE, rows: 1 });
    a.write(bar('B.HK', 4));
    expect(a.stats().dropped).toBe(1);
    await Promise.all([a.close(), b.close()]);
  });

  it('surfaces a send without an answer at the next write and checkpoint, and aborts the transaction', async () => {
    const cluster = new FakeKafkaCluster();
    let sends = 0;
    const sink = await open(
      cluster,
      { deliveryTimeoutMs: 50 },
      {
        onOperation: (op) => (op === 'send' && ++sends === 2 ? new Promise(() => undefined) : undefined),
      },
    );
    sink.write(bar('A.US', 0));
    await sink.flush();
    sink.write(bar('A.US', 1)); // its batch never gets an answer
    const err = await rejection(sink.checkpoint());
    expect(err.code).toBe('QF_KAFKA_TRANSACTION');
    expect(err.retryable).toBe(true);
    // KafkaSink's deadline of the batch or the transaction's own, whichever comes first.
    expect(err.message).toMatch(
      /^kafka md\.kline \(exactly-once\) on 127\.0\.0\.1:9092: the transaction was not committed: .*deliveryTimeoutMs = 50 ms/,
    );
    expect(() => sink.write(bar('A.US', 2))).toThrow(err);
    await sink.close();
    expect(cluster.hasOpenTransaction('md.kline')).toBe(false);
    expect(committedFinals(cluster)).toEqual([]);
  });

  it('says the outcome is unknown when the commit is not answered within deliveryTimeoutMs', async () => {
    const cluster = new FakeKafkaCluster();
    const sink = await open(
      cluster,
      { deliveryTimeoutMs: 30 },
      {
        onOperation: (op) => (op === 'commit' ? new Promise(() => undefined) : undefined),
      },
    );
    sink.write(bar('A.US', 0));
    const err = await rejection(sink.checkpoint());
    expect(err.code).toBe('QF_KAFKA_TRANSACTION');
    expect(err.message).toMatch(
      /^kafka md\.kline \(exactly-once\) on 127\.0\.0\.1:9092: the commit got no answer: its outcome is unknown: no success on 127\.0\.0\.1:9092 in 1 attempt over \d+ ms \(deliveryTimeoutMs = 30 ms\); the last failed with: no answer within the 30 ms left of deliveryTimeoutMs = 30 ms; open the sink again/,
    );
    await sink.close();
  });

  it('stops with QF_BUFFER_OVERFLOW past maxBufferedRecords unacknowledged records', async () => {
    const cluster = new FakeKafkaCluster();
    const sink = await open(
      cluster,
      { maxBufferedRecords: 3 },
      {
        onOperation: (op) => (op === 'send' ? new Promise(() => undefined) : undefined),
      },
    );
    for (let i = 0; i < 3; i++) sink.write(bar('A.US', i));
    expect(sink.stats().buffered).toBe(3);
    expect(() => sink.write(bar('A.US', 3))).toThrow(/more than maxBufferedRecords = 3 records/);
    expect((await rejection(sink.checkpoint())).code).toBe('QF_BUFFER_OVERFLOW');
    await sink.close();
  });

  it('aborts the open transaction on close(); then refuses everything with QF_CLOSED', async () => {
    const cluster = new FakeKafkaCluster();
    const sink = await open(cluster);
    sink.write(bar('A.US', 0));
    await sink.flush();
    expect(cluster.hasOpenTransaction('md.kline')).toBe(true);
    await sink.close();
    await sink.close();
    expect(cluster.hasOpenTransaction('md.kline')).toBe(false);
    expect(() => sink.write(bar('A.US', 1))).toThrow(expect.objectContaining({ code: 'QF_CLOSED' }));
    expect((await rejection(sink.checkpoint())).code).toBe('QF_CLOSED');
    expect((await rejection(sink.refresh())).code).toBe('QF_CLOSED');
  });

  it('refuses a watermark record it cannot read, naming where it is', async () => {
    const cluster = new FakeKafkaCluster();
    cluster.append([{ topic: 'md.kline.watermarks', key: 'A.US|1', value: '{"first":"yesterday"}' }]);
    const err = await rejection(open(cluster));
    expect(err.code).toBe('QF_KAFKA_WATERMARKS');
    expect(err.message).toMatch(
      /^kafka: md\.kline\.watermarks partition 0 offset 0 \(key "A\.US\|1"\) is not a K-line watermark/,
    );
  });

  it('gives up opening after deliveryTimeoutMs, naming the brokers and what transactions need', async () => {
    const cluster = new FakeKafkaCluster();
    const err = await rejection(
      open(
        cluster,
        { deliveryTimeoutMs: 30 },
        { onOperation: (op) => (op === 'connect' ? new Promise(() => undefined) : undefined) },
      ),
    );
    expect(err.code).toBe('QF_KAFKA_UNREACHABLE');
    expect(err.message).toBe(
      'kafka md.kline (exactly-once) could not open on 127.0.0.1:9092 (transactional id "w1"): no answer within deliveryTimeoutMs = 30 ms; if 127.0.0.1:9092 answer, check that they run transactions (transaction.state.log.replication.factor and .min.isr at most the brokers there are)',
    );
  });

  it('checks its options when opened', async () => {
    const cluster = new FakeKafkaCluster();
    const bad: [TestOptions, string][] = [
      [{ transactionalId: undefined }, 'transactionalId'],
      [{ transactionalId: 'has space' }, 'transactionalId'],
      [{ delivery: 'twice' as never }, 'delivery'],
      [{ checkpointEveryMs: 0 }, 'checkpointEveryMs'],
      [{ watermarkTopic: 'a/b' }, 'watermarkTopic'],
      [{ brokers: 'nohost' }, 'brokers'],
    ];
    for (const [options, option] of bad) {
      await expect(open(cluster, options), option).rejects.toMatchObject({
        code: 'QF_INVALID_OPTION',
        option,
      });
    }
  });
});

describe('KafkaKlineSink, at least once', () => {
  it('has no watermarks, no transaction, and takes every final bar; checkpoint waits for acknowledgements', async () => {
    const cluster = new FakeKafkaCluster();
    const sink = await open(cluster, { delivery: 'at-least-once', transactionalId: undefined });
    expect(sink.name).toBe('kafka md.kline (at-least-once)');
    expect(sink.watermarks()).toBeUndefined();
    expect(cluster.createdTopics.map((t) => t.topic)).toEqual(['md.kline']);
    sink.write(bar('A.US', 0));
    sink.write(bar('A.US', 0));
    const cp = await sink.checkpoint();
    expect(cp.closedBars).toBe(2);
    expect(committedFinals(cluster)).toEqual(['A.US@0', 'A.US@0']);
    await sink.close();
  });
});
