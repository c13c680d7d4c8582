/**
 * Exactly once across crashes and broker restarts, on the in-memory transactional Kafka: a
 * pipeline writes the final bars of a few series through KafkaKlineSink, process after process.
 * Each process opens the sink with the same transactional id, resumes each series from the sink's
 * own watermark (replaying a few bars it already committed), writes, checkpoints now and then, and
 * dies at a random driver operation: killed before it reaches the broker, killed after (its answer
 * lost), or paused there (a zombie that goes on once its successor runs). Besides, random
 * operations fail transiently, as while a broker restarts: before they take effect, or after (the
 * answer lost: a send that reached the broker, a commit that landed), which the sink must ride out
 * by redoing the transaction. The oracle knows only the scenario: a process that was neither
 * killed nor paused finishes (unless its open failed); after a last process runs to the end, a
 * read_committed consumer of `md.kline` sees each final bar of each series exactly once, with its
 * values, and the watermark topic's newest record per series covers them all.
 */
import { type BarUpdate, seriesKey } from '@quoteflow/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FakeKafkaCluster, type FakeDriverHooks } from '../../test-support/fake-transactional-kafka.js';
import { KafkaKlineSinkError } from './kafka-kline-sink-error.js';
import { KafkaKlineSink } from './kafka-kline-sink.js';

const T0 = Date.UTC(2026, 2, 2, 1, 30);
const MINUTE = 60_000;
const CODES = ['A.US', '700.HK', 'BTCUSDT'];

/** The values of bar `i` of a series: what the oracle expects back. */
function bar(code: string, i: number, final: boolean): BarUpdate {
  const c = CODES.indexOf(code);
  return {
    type: 'bar-update',
    code,
    klineType: 1,
    tsMs: T0 + i * MINUTE,
    open: 10 + c + i / 8,
    high: 11 + c + i / 8,
    low: 9 + c + i / 8,
    close: 10.5 + c + i / 8,
    volume: i % 5 === 0 ? null : i * 3,
    turnover: i * 31.5,
    readAtMs: T0 + (i + 1) * MINUTE + 1_000,
    receivedAtMs: T0 + (i + 1) * MINUTE + 1_020,
    final,
    revision: final ? 1 : 0,
  };
}

interface Process {
  /** The driver operation (1-based) at which it dies; past its last one, it does not. */
  readonly dieAt: number;
  readonly how: 'kill' | 'kill-after' | 'pause';
  /** How many committed bars per series it writes again when it resumes. */
  readonly replay: number;
  /** Checkpoint after this many writes. */
  readonly checkpointEvery: number;
  /** Write a forming update of the next bar after every this many finals (0: none). */
  readonly formingEvery: number;
  readonly maxBatchRecords: number;
  /** After bar i, write bar i - repeat again (0: none), as a pipeline replaying a little may. */
  readonly repeat: number;
  /**
   * Go on writing this many microtask turns after a checkpoint began, while it commits (it is
   * awaited before the next one); 0: wait for it.
   */
  readonly overlap: number;
  /** Driver operations (1-based) that fail transiently: before taking effect, or after. */
  readonly failures: ReadonlyMap<number, 'fail' | 'fail-after'>;
}

const processArb: fc.Arbitrary<Process> = fc.record({
  dieAt: fc.integer({ min: 1, max: 40 }),
  how: fc.constantFrom('kill', 'kill-after', 'pause'),
  replay: fc.nat(4),
  checkpointEvery: fc.integer({ min: 1, max: 7 }),
  formingEvery: fc.nat(3),
  maxBatchRecords: fc.integer({ min: 1, max: 4 }),
  repeat: fc.nat(3),
  overlap: fc.nat(40),
  failures: fc
    .array(fc.tuple(fc.integer({ min: 1, max: 40 }), fc.constantFrom('fail', 'fail-after' as const)), {
      maxLength: 6,
    })
    .map((list) => new Map(list)),
});

