import type { EndpointKind } from '../../plans.js';
import type { Priority } from '../../request-scheduler.js';
import type { SourceStats } from '../plan-scheduler-stats.js';

/**
 * Upper bounds of the wait buckets of {@link SourceStats}, in ms (queue entry to start). They span
 * an immediate start, the spacing of one plan slot (50 ms to 1 s), waits behind a busy endpoint
 * (seconds) and a backfill behind a long backlog (minutes); the last bucket is unbounded.
 */
export const WAIT_BUCKETS_MS = [
  10,
  50,
  100,
  250,
  500,
  1_000,
  2_500,
  5_000,
  10_000,
  30_000,
  60_000,
  300_000,
  Number.POSITIVE_INFINITY,
] as const;

interface SourceRecord {
  readonly sourceId: string;
  inFlight: number;
  granted: number;
  readonly requests: Map<string, { endpoint: EndpointKind; priority: Priority; granted: number }>;
  recentGranted: number;
  waitCount: number;
  waitSumMs: number;
  waitMaxMs: number;
  /** Per bucket (not cumulative): starts whose wait falls in it, and their total wait. */
  readonly bucketCounts: number[];
  readonly bucketSumsMs: number[];
}

/** Recent starts kept to compute shares: a circular log of (instant, source). */
interface RecentStart {
  readonly atMs: number;
  readonly record: SourceRecord;
}

/** Source records kept before idle ones are forgotten (ids named per subscription never end). */
const MAX_SOURCES = 256;

/**
 * Per-source accounting of the scheduler: starts by endpoint and priority, starts within a recent
 * window (for shares), requests in flight, and a wait histogram. Bounded: once more than
 * {@link MAX_SOURCES} sources are known, the longest-idle ones (nothing queued, nothing in
 * flight, no recent start) are forgotten.
 */
export class SourceLedger {
  private readonly records = new Map<string, SourceRecord>();
  private recent: RecentStart[] = [];
  private recentHead = 0;
  /** Size above which {@link prune} looks for idle sources (doubles while all are busy). */
  private pruneAbove = MAX_SOURCES;

  /** @param windowMs - the window of {@link SourceStats.recentShare}, in ms. */
  constructor(readonly windowMs: number) {}

  /** One start of `sourceId` after waiting `waitMs`. */
  started(sourceId: string, endpoint: EndpointKind, priority: Priority, waitMs: number, nowMs: number): void {
    const record = this.record(sourceId);
    record.inFlight++;
    record.granted++;
    const key = `${priority} ${endpoint}`;
    const row = record.requests.get(key);
    if (row === undefined) record.requests.set(key, { endpoint, priority, granted: 1 });
    else row.granted++;
    record.waitCount++;
    record.waitSumMs += waitMs;
    record.waitMaxMs = Math.max(record.waitMaxMs, waitMs);
    const bucket = WAIT_BUCKETS_MS.findIndex((le) => waitMs <= le);
    record.bucketCounts[bucket]!++;
    record.bucketSumsMs[bucket]! += waitMs;
    this.expire(nowMs);
    this.recent.push({ atMs: nowMs, record });
    record.recentGranted++;
  }

  /** A start of `sourceId` settled. */
  settled(sourceId: string): void {
    const record = this.records.get(sourceId);
    if (record !== undefined) record.inFlight--;
  }

  /**
   * Every source with a record or in `queuedIds` (queued, never started), by id; `queuedOf` gives
   * the jobs queued now.
   */
  snapshot(
    nowMs: number,
    queuedOf: (sourceId: string) => number,
    queuedIds: Iterable<string>,
  ): SourceStats[] {
    this.expire(nowMs);
    const recentTotal = this.recent.length - this.recentHead;
    const records = new Map(this.records);
    for (const id of queuedIds) if (!records.has(id)) records.set(id, emptyRecord(id));
    return [...records.values()]
      .sort((a, b) => (a.sourceId < b.sourceId ? -1 : a.sourceId > b.sourceId ? 1 : 0))
      .map((r) => {
        let count = 0;
        let sumMs = 0;
        const buckets = WAIT_BUCKETS_MS.map((leMs, i) => {
          count += r.bucketCounts[i]!;
          sumMs += r.bucketSumsMs[i]!;
          return { leMs, count, sumMs };
        });
        return {
          sourceId: r.sourceId,
          queued: queuedOf(r.sourceId),
          inFlight: r.inFlight,
          granted: r.granted,
          requests: [...r.requests.values()].map((row) => ({ ...row })),
          recentGranted: r.recentGranted,
          recentShare: recentTotal === 0 ? 0 : r.recentGranted / recentTotal,
          wait: { count: r.waitCount, sumMs: r.waitSumMs, maxMs: r.waitMaxMs, buckets },
        };
      });
  }

  /**
   * Forgets the longest-idle sources once there are too many; `busy` says whether a source has
   * jobs queued.
   */
  prune(busy: (sourceId: string) => boolean): void {
    if (this.records.size <= this.pruneAbove) return;
    const idle = [...this.records.values()].filter(
      (r) => r.inFlight === 0 && r.recentGranted === 0 && !busy(r.sourceId),
    );
    // Insertion order is first-seen order: the oldest idle sources go first.
    for (const r of idle.slice(0, this.records.size - MAX_SOURCES)) this.records.delete(r.sourceId);
    // Looked at again only after the count doubles, so pruning stays amortised O(1) per start.
    this.pruneAbove = Math.max(MAX_SOURCES, 2 * this.records.size);
  }

  private record(sourceId: string): SourceRecord {
    let record = this.records.get(sourceId);
    if (record === undefined) this.records.set(sourceId, (record = emptyRecord(sourceId)));
    return record;
  }

  /** Drops starts older than the window from the recent log. */
  private expire(nowMs: number): void {
    const recent = this.recent;
    while (this.recentHead < recent.length && recent[this.recentHead]!.atMs <= nowMs - this.windowMs) {
      recent[this.recentHead++]!.record.recentGranted--;
    }
    if (this.recentHead > 1024 && this.recentHead * 2 > recent.length) {
      this.recent = recent.slice(this.recentHead);
      this.recentHead = 0;
    }
  }
}

function emptyRecord(sourceId: string): SourceRecord {
  return {
    sourceId,
    inFlight: 0,
    granted: 0,
    requests: new Map(),
    recentGranted: 0,
    waitCount: 0,
    waitSumMs: 0,
    waitMaxMs: 0,
    bucketCounts: WAIT_BUCKETS_MS.map(() => 0),
    bucketSumsMs: WAIT_BUCKETS_MS.map(() => 0),
  };
}
