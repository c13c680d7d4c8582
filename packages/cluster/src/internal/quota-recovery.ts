import type { BucketSpec, RollingWindowSpec, SlidingWindowSpec } from '@quoteflow/core';
import type { Redis } from 'ioredis';
import { RESEED_SCRIPT, WATCH_SCRIPT } from './quota-recovery-scripts.js';
import type { SharedSpecs, SharedWindows } from './shared-windows.js';

/** A rolling window's counts are read (and re-seeded) summed per hour: 24 numbers, not 1,441. */
const ROLLING_AGGREGATE_MS = 3_600_000;

/** What the recovery needs from its quota. */
export interface QuotaRecoveryOptions {
  readonly client: Redis;
  readonly namespace: string;
  readonly windows: SharedWindows;
  /** This process's id among the token's participants. */
  readonly participant: string;
  readonly holdMs: number;
  readonly graceMs: number;
  /** How long a start matters to a sliding window (longest window plus the in-flight bound), in ms. */
  readonly horizonMs: number;
  /** Added to a sliding window for its key's TTL, in ms. */
  readonly keyTtlExtraMs: number;
}

/** One of this worker's entries in the sliding windows. */
interface OwnEntry {
  /** The sliding windows it counts in (Redis keys). */
  readonly sliding: readonly SlidingWindowSpec[];
  /** The entry's score: its in-flight bound, then its settle time. */
  scoreMs: number;
}

/** A day counter: the count last read from Redis and own starts since. */
interface BucketView {
  readonly spec: BucketSpec;
  observed: number;
  ownSince: number;
}

/** A rolling window: its hourly sums last read from Redis and own starts since, per slot end. */
interface RollingView {
  readonly spec: RollingWindowSpec;
  observed: [string, number][];
  readonly ownSince: Map<number, number>;
}

/**
 * What one worker knows it sent, and what it last read of everyone's use: enough to write back
 * into Redis, conservatively, what a loss of Redis's data erased (see `quota-recovery-scripts.ts`).
 * Reads every watch; writes only on a re-seed.
 */
export class QuotaRecovery {
  private readonly history = new Map<string, OwnEntry>();
  private readonly buckets = new Map<string, BucketView>();
  private readonly rolling = new Map<string, RollingView>();
  /** Participants with a start in some window at the last watch. */
  private active: readonly string[] = [];

  constructor(private readonly options: QuotaRecoveryOptions) {
    const client = options.client as Redis & Record<string, unknown>;
    if (typeof client.qfQuotaWatch !== 'function') {
      client.defineCommand('qfQuotaWatch', { lua: WATCH_SCRIPT });
      client.defineCommand('qfQuotaReseed', { lua: RESEED_SCRIPT });
    }
  }

  /** A start of this worker, recorded by Redis at `serverMs` under `specs`. */
  recordStart(id: string, serverMs: number, specs: SharedSpecs, boundMs: number): void {
    this.history.set(id, { sliding: specs.sliding, scoreMs: serverMs + boundMs });
    const horizon = serverMs - this.options.windows.longestSlidingMs;
    // Oldest first: stop at the first entry still in a window (a few settled ones may linger).
    for (const [key, entry] of this.history) {
      if (entry.scoreMs > horizon) break;
      this.history.delete(key);
    }
    for (const spec of specs.buckets) this.bucketView(spec).ownSince++;
    for (const spec of specs.rolling) {
      const view = this.rollingView(spec);
      const slotEnd = Math.ceil(serverMs / spec.slotMs) * spec.slotMs;
      view.ownSince.set(slotEnd, (view.ownSince.get(slotEnd) ?? 0) + 1);
      for (const end of view.ownSince.keys()) if (end <= serverMs - spec.windowMs) view.ownSince.delete(end);
    }
    for (const [key, view] of this.buckets)
      if (view.spec.endsAtMs < serverMs - 60_000) this.buckets.delete(key);
  }

  /** The request `id` settled at `atMs` (Redis time): its entries count from then. */
  settled(id: string, atMs: number): void {
    const own = this.history.get(id);
    if (own !== undefined && atMs > 0) own.scoreMs = atMs;
  }

  /**
   * Reads the shared state for generation `epoch` (opening a new generation when the data was
   * lost); returns the generation Redis holds now. Remembers the active participants and the
   * counters only while the generation is still `epoch`.
   */
  async watch(epoch: string, now: number): Promise<string> {
    const specs = this.options.windows.at('kline', now);
    const ns = this.options.namespace;
    const keys = [
      `${ns}:quota:epoch`,
      `${ns}:quota:members`,
      `${ns}:quota:expected`,
      `${ns}:quota:reseeded`,
      `${ns}:quota:watchers`,
      ...specs.buckets.map((b) => b.key),
      ...specs.rolling.flatMap((r) => [r.key, `${r.key}:n`]),
    ];
    const args: (string | number)[] = [
      epoch,
      Math.ceil(this.options.holdMs),
      Math.ceil(this.options.graceMs),
      this.options.participant,
      Math.ceil(this.options.horizonMs),
      specs.buckets.length,
      specs.rolling.length,
    ];
    for (const r of specs.rolling) args.push(r.windowMs, ROLLING_AGGREGATE_MS);
    const client = this.options.client as unknown as {
      qfQuotaWatch(n: number, ...a: (string | number)[]): Promise<unknown>;
    };
    const [, epochId, active, days, rolling] = (await client.qfQuotaWatch(keys.length, ...keys, ...args)) as [
      number,
      string,
      string[],
      number[],
      string[][],
    ];
    if (String(epochId) !== epoch) return String(epochId);
    this.active = active.filter((_, i) => i % 2 === 0);
    specs.buckets.forEach((spec, i) => {
      const view = this.bucketView(spec);
      view.observed = Number(days[i] ?? 0);
      view.ownSince = 0;
    });
    specs.rolling.forEach((spec, i) => {
      const view = this.rollingView(spec);
      const flat = rolling[i] ?? [];
      view.observed = [];
      for (let k = 0; k + 1 < flat.length; k += 2) view.observed.push([String(flat[k]), Number(flat[k + 1])]);
      view.ownSince.clear();
    });
    return epoch;
  }

