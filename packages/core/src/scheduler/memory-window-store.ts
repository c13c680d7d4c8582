import { SlotCounts } from './internal/slot-counts.js';
import type { AcquireResult, StartTicket, WindowSpec, WindowStore } from './window-store.js';

/**
 * The times that still matter to one key, ascending: settled (or start-anchored) instants, then
 * `Infinity` for each settle-anchored request still in flight (it may yet arrive "now"). Holds at
 * most `limit` entries plus those in flight: the k-th most recent entry is all a rule asks for.
 */
class StartLog {
  private readonly times: number[] = [];
  get size(): number {
    return this.times.length;
  }
  /** The k-th most recent entry (k = 1 is the newest; `Infinity` while in flight), or undefined. */
  recent(k: number): number | undefined {
    if (k < 1 || k > this.times.length) return undefined;
    return this.times[this.times.length - k];
  }
  /**
   * Records `t` at `nowMs` (`t` is `Infinity` for a request in flight), forgetting settled
   * entries that can block nothing any more.
   */
  push(t: number, nowMs: number, limit: number, windowMs: number): void {
    const times = this.times;
    let drop = 0;
    // Entries are ascending, so the oldest go first: once `limit` newer ones exist, or once out of
    // the window. An in-flight entry (Infinity) is never dropped.
    while (
      drop < times.length &&
      Number.isFinite(times[drop]!) &&
      (times.length - drop >= limit || times[drop]! <= nowMs - windowMs)
    ) {
      drop++;
    }
    if (drop > 0) times.splice(0, drop);
    this.insert(t);
  }
  /** One in-flight entry settled at `t`. */
  settle(t: number): void {
    if (this.times.at(-1) !== Number.POSITIVE_INFINITY) return;
    this.times.pop();
    this.insert(t);
  }
  private insert(t: number): void {
    const times = this.times;
    let lo = 0;
    let hi = times.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (times[mid]! <= t) lo = mid + 1;
      else hi = mid;
    }
    times.splice(lo, 0, t);
  }
}

/** Counters of a rolling window nothing was recorded under yet. */
const NO_SLOTS = new SlotCounts();

/**
 * The in-process {@link WindowStore}: for each sliding key the last `limit` times (plus requests in
 * flight), for each calendar bucket a counter. Exact: the earliest allowed start under a rule of
 * `limit` per `windowMs` is the `limit`-th most recent entry plus `windowMs` (never, while that
 * entry is a settle-anchored request in flight).
 *
 * @example
 * ```ts
 * const store = new MemoryWindowStore();
 * const rule = { kind: 'sliding', key: 'rule:combined', windowMs: 1_025, limit: 1 } as const;
 * store.tryAcquire([rule], 0); // { acquired: true, ticket }
 * store.tryAcquire([rule], 500); // { acquired: false, retryAtMs: 1025 }
 * ```
 */
export class MemoryWindowStore implements WindowStore {
  private readonly logs = new Map<string, StartLog>();
  private readonly buckets = new Map<string, { count: number; endsAtMs: number }>();
  private readonly rolling = new Map<string, SlotCounts>();

  earliestStart(
    specs: readonly WindowSpec[],
    nowMs: number,
    extraStarts?: ReadonlyMap<string, number>,
  ): number {
    let earliest = nowMs;
    for (const spec of specs) {
      const extra = extraStarts?.get(spec.key) ?? 0;
      if (spec.kind === 'bucket') {
        const count = this.bucketCount(spec.key, nowMs) + extra;
        if (count >= spec.limit) earliest = Math.max(earliest, spec.endsAtMs);
        continue;
      }
      if (spec.kind === 'rolling') {
        const slots = this.rolling.get(spec.key) ?? NO_SLOTS;
        earliest = Math.max(earliest, slots.earliest(nowMs, spec, extra));
        continue;
      }
      // With `extra` hypothetical starts at nowMs, the limit-th most recent start is the
      // (limit - extra)-th most recent recorded one, or one of the hypothetical ones.
      const k = spec.limit - extra;
      const blocking = k <= 0 ? nowMs : this.logs.get(spec.key)?.recent(k);
      if (blocking !== undefined) earliest = Math.max(earliest, blocking + spec.windowMs);
    }
    return earliest;
  }

  tryAcquire(specs: readonly WindowSpec[], nowMs: number): AcquireResult {
    const earliest = this.earliestStart(specs, nowMs);
    if (earliest > nowMs) return { acquired: false, retryAtMs: earliest };
    const settleKeys: string[] = [];
    for (const spec of specs) {
      if (spec.kind === 'bucket') {
        const bucket = this.buckets.get(spec.key);
        if (bucket === undefined) this.buckets.set(spec.key, { count: 1, endsAtMs: spec.endsAtMs });
        else bucket.count++;
        continue;
      }
      if (spec.kind === 'rolling') {
        let slots = this.rolling.get(spec.key);
        if (slots === undefined) this.rolling.set(spec.key, (slots = new SlotCounts()));
        slots.record(nowMs, spec.slotMs, spec.windowMs);
        continue;
      }
      let log = this.logs.get(spec.key);
      if (log === undefined) this.logs.set(spec.key, (log = new StartLog()));
      if (spec.anchor === 'settle') {
        settleKeys.push(spec.key);
        log.push(Number.POSITIVE_INFINITY, nowMs, spec.limit, spec.windowMs);
      } else {
        log.push(nowMs, nowMs, spec.limit, spec.windowMs);
      }
    }
    this.pruneBuckets(nowMs);
    return { acquired: true, ticket: { settleKeys } };
  }

  settle(ticket: StartTicket, atMs: number): void {
    for (const key of ticket.settleKeys) this.logs.get(key)?.settle(atMs);
  }

  count(spec: WindowSpec, nowMs: number): number {
    if (spec.kind === 'bucket') return this.bucketCount(spec.key, nowMs);
    if (spec.kind === 'rolling') return this.rolling.get(spec.key)?.countAt(nowMs, spec.windowMs) ?? 0;
    const log = this.logs.get(spec.key);
    if (log === undefined) return 0;
    let n = 0;
    for (let k = 1; k <= log.size; k++) {
      if (log.recent(k)! <= nowMs - spec.windowMs) break;
      n++;
    }
    return n;
  }

  clear(): void {
    this.logs.clear();
    this.buckets.clear();
    this.rolling.clear();
  }

  private bucketCount(key: string, nowMs: number): number {
    const bucket = this.buckets.get(key);
    return bucket === undefined || bucket.endsAtMs <= nowMs ? 0 : bucket.count;
  }

  private pruneBuckets(nowMs: number): void {
    if (this.buckets.size < 8) return;
    for (const [key, bucket] of this.buckets) if (bucket.endsAtMs <= nowMs) this.buckets.delete(key);
  }
}
