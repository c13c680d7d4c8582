/**
 * KafkaKlineSink keeps each key in time order: a series' updates between its `begin` history marker
 * and its end are held, then taken oldest first (issue 33 item 4).
 */
import type { HistoryMarker } from '@quoteflow/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bar,
  committedFinals,
  MINUTE,
  open,
  T0,
  type TestOptions,
} from '../../test-support/kline-sink-fixtures.js';
import { FakeKafkaCluster } from '../../test-support/fake-transactional-kafka.js';

const mark = (code: string, phase: HistoryMarker['phase']): HistoryMarker => ({
  type: 'history',
  code,
  klineType: 1,
  phase,
});

/** Every record of md.kline a read_committed consumer sees, as `code@minute` (`~` when forming). */
function committedRecords(cluster: FakeKafkaCluster): string[] {
  return cluster
    .readCommitted('md.kline')
    .map((r) => JSON.parse(r.value ?? '') as { code: string; ts: string; final: boolean })
    .map((v) => `${v.code}@${(Date.parse(v.ts) - T0) / MINUTE}${v.final ? '' : '~'}`);
}

describe.each([
  ['exactly once', {}],
  ['at least once', { delivery: 'at-least-once', transactionalId: undefined }],
] as [string, TestOptions][])('KafkaKlineSink, %s: each key in time order', (_, options) => {
  it('holds a series from begin to complete, then takes it oldest first; other series pass', async () => {
    const cluster = new FakeKafkaCluster();
    const sink = await open(cluster, options);
    sink.mark(mark('A.US', 'begin'));
    // The newest page first, its forming bar with it, then the older pages.
    for (const i of [4, 5]) sink.write(bar('A.US', i));
    sink.write(bar('A.US', 6, false));
    sink.write(bar('B.HK', 0));
    const during = await sink.checkpoint();
    expect(during.closedBars).toBe(1);
    expect(committedRecords(cluster)).toEqual(['B.HK@0']);
    expect(sink.watermarks()?.has('A.US|1') ?? false).toBe(false);
    for (const i of [2, 3, 0, 1]) sink.write(bar('A.US', i));
    expect(sink.stats().held).toBe(7);
    sink.mark(mark('A.US', 'complete'));
    expect(sink.stats().held).toBe(0);
    sink.write(bar('A.US', 6)); // after the end: taken at once
    await sink.checkpoint();
    expect(committedRecords(cluster)).toEqual([
      'B.HK@0',
      ...[0, 1, 2, 3, 4, 5].map((i) => `A.US@${i}`),
      'A.US@6~',
      'A.US@6',
    ]);
    await sink.close();
  });

  it('takes what it held, oldest first, when the history is cut short', async () => {
    const cluster = new FakeKafkaCluster();
    const sink = await open(cluster, options);
    sink.mark(mark('A.US', 'begin'));
    for (const i of [3, 4, 1, 2]) sink.write(bar('A.US', i));
    sink.mark(mark('A.US', 'cut-short'));
    await sink.checkpoint();
    expect(committedFinals(cluster)).toEqual(['A.US@1', 'A.US@2', 'A.US@3', 'A.US@4']);
    await sink.close();
  });

  it('takes an end without a begin, or a second begin, in its stride', async () => {
    const cluster = new FakeKafkaCluster();
    const sink = await open(cluster, options);
    sink.mark(mark('A.US', 'complete'));
    sink.mark(mark('A.US', 'begin'));
    sink.write(bar('A.US', 2));
    sink.mark(mark('A.US', 'begin'));
    sink.write(bar('A.US', 1));
    sink.mark(mark('A.US', 'complete'));
    await sink.checkpoint();
    expect(committedFinals(cluster)).toEqual(['A.US@1', 'A.US@2']);
    await sink.close();
  });
});