class Died extends Error {}

type Outcome = 'finished' | 'died' | 'open-failed' | 'fenced';

/**
 * One process: opens the sink, resumes, writes every bar left, checkpoints, closes. Resolves when
 * it finished, died (killed), could not open (a transient failure there: a supervisor would start
 * it again) or was fenced (as a zombie must be); `paused` resolves when a pause began.
 */
function runProcess(
  cluster: FakeKafkaCluster,
  p: Process,
  bars: number,
  series: readonly string[],
  gate: Promise<void>,
): { done: Promise<Outcome>; paused: Promise<void> } {
  let onDeath!: () => void;
  const death = new Promise<never>((_, reject) => (onDeath = () => reject(new Died())));
  death.catch(() => undefined);
  let onPause!: () => void;
  const paused = new Promise<void>((resolve) => (onPause = resolve));
  const hooks: FakeDriverHooks = {
    onOperation: (_op, n) => {
      if (n !== p.dieAt) return p.failures.get(n);
      if (p.how !== 'pause') return p.how;
      onPause();
      return gate;
    },
    onKilled: () => onDeath(),
  };
  const race = <T>(promise: Promise<T>): Promise<T> => Promise.race([promise, death]);
  let opened = false;
  const done = (async (): Promise<Outcome> => {
    try {
      const sink = await race(
        KafkaKlineSink.open({
          brokers: '127.0.0.1:9092',
          topicPrefix: 'md',
          transactionalId: 'worker-1',
          driver: cluster.factory(hooks),
          lingerMs: 0,
          maxBatchRecords: p.maxBatchRecords,
          retryMaxDelayMs: 1,
        }),
      );
      opened = true;
      const next = series.map((code) => {
        const last = sink.watermarks()?.get(seriesKey(code, 1))?.last;
        return last === undefined ? 0 : Math.max(0, (last - T0) / MINUTE + 1 - p.replay);
      });
      let writes = 0;
      let committing: Promise<unknown> = Promise.resolve();
      for (let i = Math.min(...next); i < bars; i++) {
        for (const [s, code] of series.entries()) {
          if (i < next[s]!) continue;
          sink.write(bar(code, i, true));
          if (p.repeat > 0 && i >= p.repeat) sink.write(bar(code, i - p.repeat, true));
          if (p.formingEvery > 0 && i % p.formingEvery === 0 && i + 1 < bars)
            sink.write(bar(code, i + 1, false));
          if (++writes % p.checkpointEvery !== 0) continue;
          await race(committing);
          committing = sink.checkpoint();
          committing.catch(() => undefined);
          if (p.overlap === 0) await race(committing);
          for (let turn = 0; turn < p.overlap; turn++) await Promise.resolve();
        }
      }
      await race(committing);
      await race(sink.checkpoint());
      await race(sink.close());
      return 'finished';
    } catch (err) {
      if (err instanceof Died) return 'died';
      // A process that lost its transactional id to a newer one must say so.
      if (err instanceof KafkaKlineSinkError && err.code === 'QF_FENCED') return 'fenced';
      // Opening is not redone: a transient failure there (or, a zombie reopening, a dead
      // successor's transaction holding the watermark topic) fails it.
      const atOpen = ['QF_KAFKA_UNREACHABLE', 'QF_KAFKA_WATERMARKS'];
      if (!opened && err instanceof KafkaKlineSinkError && atOpen.includes(err.code)) return 'open-failed';
      throw err;
    }
  })();
  return { done, paused };
}

