import { describe, expect, it } from 'vitest';
import { ManualClock, type BarUpdate, type HistoryMarker, seriesKey } from '@quoteflow/core';
import { Subject } from 'rxjs';
import { CommitControl, commitTo } from './commit-to.js';
import type { CommittingSink, SinkCheckpoint } from './committing-sink.js';
import type { SeriesWatermark } from './files/dataset-log-format.js';
import { SeriesIntake } from './series-intake.js';

const T0 = Date.UTC(2026, 0, 5, 1, 30);
const update = (i: number, final = true): BarUpdate => ({
  type: 'bar-update',
  code: 'BTCUSDT',
  klineType: 1,
  tsMs: T0 + i * 60_000,
  open: 1,
  high: 1,
  low: 1,
  close: 1,
  volume: 1,
  turnover: 1,
  readAtMs: T0,
  receivedAtMs: T0,
  final,
  revision: 0,
});

/** A committing sink in memory: what it committed, when, and a switch to make it fail. */
class MemorySink implements CommittingSink {
  readonly committed: number[] = [];
  readonly checkpointsAt: number[] = [];
  taken: number[] = [];
  failWith: Error | undefined;
  readonly #intake = new SeriesIntake(new Map());
  constructor(
    readonly name: string,
    readonly checkpointEveryMs: number,
    private readonly clock: ManualClock,
  ) {}
  watermarks(): ReadonlyMap<string, SeriesWatermark> {
    return this.#intake.committed;
  }
  write(u: BarUpdate): void {
    if (u.final && this.#intake.take(u)) this.taken.push(u.tsMs);
  }
  async checkpoint(): Promise<SinkCheckpoint> {
    await Promise.resolve();
    if (this.failWith !== undefined) throw this.failWith;
    const series = this.#intake.drain();
    this.#intake.commit();
    this.committed.push(...this.taken);
    this.checkpointsAt.push(this.clock.now() - T0);
    const closedBars = this.taken.length;
    this.taken = [];
    return { sink: this.name, closedBars, series, files: [] };
  }
  async refresh(): Promise<void> {}
  async close(): Promise<void> {}
}

const history = (code: string, phase: HistoryMarker['phase']): HistoryMarker => ({
  type: 'history',
  code,
  klineType: 1,
  phase,
});

/** A sink that takes history markers: what it was handed, in order (`w<i>` for a write, `checkpoint`). */
class MarkingSink extends MemorySink {
  readonly log: string[] = [];
  override write(u: BarUpdate): void {
    this.log.push(`w${(u.tsMs - T0) / 60_000}`);
    super.write(u);
  }
  mark(m: HistoryMarker): void {
    if (this.failWith !== undefined) throw this.failWith;
    this.log.push(`${m.phase} ${m.code}`);
  }
  override async checkpoint(): Promise<SinkCheckpoint> {
    this.log.push('checkpoint');
    return super.checkpoint();
  }
}

/** A Kafka-like sink that takes history markers beside a files-like one that does not. */
function setupMarking() {
  const clock = new ManualClock(T0);
  const kafka = new MarkingSink('kafka', 1_000, clock);
  const files = new MemorySink('files', 30_000, clock);
  const input = new Subject<BarUpdate | HistoryMarker>();
  let error: unknown;
  let completed = false;
  const sub = input.pipe(commitTo([files, kafka], { clock })).subscribe({
    error: (e: unknown) => (error = e),
    complete: () => (completed = true),
  });
  return { clock, kafka, files, input, sub, error: () => error, completed: () => completed };
}

function setup() {
  const clock = new ManualClock(T0);
  const kafka = new MemorySink('kafka', 1_000, clock);
  const files = new MemorySink('files', 30_000, clock);
  const input = new Subject<BarUpdate>();
  const control = new CommitControl();
  const seen: SinkCheckpoint[] = [];
  let error: unknown;
  let completed = false;
  const sub = input.pipe(commitTo([kafka, files], { clock, control })).subscribe({
    next: (c) => seen.push(c),
    error: (e: unknown) => (error = e),
    complete: () => (completed = true),
  });
  return { clock, kafka, files, input, control, seen, sub, error: () => error, completed: () => completed };
}

describe('commitTo', () => {
  it('checkpoints each sink on its own schedule, on the clock, and emits what each committed', async () => {
    const t = setup();
    t.input.next(update(0));
    t.input.next(update(1, false));
    await t.clock.advance(1_000);
    expect(t.kafka.committed).toEqual([update(0).tsMs]);
    expect(t.files.committed).toEqual([]);
    t.input.next(update(1));
    await t.clock.advance(29_000);
    expect(t.kafka.checkpointsAt).toHaveLength(30);
    expect(t.files.checkpointsAt).toEqual([30_000]);
    expect(t.files.committed).toEqual([update(0).tsMs, update(1).tsMs]);
    expect(t.seen.filter((c) => c.sink === 'files')).toEqual([
      { sink: 'files', closedBars: 2, series: expect.any(Map), files: [] },
    ]);
    expect(t.seen.find((c) => c.sink === 'files')!.series.get(seriesKey('BTCUSDT', 1))).toEqual({
      first: update(0).tsMs,
      last: update(1).tsMs,
      rows: 2,
    });
    t.sub.unsubscribe();
  });

  it('commits every sink at completion before it completes, and nothing after an unsubscribe', async () => {
    const t = setup();
    t.input.next(update(0));
    t.input.complete();
    await t.clock.advance(0);
    expect(t.completed()).toBe(true);
    expect([t.kafka.committed, t.files.committed]).toEqual([[update(0).tsMs], [update(0).tsMs]]);
    expect(t.clock.pendingTimers).toBe(0);

    const u = setup();
    u.input.next(update(0));
    u.sub.unsubscribe();
    await u.clock.advance(60_000);
    expect([u.kafka.committed, u.files.committed]).toEqual([[], []]);
  });

  it('errors with a failed sink after the other sinks committed what they took', async () => {
    const t = setup();
    t.input.next(update(0));
    t.kafka.failWith = new Error('broker gone');
    await t.clock.advance(1_000);
    expect((t.error() as Error).message).toBe('broker gone');
    expect(t.files.committed).toEqual([update(0).tsMs]);
    expect(t.clock.pendingTimers).toBe(0);
  });

  it('forwards a source error after the final checkpoints', async () => {
    const t = setup();
    t.input.next(update(0));
    t.input.error(new Error('token refused'));
    await t.clock.advance(0);
    expect((t.error() as Error).message).toBe('token refused');
    expect(t.files.committed).toEqual([update(0).tsMs]);
  });

  it('checkpoints on demand through its control, and refuses once it is not running', async () => {
    const t = setup();
    t.input.next(update(0));
    const done = await t.control.checkpoint();
    expect(done.map((c) => [c.sink, c.closedBars])).toEqual([
      ['kafka', 1],
      ['files', 1],
    ]);
    t.sub.unsubscribe();
    await expect(t.control.checkpoint()).rejects.toMatchObject({ code: 'QF_CLOSED' });
  });

  it('hands history markers, in stream order with the updates, to the sinks that take them', async () => {
    const t = setupMarking();
    t.input.next(history('BTCUSDT', 'begin'));
    t.input.next(update(1));
    t.input.next(update(0));
    t.input.next(history('BTCUSDT', 'complete'));
    await t.clock.advance(1_000);
    expect(t.kafka.log).toEqual(['begin BTCUSDT', 'w1', 'w0', 'complete BTCUSDT', 'checkpoint']);
    t.input.complete();
    await t.clock.advance(0);
    // Nothing was open at the end: nothing cut short.
    expect(t.kafka.log.slice(5)).toEqual(['checkpoint']);
    expect(t.files.committed).toEqual([update(1).tsMs, update(0).tsMs]);
    expect(t.completed()).toBe(true);
  });

  it('cuts short each history still open when the source completes, before the final checkpoints', async () => {
    const t = setupMarking();
    t.input.next(history('BTCUSDT', 'begin'));
    t.input.next(history('ETHUSDT', 'begin'));
    t.input.next(history('ETHUSDT', 'complete'));
    t.input.next(update(0));
    t.input.complete();
    await t.clock.advance(0);
    expect(t.kafka.log).toEqual([
      'begin BTCUSDT',
      'begin ETHUSDT',
      'complete ETHUSDT',
      'w0',
      'cut-short BTCUSDT',
      'checkpoint',
    ]);
    expect(t.completed()).toBe(true);
  });

  it('cuts short what is open when the source errors, and when another sink fails; not on an unsubscribe', async () => {
    const t = setupMarking();
    t.input.next(history('BTCUSDT', 'begin'));
    t.input.error(new Error('token refused'));
    await t.clock.advance(0);
    expect(t.kafka.log).toEqual(['begin BTCUSDT', 'cut-short BTCUSDT', 'checkpoint']);
    expect((t.error() as Error).message).toBe('token refused');

    const u = setupMarking();
    u.input.next(history('BTCUSDT', 'begin'));
    u.files.failWith = new Error('disk full');
    await u.clock.advance(30_000);
    expect((u.error() as Error).message).toBe('disk full');
    expect(u.kafka.log.slice(-2)).toEqual(['cut-short BTCUSDT', 'checkpoint']);

    const v = setupMarking();
    v.input.next(history('BTCUSDT', 'begin'));
    v.sub.unsubscribe();
    await v.clock.advance(60_000);
    expect(v.kafka.log).toEqual(['begin BTCUSDT']);
  });

  it('errors with the failure of a sink that refuses a marker, after the others committed', async () => {
    const t = setupMarking();
    t.input.next(update(0));
    t.kafka.failWith = new Error('closed');
    t.input.next(history('BTCUSDT', 'begin'));
    await t.clock.advance(0);
    expect((t.error() as Error).message).toBe('closed');
    expect(t.files.committed).toEqual([update(0).tsMs]);
  });
});
