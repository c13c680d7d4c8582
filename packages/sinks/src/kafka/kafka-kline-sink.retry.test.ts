/**
 * KafkaKlineSink (exactly once) through transient failures, as a broker restart causes them, on the
 * in-memory transactional Kafka: the sink redoes the transaction with a new producer, decides a
 * commit that got no answer from the watermark topic, and fails loudly past deliveryTimeoutMs.
 */
import { describe, expect, it } from 'vitest';
import { bar, committedFinals, MINUTE, open, rejection, T0 } from '../../test-support/kline-sink-fixtures.js';
import {
  FakeBrokerError,
  FakeKafkaCluster,
  type FakeVerdict,
} from '../../test-support/fake-transactional-kafka.js';

/** Hooks failing the `nth` operation `op` as `verdict`, recording every operation in `ops`. */
function failing(op: string, nth: number, verdict: FakeVerdict, ops: string[] = []) {
  let seen = 0;
  return {
    onOperation: (o: string): FakeVerdict => {
      ops.push(o);
      return o === op && ++seen === nth ? verdict : undefined;
    },
  };
}

const FAST = { retryMaxDelayMs: 1 } as const;

describe('KafkaKlineSink, exactly once, through transient failures (a broker restart)', () => {
  it('redoes a transaction whose send failed: a new producer, every batch again, committed once', async () => {
    const cluster = new FakeKafkaCluster();
    const ops: string[] = [];
    const warnings: string[] = [];
    const sink = await open(
      cluster,
      { ...FAST, maxBatchRecords: 1, logger: { warn: (event) => void warnings.push(event) } },
      failing('send', 3, 'fail-after', ops),
    );
    ops.length = 0;
    for (let i = 0; i < 3; i++) sink.write(bar('A.US', i));
    await sink.flush();
    // The third batch reached the broker, its answer was lost: the attempt is aborted by the new
    // producer's InitProducerId, and all three batches go again into a fresh transaction.
    expect(ops).toEqual(['begin', 'send', 'send', 'send', 'connect', 'begin', 'send', 'send', 'send']);
    expect(cluster.hasOpenTransaction('md.kline')).toBe(true);
    await sink.checkpoint();
    // A replaced producer reads the watermark topic before committing (another producer's commit there stops it).
    expect(ops.slice(9)).toEqual(['readCommitted', 'send', 'commit']);
    expect(committedFinals(cluster)).toEqual(['A.US@0', 'A.US@1', 'A.US@2']);
    expect(cluster.all('md.kline')).toHaveLength(6);
    expect(sink.stats()).toMatchObject({ retries: 1, committed: 3, checkpoints: 1, buffered: 0 });
    expect(warnings).toEqual(['kafka.transaction-retry']);

    // The next transaction starts clean: a redo sends its own batches only.
    sink.write(bar('A.US', 3));
    await sink.checkpoint();
    expect(committedFinals(cluster)).toEqual(['A.US@0', 'A.US@1', 'A.US@2', 'A.US@3']);
    await sink.close();
  });

  it('does not send a commit again that landed though its answer was lost: the watermark topic says so', async () => {
    const cluster = new FakeKafkaCluster();
    const ops: string[] = [];
    const sink = await open(cluster, FAST, failing('commit', 1, 'fail-after', ops));
    ops.length = 0;
    sink.write(bar('A.US', 0));
    sink.write(bar('A.US', 1));
    sink.write(bar('B.HK', 0));
    const cp = await sink.checkpoint();
    expect(cp.closedBars).toBe(3);
    // Two batches and the watermarks, the commit (it lands, the answer is lost), a new producer,
    // the read that finds this commit's watermarks: nothing is sent again.
    expect(ops).toEqual(['begin', 'send', 'send', 'send', 'commit', 'connect', 'readCommitted']);
    expect(committedFinals(cluster)).toEqual(['A.US@0', 'A.US@1', 'B.HK@0']);
    expect(cluster.all('md.kline')).toHaveLength(3);
    expect(sink.watermarks()?.get('A.US|1')).toEqual({ first: T0, last: T0 + MINUTE, rows: 2 });
    expect(sink.stats()).toMatchObject({ retries: 1, committed: 3 });
    sink.write(bar('A.US', 1)); // committed: dropped
    sink.write(bar('A.US', 2));
    await sink.checkpoint();
    expect(committedFinals(cluster)).toEqual(['A.US@0', 'A.US@1', 'B.HK@0', 'A.US@2']);
    await sink.close();
  });

  it('sends a commit that did not land again, in a fresh transaction, once', async () => {
    const cluster = new FakeKafkaCluster();
    const sink = await open(cluster, FAST, failing('commit', 1, 'fail'));
    sink.write(bar('A.US', 0));
    sink.write(bar('A.US', 1, false));
    await sink.checkpoint();
    expect(committedFinals(cluster)).toEqual(['A.US@0']);
    expect(cluster.readCommitted('md.kline')).toHaveLength(2);
    expect(cluster.all('md.kline')).toHaveLength(4); // the first attempt's two, aborted
    expect(cluster.readCommitted('md.kline.watermarks')).toHaveLength(1);
    expect(sink.watermarks()?.get('A.US|1')).toEqual({ first: T0, last: T0, rows: 1 });
    await sink.close();
  });

  it('rides out failures of the redo itself (the new producer’s init, the watermark read)', async () => {
    const cluster = new FakeKafkaCluster();
    const failures = new Map<string, FakeVerdict>([
      ['commit 1', 'fail-after'],
      ['connect 2', 'fail'],
      ['connect 3', 'fail-after'],
      ['readCommitted 2', 'fail'],
    ]);
    const seen = new Map<string, number>();
    const sink = await open(cluster, FAST, {
      onOperation: (op) => {
        seen.set(op, (seen.get(op) ?? 0) + 1);
        return failures.get(`${op} ${seen.get(op)}`);
      },
    });
    sink.write(bar('A.US', 0));
    await sink.checkpoint();
    expect(committedFinals(cluster)).toEqual(['A.US@0']);
    expect(sink.stats().retries).toBe(4);
    await sink.close();
  });

  it('gives up after deliveryTimeoutMs with QF_KAFKA_TRANSACTION naming the brokers, the attempts and the time', async () => {
    const cluster = new FakeKafkaCluster();
    const sink = await open(
      cluster,
      { deliveryTimeoutMs: 200, retryMaxDelayMs: 20 },
      { onOperation: (op) => (op === 'commit' ? 'fail' : undefined) },
    );
    sink.write(bar('A.US', 0));
    const err = await rejection(sink.checkpoint());
    expect([err.code, err.retryable]).toEqual(['QF_KAFKA_TRANSACTION', true]);
    expect(err.message).toMatch(
      /^kafka md\.kline \(exactly-once\) on 127\.0\.0\.1:9092: the commit got no answer: its outcome is unknown: no success on 127\.0\.0\.1:9092 in \d+ attempts over \d+ ms \(deliveryTimeoutMs = 200 ms\); the last failed with: fake broker: COORDINATOR_NOT_AVAILABLE; open the sink again/,
    );
    expect(sink.stats().retries).toBeGreaterThan(1);
    expect(() => sink.write(bar('A.US', 1))).toThrow(err);
    await sink.close();
    expect(committedFinals(cluster)).toEqual([]);
    // Opened again, it resumes from what was committed: nothing.
    const again = await open(cluster);
    expect(again.watermarks()).toEqual(new Map());
    again.write(bar('A.US', 0));
    await again.checkpoint();
    expect(committedFinals(cluster)).toEqual(['A.US@0']);
    await again.close();
  });

  it('does not redo a fencing: QF_FENCED at once', async () => {
    const cluster = new FakeKafkaCluster();
    const zombie = await open(cluster, FAST);
    zombie.write(bar('A.US', 0));
    await zombie.flush();
    const successor = await open(cluster);
    expect((await rejection(zombie.checkpoint())).code).toBe('QF_FENCED');
    expect(zombie.stats().retries).toBe(0);
    await Promise.all([zombie.close(), successor.close()]);
  });

  it('does not redo a refused authorization', async () => {
    const cluster = new FakeKafkaCluster();
    const denied = new FakeBrokerError('TRANSACTIONAL_ID_AUTHORIZATION_FAILED');
    const sink = await open(cluster, FAST, {
      onOperation: (op) => (op === 'commit' ? Promise.reject(denied) : undefined),
    });
    sink.write(bar('A.US', 0));
    const err = await rejection(sink.checkpoint());
    expect(err.code).toBe('QF_KAFKA_TRANSACTION');
    expect(err.message).toContain('TRANSACTIONAL_ID_AUTHORIZATION_FAILED');
    expect(sink.stats().retries).toBe(0);
    await sink.close();
  });

  it('commits nothing, and does not take its id back on a redo, once its lease lapsed (a paused worker)', async () => {
    const cluster = new FakeKafkaCluster();
    let leaseHeld = true;
    // Sends: bar 0, its watermark, bar 1, then the next send fails as the broker restarts.
    const sink = await open(cluster, { ...FAST, fence: () => leaseHeld }, failing('send', 4, 'fail'));
    sink.write(bar('A.US', 0));
    await sink.checkpoint();
    sink.write(bar('A.US', 1));
    await sink.flush();
    // Paused past its lease: another worker holds the series now, under its own transactional id.
    leaseHeld = false;
    const err = await rejection(sink.checkpoint());
    expect(err.code).toBe('QF_FENCED');
    expect(err.message).toContain('its lease lapsed');
    expect(committedFinals(cluster)).toEqual(['A.US@0']);
    await sink.close();

    // Without a failure to redo, the commit itself asks too.
    const other = new FakeKafkaCluster();
    let held = true;
    const plain = await open(other, { fence: () => held });
    plain.write(bar('B.US', 0));
    held = false;
    expect((await rejection(plain.checkpoint())).code).toBe('QF_FENCED');
    expect(committedFinals(other)).toEqual([]);
    await plain.close();
  });

  it('stops with QF_FENCED, sending nothing again, when redoing finds another producer’s commit to its series', async () => {
    const cluster = new FakeKafkaCluster();
    // Sends: bar 0, its watermark, bar 1, then its watermark fails as the broker restarts.
    const sink = await open(cluster, FAST, failing('send', 4, 'fail'));
    sink.write(bar('A.US', 0));
    await sink.checkpoint();
    sink.write(bar('A.US', 1));
    await sink.flush();
    // Meanwhile a worker that took the series over (taking this sink's id away) committed them on.
    const taker = await open(cluster, { transactionalId: 'w2', fenceAtOpen: ['w1'] });
    taker.write(bar('A.US', 1));
    taker.write(bar('A.US', 2));
    await taker.checkpoint();
    const err = await rejection(sink.checkpoint());
    expect(err.code).toBe('QF_FENCED');
    expect(err.message).toContain(
      'md.kline.watermarks holds a commit to series A.US|1 that this sink did not make',
    );
    expect(committedFinals(cluster)).toEqual(['A.US@0', 'A.US@1', 'A.US@2']);
    await Promise.all([sink.close(), taker.close()]);
  });
});