describe('KafkaKlineSink, exactly once: held bars and the watermarks', () => {
  it('commits nothing it holds: closed (or killed) while holding, the next sink has no watermark of them', async () => {
    const cluster = new FakeKafkaCluster();
    const first = await open(cluster);
    first.write(bar('A.US', 5));
    await first.checkpoint();
    first.mark(mark('A.US', 'begin'));
    for (const i of [3, 4]) first.write(bar('A.US', i));
    await first.checkpoint();
    await first.close();
    expect(committedFinals(cluster)).toEqual(['A.US@5']);

    const again = await open(cluster);
    expect(again.watermarks()?.get('A.US|1')).toEqual({
      first: T0 + 5 * MINUTE,
      last: T0 + 5 * MINUTE,
      rows: 1,
    });
    again.mark(mark('A.US', 'begin'));
    for (const i of [3, 4, 5]) again.write(bar('A.US', i)); // read again from the service
    again.mark(mark('A.US', 'complete'));
    await again.checkpoint();
    expect(committedFinals(cluster)).toEqual(['A.US@5', 'A.US@3', 'A.US@4']);
    expect(again.stats()).toMatchObject({ dropped: 1, committed: 2 });
    expect(again.watermarks()?.get('A.US|1')).toEqual({
      first: T0 + 3 * MINUTE,
      last: T0 + 5 * MINUTE,
      rows: 3,
    });
    await again.close();
  });

  it('releases more than maxBufferedRecords at once; the limit still stops writes beyond it', async () => {
    const cluster = new FakeKafkaCluster();
    const sink = await open(
      cluster,
      { maxBufferedRecords: 3 },
      { onOperation: (op) => (op === 'send' ? new Promise(() => undefined) : undefined) },
    );
    sink.mark(mark('A.US', 'begin'));
    for (let i = 9; i >= 0; i--) sink.write(bar('A.US', i));
    sink.mark(mark('A.US', 'complete'));
    expect(sink.stats().buffered).toBe(10);
    for (let i = 0; i < 3; i++) sink.write(bar('B.HK', i));
    expect(() => sink.write(bar('B.HK', 3))).toThrow(/more than maxBufferedRecords = 3 records/);
    await sink.close();
  });

  it('refuses a marker after close() with QF_CLOSED', async () => {
    const sink = await open(new FakeKafkaCluster());
    await sink.close();
    expect(() => sink.mark(mark('A.US', 'begin'))).toThrow(expect.objectContaining({ code: 'QF_CLOSED' }));
  });

  it('whatever the pages, forming updates and checkpoints: one ascending run per history, each final once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.constantFrom('forming', 'checkpoint', 'none'), { minLength: 12, maxLength: 12 }),
        async (pageSizes, between) => {
          const cluster = new FakeKafkaCluster();
          const sink = await open(cluster);
          const total = pageSizes.reduce((a, b) => a + b, 0);
          // Pages of a history read newest first, each oldest first within it.
          const pages: number[][] = [];
          let end = total;
          for (const size of pageSizes) {
            pages.push(Array.from({ length: size }, (_, k) => end - size + k));
            end -= size;
          }
          sink.mark(mark('A.US', 'begin'));
          for (const [p, page] of pages.entries()) {
            for (const i of page) sink.write(bar('A.US', i));
            const step = between[p % between.length];
            if (step === 'forming') sink.write(bar('A.US', total, false));
            if (step === 'checkpoint') await sink.checkpoint();
          }
          sink.mark(mark('A.US', 'complete'));
          await sink.checkpoint();
          const records = committedRecords(cluster);
          const finals = records.filter((r) => !r.endsWith('~'));
          expect(finals).toEqual(Array.from({ length: total }, (_, i) => `A.US@${i}`));
          // Forming updates of the newest bar come after every final older than it.
          const lastFinal = records.lastIndexOf(`A.US@${total - 1}`);
          expect(records.slice(0, lastFinal).filter((r) => r.endsWith('~'))).toEqual([]);
          await sink.close();
        },
      ),
      { numRuns: 100 },
    );
  });
});