  /**
   * Writes this worker into generation `epoch`: its own starts still in a sliding window, its view
   * of the day counters and the rolling window, and the participants it saw active (they must
   * re-seed too before the hold ends early). Resolves false when the generation moved on meanwhile.
   */
  async reseed(epoch: string): Promise<boolean> {
    const ns = this.options.namespace;
    const bySliding = new Map<string, { ttlMs: number; times: number[] }>();
    let newestStartMs = 0;
    for (const h of this.history.values()) {
      newestStartMs = Math.max(newestStartMs, h.scoreMs);
      for (const s of h.sliding) {
        let entry = bySliding.get(s.key);
        if (entry === undefined)
          bySliding.set(s.key, (entry = { ttlMs: s.windowMs + this.options.keyTtlExtraMs, times: [] }));
        entry.times.push(h.scoreMs);
      }
    }
    const buckets = [...this.buckets.values()];
    const rolling = [...this.rolling.values()];
    const expected = new Set(this.active);
    if (this.history.size > 0) expected.add(this.options.participant);
    const keys = [
      `${ns}:quota:epoch`,
      `${ns}:quota:seq`,
      `${ns}:quota:expected`,
      `${ns}:quota:reseeded`,
      `${ns}:quota:members`,
      ...bySliding.keys(),
      ...buckets.map((b) => b.spec.key),
      ...buckets.map((b) => `${b.spec.key}:base`),
      ...rolling.flatMap((r) => [r.spec.key, `${r.spec.key}:n`, `${r.spec.key}:base`]),
    ];
    const args: (string | number)[] = [
      epoch,
      this.options.participant,
      Math.ceil(this.options.graceMs),
      Math.ceil(this.options.holdMs),
      newestStartMs,
      Math.ceil(this.options.horizonMs),
      bySliding.size,
      buckets.length,
      expected.size,
      rolling.length,
      ...expected,
    ];
    for (const entry of bySliding.values()) args.push(entry.ttlMs, entry.times.length, ...entry.times);
    for (const b of buckets) args.push(b.observed, b.ownSince, b.spec.endsAtMs);
    for (const r of rolling) {
      args.push(r.spec.windowMs + r.spec.slotMs + 60_000, r.observed.length);
      for (const [end, count] of r.observed) args.push(end, count);
      args.push(r.ownSince.size);
      for (const [end, count] of r.ownSince) args.push(end, count);
    }
    const client = this.options.client as unknown as {
      qfQuotaReseed(n: number, ...a: (string | number)[]): Promise<unknown>;
    };
    return (await client.qfQuotaReseed(keys.length, ...keys, ...args)) === 1;
  }

  /**
   * The token's starts under a day counter or the rolling 24 hours (their Redis keys) at `nowMs`:
   * every worker's as last read from Redis, plus this worker's own since; `undefined` before the
   * first read. A rolling window is read summed per hour, so a start counts up to an hour longer.
   */
  sharedCount(spec: BucketSpec | RollingWindowSpec, nowMs: number): number | undefined {
    if (spec.kind === 'bucket') {
      const view = this.buckets.get(spec.key);
      return view === undefined ? undefined : view.observed + view.ownSince;
    }
    const view = this.rolling.get(spec.key);
    if (view === undefined) return undefined;
    const from = nowMs - spec.windowMs;
    let n = 0;
    for (const [end, count] of view.observed) if (Number(end) > from) n += count;
    for (const [end, count] of view.ownSince) if (end > from) n += count;
    return n;
  }

  /**
   * Reads the day counters and the rolling 24 hours of `nowMs` with plain reads (no generation
   * needed), as the watch does: a worker that has not started a request yet knows the token's use.
   */
  async readDaily(nowMs: number): Promise<void> {
    const specs = this.options.windows.at('kline', nowMs);
    const client = this.options.client;
    const days = await Promise.all(specs.buckets.map((b) => client.get(b.key)));
    const rolling = await Promise.all(specs.rolling.map((r) => client.hgetall(`${r.key}:n`)));
    specs.buckets.forEach((spec, i) => {
      const view = this.bucketView(spec);
      view.observed = Number(days[i] ?? 0);
      view.ownSince = 0;
    });
    specs.rolling.forEach((spec, i) => {
      const sums = new Map<number, number>();
      for (const [slotEnd, count] of Object.entries(rolling[i] ?? {})) {
        if (slotEnd === 'total') continue;
        const end = Math.ceil(Number(slotEnd) / ROLLING_AGGREGATE_MS) * ROLLING_AGGREGATE_MS;
        sums.set(end, (sums.get(end) ?? 0) + Number(count));
      }
      const view = this.rollingView(spec);
      view.observed = [...sums].map(([end, count]) => [String(end), count]);
      view.ownSince.clear();
    });
  }

  private bucketView(spec: BucketSpec): BucketView {
    let view = this.buckets.get(spec.key);
    if (view === undefined) this.buckets.set(spec.key, (view = { spec, observed: 0, ownSince: 0 }));
    return view;
  }

  private rollingView(spec: RollingWindowSpec): RollingView {
    let view = this.rolling.get(spec.key);
    if (view === undefined) this.rolling.set(spec.key, (view = { spec, observed: [], ownSince: new Map() }));
    return view;
  }
}
