import type { AcquireResult, WindowSpec, WindowStore } from './window-store.js';

/**
 * The last `limit` start times of one key that are still inside its window, oldest first (starts
 * arrive in time order): a ring that grows by doubling, so a rule costs only what it holds.
 */
class StartLog {
  private times = new Float64Array(8);
  private head = 0;
  size = 0;
  /** The k-th most recent start (k = 1 is the newest), or undefined. */
  recent(k: number): number | undefined {
    if (k < 1 || k > this.size) return undefined;
    return this.times[(this.head + this.size - k) % this.times.length];
  }
  /**
   * Appends `t`, forgetting the oldest starts once `limit` are held and any start that left the
   * window (it can no longer block anything: starts arrive in time order).
   */
  push(t: number, limit: number, windowMs: number): void {
    while (this.size > 0 && (this.size >= limit || this.times[this.head]! <= t - windowMs)) {
      this.head = (this.head + 1) % this.times.length;
      this.size--;
    }
    if (this.size === this.times.length) this.grow(Math.min(Math.max(limit, 1), this.times.length * 2));
    this.times[(this.head + this.size) % this.times.length] = t;
    this.size++;
  }
  private grow(capacity: number): void {
    const next = new Float64Array(capacity);
    for (let i = 0; i < this.size; i++) next[i] = this.times[(this.head + i) % this.times.length]!;
    this.times = next;
    this.head = 0;
  }
}

/**
 * The in-process {@link WindowStore}: for each sliding key the last `limit` start times (a ring),
 * for each calendar bucket a counter. Exact: the earliest allowed start under a rule of `limit` per
 * `windowMs` is the `limit`-th most recent start plus `windowMs`.
 *
 * @example
 * ```ts
 * const store = new MemoryWindowStore();
 * const rule = { kind: 'sliding', key: 'rule:combined', windowMs: 1_025, limit: 1 } as const;
 * store.tryAcquire([rule], 0); // { acquired: true }
 * store.tryAcquire([rule], 500); // { acquired: false, retryAtMs: 1025 }
 * ```
 */
export class MemoryWindowStore implements WindowStore {
  private readonly logs = new Map<string, StartLog>();
  private readonly buckets = new Map<string, { count: number; endsAtMs: number }>();

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
    for (const spec of specs) {
      if (spec.kind === 'bucket') {
        const bucket = this.buckets.get(spec.key);
        if (bucket === undefined) this.buckets.set(spec.key, { count: 1, endsAtMs: spec.endsAtMs });
        else bucket.count++;
        continue;
      }
      let log = this.logs.get(spec.key);
      if (log === undefined) this.logs.set(spec.key, (log = new StartLog()));
      log.push(nowMs, spec.limit, spec.windowMs);
    }
    this.pruneBuckets(nowMs);
    return { acquired: true };
  }

  count(spec: WindowSpec, nowMs: number): number {
    if (spec.kind === 'bucket') return this.bucketCount(spec.key, nowMs);
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