describe('KafkaKlineSink, exactly once across crashes (in-memory Kafka)', () => {
  it('commits each final bar of each series exactly once, with its values, whatever the crashes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: CODES.length }),
        fc.integer({ min: 1, max: 14 }),
        fc.array(processArb, { maxLength: 6 }),
        async (seriesCount, bars, processes) => {
          const cluster = new FakeKafkaCluster();
          const series = CODES.slice(0, seriesCount);
          let release!: () => void;
          const gate = new Promise<void>((resolve) => (release = resolve));
          const zombies: Promise<unknown>[] = [];
          for (const p of processes) {
            const run = runProcess(cluster, p, bars, series, gate);
            // A paused process stays behind, to go on while its successors run.
            const outcome = await Promise.race([run.done, run.paused.then(() => 'paused' as const)]);
            if (outcome === 'paused') zombies.push(run.done);
            // Alone with the broker, a process rides every transient failure out.
            else if (outcome !== 'died') expect(outcome).toMatch(/^(finished|open-failed)$/);
          }
          release();
          await Promise.all(zombies);
          const last = runProcess(
            cluster,
            { ...processArbDefaults, dieAt: Number.MAX_SAFE_INTEGER, failures: new Map() },
            bars,
            series,
            gate,
          );
          expect(await last.done).toBe('finished');

          // The oracle: read_committed, each (code, ts) once, with the values written.
          const finals = cluster
            .readCommitted('md.kline')
            .map((r) => ({ key: r.key, value: JSON.parse(r.value ?? '') as Record<string, unknown> }))
            .filter((m) => m.value['final'] === true);
          const expected = series.flatMap((code) =>
            Array.from({ length: bars }, (_, i) => {
              const b = bar(code, i, true);
              return {
                key: code,
                value: {
                  code,
                  kline_type: 1,
                  ts: new Date(b.tsMs).toISOString(),
                  open: b.open,
                  high: b.high,
                  low: b.low,
                  close: b.close,
                  volume: b.volume,
                  turnover: b.turnover,
                  read_at: new Date(b.readAtMs).toISOString(),
                  final: true,
                },
              };
            }),
          );
          const order = (m: { key: string; value: Record<string, unknown> }) =>
            `${m.key} ${String(m.value['ts'])}`;
          expect([...finals].sort((a, b) => order(a).localeCompare(order(b)))).toEqual(
            [...expected].sort((a, b) => order(a).localeCompare(order(b))),
          );
          const marks = new Map(
            cluster.readCommitted('md.kline.watermarks').map((r) => [r.key, JSON.parse(r.value ?? '')]),
          );
          for (const code of series)
            expect(marks.get(seriesKey(code, 1))).toMatchObject({
              first: T0,
              last: T0 + (bars - 1) * MINUTE,
              rows: bars,
            });
        },
      ),
      { numRuns: 300, examples: [ZOMBIE_WITH_A_STALE_VIEW] },
    );
  });
});

const processArbDefaults: Omit<Process, 'dieAt' | 'failures'> = {
  how: 'kill',
  replay: 2,
  checkpointEvery: 3,
  formingEvery: 2,
  maxBatchRecords: 3,
  repeat: 1,
  overlap: 5,
};

/**
 * Found by this test: a process whose commit failed is paused while it replaces its producer; its
 * successor (the same transactional id) commits bar 1; resumed, the zombie's new producer takes the
 * id back, and its transaction (a forming update) has no series to check. Unless the watermark
 * read after the replacement also notices the successor's commit under its id, it goes on with its
 * stale watermarks and commits bar 1 again.
 */
const ZOMBIE_WITH_A_STALE_VIEW: [number, number, Process[]] = [
  1,
  2,
  [
    { dieAt: 7, how: 'kill-after', replay: 0, formingEvery: 0, failures: new Map() },
    {
      dieAt: 14,
      how: 'pause',
      replay: 1,
      formingEvery: 1,
      failures: new Map([
        [4, 'fail'],
        [8, 'fail'],
        [13, 'fail'],
      ]),
    },
    { dieAt: 8, how: 'kill', replay: 0, formingEvery: 0, failures: new Map() },
  ].map((p) => ({ ...p, checkpointEvery: 1, maxBatchRecords: 1, repeat: 0, overlap: 0 }) as Process),
];
