import { createServer, type Server } from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { QuoteflowClient } from '@quoteflow/core';

/** What the metrics read of `PlanSchedulerStats` (structural, so older schedulers still fit). */
interface SchedulerSnapshot {
  readonly queued: Readonly<Record<string, number>>;
  readonly inFlight: number;
  readonly waits: Readonly<Record<string, { meanWaitMs: number; maxWaitMs: number }>>;
  readonly utilisation: number;
  readonly sources?: readonly SourceSnapshot[];
}

interface SourceSnapshot {
  readonly sourceId: string;
  readonly queued: number;
  readonly requests: readonly { endpoint: string; priority: string; granted: number }[];
  readonly recentShare: number;
  /** Cumulative buckets: waits up to `leMs` and their total. */
  readonly wait: { readonly buckets: readonly { leMs: number; count: number; sumMs: number }[] };
}

interface SchedulerWithStats {
  /** A `PlanScheduler`'s stats, or a cluster scheduler's, whose `local` holds them. */
  stats(): SchedulerSnapshot | { readonly local: SchedulerSnapshot };
}

/** The `source` label of requests scheduled without a `sourceId` (an empty label value reads as absent). */
const UNNAMED_SOURCE = 'unnamed';

/**
 * The CLI's Prometheus metrics (`--metrics-port`): requests by endpoint and outcome, scheduler
 * queue, waits and utilisation, each scheduler source's requests, share and wait histogram,
 * records per sink, and the lag of the newest bar.
 */
export class CliMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'quoteflow_requests_total',
    help: 'Requests to the service by endpoint and outcome (response, or the error code of a retried attempt)',
    labelNames: ['endpoint', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly records = new Counter({
    name: 'quoteflow_sink_records_total',
    help: 'Records handed to each sink',
    labelNames: ['sink', 'dataset'] as const,
    registers: [this.registry],
  });
  readonly files = new Counter({
    name: 'quoteflow_files_total',
    help: 'Dataset files renamed into place',
    labelNames: ['dataset'] as const,
    registers: [this.registry],
  });
  readonly newestBarLag = new Gauge({
    name: 'quoteflow_newest_bar_lag_seconds',
    help: 'Now minus the start of the newest bar seen in the last live cycle',
    registers: [this.registry],
  });
  readonly queued = new Gauge({
    name: 'quoteflow_scheduler_queued',
    help: 'Requests waiting in the plan scheduler',
    labelNames: ['priority'] as const,
    registers: [this.registry],
  });
  readonly inFlight = new Gauge({
    name: 'quoteflow_scheduler_in_flight',
    help: 'Requests started and not yet settled',
    registers: [this.registry],
  });
  readonly waitMean = new Gauge({
    name: 'quoteflow_scheduler_wait_mean_seconds',
    help: 'Mean queue wait by priority',
    labelNames: ['priority'] as const,
    registers: [this.registry],
  });
  readonly waitMax = new Gauge({
    name: 'quoteflow_scheduler_wait_max_seconds',
    help: 'Longest queue wait by priority',
    labelNames: ['priority'] as const,
    registers: [this.registry],
  });
  readonly utilisation = new Gauge({
    name: 'quoteflow_scheduler_utilisation',
    help: 'Fill of the binding rule of the plan (0..1)',
    registers: [this.registry],
  });
  readonly sourceRequests = new Counter({
    name: 'quoteflow_scheduler_source_requests_total',
    help: 'Requests the plan scheduler started, by source (sourceId), endpoint and priority',
    labelNames: ['source', 'endpoint', 'priority'] as const,
    registers: [this.registry],
  });
  readonly sourceShare = new Gauge({
    name: 'quoteflow_scheduler_source_share_ratio',
    help: "Each source's share of the plan scheduler's starts over the last minute (0..1)",
    labelNames: ['source'] as const,
    registers: [this.registry],
  });
  readonly sourceQueued = new Gauge({
    name: 'quoteflow_scheduler_source_queued',
    help: 'Requests waiting in the plan scheduler, by source',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });
  /** Built on the first sample, with the scheduler's own bucket bounds (so waits replay exactly). */
  sourceWait: Histogram<'source'> | undefined;
  /** Per counter or histogram series, the scheduler's cumulative values at the last sample. */
  readonly #seen = new Map<string, readonly number[]>();
  #server: Server | undefined;

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'quoteflow_process_' });
  }

  /** Samples the scheduler's queue, waits and per-source shares on every scrape. */
  watchScheduler(client: QuoteflowClient): void {
    const scheduler = client.scheduler as unknown as Partial<SchedulerWithStats>;
    if (typeof scheduler.stats !== 'function') return;
    const sample = (): void => {
      const stats = (scheduler as SchedulerWithStats).stats();
      const s = 'local' in stats ? stats.local : stats;
      for (const [priority, n] of Object.entries(s.queued)) this.queued.set({ priority }, n);
      for (const [priority, w] of Object.entries(s.waits)) {
        this.waitMean.set({ priority }, w.meanWaitMs / 1000);
        this.waitMax.set({ priority }, w.maxWaitMs / 1000);
      }
      this.inFlight.set(s.inFlight);
      this.utilisation.set(s.utilisation);
      for (const source of s.sources ?? []) this.#sampleSource(source);
    };
    this.#sampler = sample;
  }
  #sampler: (() => void) | undefined;

  /**
   * Turns one source's cumulative stats into counter increments and histogram observations since
   * the last sample. A source the scheduler forgot and saw again starts from zero.
   */
  #sampleSource(s: SourceSnapshot): void {
    const source = s.sourceId === '' ? UNNAMED_SOURCE : s.sourceId;
    this.sourceShare.set({ source }, s.recentShare);
    this.sourceQueued.set({ source }, s.queued);
    for (const r of s.requests) {
      const [before] = this.#since(`requests ${source} ${r.endpoint} ${r.priority}`, [r.granted]);
      this.sourceRequests.inc({ source, endpoint: r.endpoint, priority: r.priority }, r.granted - before!);
    }
    const buckets = s.wait.buckets;
    const histogram = (this.sourceWait ??= new Histogram({
      name: 'quoteflow_scheduler_source_wait_seconds',
      help: 'Time requests waited in the plan scheduler (queue to start), by source',
      labelNames: ['source'] as const,
      buckets: buckets.filter((b) => Number.isFinite(b.leMs)).map((b) => b.leMs / 1000),
      registers: [this.registry],
    }));
    // Per bucket (not cumulative): the waits that fell in it since the last sample and their total.
    // Replayed at their mean, which lies inside the bucket, so bucket counts and the sum are exact.
    const now = buckets.flatMap((b, i) => [
      b.count - (buckets[i - 1]?.count ?? 0),
      b.sumMs - (buckets[i - 1]?.sumMs ?? 0),
    ]);
    const before = this.#since(`wait ${source}`, now, (i) => i % 2 === 0);
    buckets.forEach((b, i) => {
      const n = now[2 * i]! - before[2 * i]!;
      if (n <= 0) return;
      const lowerS = (buckets[i - 1]?.leMs ?? 0) / 1000;
      const meanS = (now[2 * i + 1]! - before[2 * i + 1]!) / n / 1000;
      const value = Math.min(b.leMs / 1000, Math.max(meanS, lowerS > 0 ? lowerS * (1 + 1e-12) : 0));
      for (let k = 0; k < n; k++) histogram.observe({ source }, value);
    });
  }

  /**
   * The values last seen under `key`, then remembers `now`: zeros the first time, and after a
   * reset (a value at an index `isCount` accepts went down; sums may wobble by a rounding).
   */
  #since(key: string, now: readonly number[], isCount = (_i: number) => true): readonly number[] {
    const before = this.#seen.get(key);
    this.#seen.set(key, now);
    const reset = before === undefined || now.some((v, i) => isCount(i) && v < before[i]!);
    return reset ? now.map(() => 0) : before;
  }

  /** Serves `GET /metrics` on 127.0.0.1:`port` (0 = a free port); resolves to the port. */
  async listen(port: number, host = '127.0.0.1'): Promise<number> {
    const server = createServer((req, res) => {
      if (req.url !== '/metrics') {
        res.writeHead(404).end();
        return;
      }
      this.#sampler?.();
      this.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': this.registry.contentType }).end(text),
        (err: unknown) => res.writeHead(500).end(String(err)),
      );
    });
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    const address = server.address();
    return typeof address === 'object' && address !== null ? address.port : port;
  }

  async close(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
