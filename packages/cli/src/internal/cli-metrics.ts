import { createServer, type Server } from 'node:http';
import { isIP } from 'node:net';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { BarUpdate, QuoteflowClient, RequestRecord } from '@quoteflow/core';
import type { KlineSyncEvent } from '@quoteflow/pipelines';
import { HealthMetrics } from './health-metrics.js';
import { UpkeepMetrics } from './upkeep-metrics.js';
import { UsageError } from './usage-error.js';

/** What the metrics read of `PlanSchedulerStats` (structural, so older schedulers still fit). */
interface SchedulerSnapshot {
  readonly queued: Readonly<Record<string, number>>;
  readonly inFlight: number;
  readonly utilisation: number;
  readonly sources?: readonly SourceSnapshot[];
  readonly rules?: readonly {
    readonly id: string;
    readonly scope: string;
    readonly limit: number;
    readonly startsInWindow: number;
  }[];
  readonly day?: { readonly starts: number; readonly limit: number; readonly resetsAtMs?: number };
  readonly rollingDay?: { readonly starts: number; readonly limit: number };
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

/** Seconds: sub-millisecond local answers to a minute's wait for a slot. */
const SECONDS_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/**
 * The CLI's Prometheus metrics (`--metrics-port`), things an operator alerts on: requests by
 * endpoint and outcome, latency and quota-wait histograms per endpoint, each plan rule's use and
 * limit, the daily budget left and when it runs out at the current pace, freshness per series
 * (now minus when the newest final bar's values were read), gaps, records per sink, and the
 * scheduler's queue and per-source shares. `/health` answers while the process runs, `/ready` once
 * the pipeline works (503 while it waits for its first success or Redis is away).
 */
export class CliMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'quoteflow_requests_total',
    help: 'Requests sent to the service, by endpoint and outcome (ok, or the error code of the attempt)',
    labelNames: ['endpoint', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly records = new Counter({
    name: 'quoteflow_sink_records_total',
    help: 'Records handed to each sink',
    labelNames: ['sink', 'dataset'] as const,
    registers: [this.registry],
  });
  readonly codesDropped = new Counter({
    name: 'quoteflow_codes_dropped_total',
    help: 'Codes a running sync dropped because the service stopped serving them (unknown, or out of the plan)',
    registers: [this.registry],
  });
  readonly files = new Counter({
    name: 'quoteflow_files_total',
    help: 'Dataset files renamed into place',
    labelNames: ['dataset'] as const,
    registers: [this.registry],
  });
  readonly requestDuration = new Histogram({
    name: 'quoteflow_request_duration_seconds',
    help: 'From sending a request to its answer (or failure), by endpoint and outcome',
    labelNames: ['endpoint', 'outcome'] as const,
    buckets: SECONDS_BUCKETS,
    registers: [this.registry],
  });
  readonly requestWait = new Histogram({
    name: 'quoteflow_request_wait_seconds',
    help: "From asking for a request to sending it: the wait for the plan's quota, by endpoint",
    labelNames: ['endpoint'] as const,
    buckets: SECONDS_BUCKETS,
    registers: [this.registry],
  });
  readonly quotaUsed = new Gauge({
    name: 'quoteflow_quota_window_requests',
    help: "Requests counted in each plan rule's current window (shared with the token's other processes)",
    labelNames: ['rule', 'scope'] as const,
    registers: [this.registry],
  });
  readonly quotaLimit = new Gauge({
    name: 'quoteflow_quota_window_limit',
    help: "Each plan rule's limit per window (tightened by --limit)",
    labelNames: ['rule', 'scope'] as const,
    registers: [this.registry],
  });
  readonly dailyRemaining = new Gauge({
    name: 'quoteflow_quota_daily_remaining',
    help: "Requests left of the daily budget (the stricter of the zone's day and the last 24 hours)",
    registers: [this.registry],
  });
  readonly dailyLimit = new Gauge({
    name: 'quoteflow_quota_daily_limit',
    help: "The plan's requests per day",
    registers: [this.registry],
  });
  readonly dailyExhausted = new Gauge({
    name: 'quoteflow_quota_daily_exhausted_in_seconds',
    help: 'When the daily budget runs out at the pace of the last minute (+Inf when idle, or when the day resets first)',
    registers: [this.registry],
  });
  readonly freshness = new Gauge({
    name: 'quoteflow_freshness_seconds',
    help: "Now minus when the newest final bar's values were read, by series",
    labelNames: ['code', 'kline_type'] as const,
    registers: [this.registry],
  });
  readonly gaps = new Counter({
    name: 'quoteflow_gaps_total',
    help: 'Gaps reported: bars the calendar expects that the service did not have',
    labelNames: ['kline_type'] as const,
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
  /** Lag behind the market, sink checkpoints, cluster fences: what the alert rules stand on. */
  readonly health = new HealthMetrics(this.registry);
  /** What the datasets' table upkeep reports: behind or not, merges, failures. */
  readonly upkeep = new UpkeepMetrics(this.registry);
  /** Built on the first sample, with the scheduler's own bucket bounds (so waits replay exactly). */
  sourceWait: Histogram<'source'> | undefined;
  /** Per counter or histogram series, the scheduler's cumulative values at the last sample. */
  readonly #seen = new Map<string, readonly number[]>();
  #server: Server | undefined;
  /** Per series, when the newest final bar's values were read (epoch ms). */
  readonly #readAt = new Map<string, { code: string; klineType: number; ms: number }>();
  #now: () => number = Date.now;
  #started = false;
  readonly #faults = new Set<string>();

  constructor(
    /** The address `/metrics`, `/health` and `/ready` are served on ({@link metricsHost}). */
    readonly host = '127.0.0.1',
  ) {
    // Node's own metrics are named process_* and nodejs_*: the prefix makes quoteflow_process_*.
    collectDefaultMetrics({ register: this.registry, prefix: 'quoteflow_' });
    // prom-client names three gauges `…_total` (the sums of `quoteflow_nodejs_active_handles` and
    // the like, by type), which only counters may be: promtool check metrics fails on them.
    for (const what of ['handles', 'requests', 'resources'])
      this.registry.removeSingleMetric(`quoteflow_nodejs_active_${what}_total`);
  }

  /** For the client's `onRequest`: counts, latency and quota wait of every attempt sent. */
  readonly onRequest = (r: RequestRecord): void => {
    this.requests.inc({ endpoint: r.endpoint, outcome: r.outcome });
    this.requestDuration.observe(
      { endpoint: r.endpoint, outcome: r.outcome },
      (r.settledAtMs - r.sentAtMs) / 1000,
    );
    this.requestWait.observe({ endpoint: r.endpoint }, (r.sentAtMs - r.queuedAtMs) / 1000);
  };

  /** For a pipeline's updates: remembers when each series' newest final bar was read. */
  readonly onUpdate = (u: BarUpdate): void => {
    if (!u.final) return;
    this.health.onUpdate(u);
    const key = `${u.code}\u0000${u.klineType}`;
    const held = this.#readAt.get(key);
    if (held === undefined || u.readAtMs > held.ms)
      this.#readAt.set(key, { code: u.code, klineType: u.klineType, ms: u.readAtMs });
  };

  /** A K-line sync's events: files committed, gaps, and the first work done. */
  onKlineEvent(e: KlineSyncEvent): void {
    if (e.type === 'checkpoint' && e.files.length > 0) this.files.inc({ dataset: 'kline' }, e.files.length);
    if (e.type === 'checkpoint') this.health.onCheckpoint(e.sink);
    if (e.type === 'gap') this.gaps.inc({ kline_type: String(e.klineType) });
    if (e.type === 'code-dropped') this.codesDropped.inc();
    if (e.type === 'compacted') this.upkeep.compactions.inc({ dataset: 'kline', outcome: 'committed' });
    if (e.type === 'upkeep') this.upkeep.onEvent(e.event);
    if (e.type === 'backfill-done' || e.type === 'live-cycle') this.markStarted();
  }

  /** A K-line sync's updates: freshness, and the records each sink got. */
  onKlineUpdate(u: BarUpdate, toKafka: boolean): void {
    this.onUpdate(u);
    if (u.final) this.records.inc({ sink: 'files', dataset: 'kline' });
    if (toKafka) this.records.inc({ sink: 'kafka', dataset: 'kline' });
  }

  /**
   * Starts `quoteflow_gaps_total` at 0 for each kline type synced: a scrape before the first gap
   * shows 0, not nothing, which `rate()` and alert rules need.
   */
  expectGaps(klineTypes: readonly number[]): void {
    for (const k of klineTypes) this.gaps.inc({ kline_type: String(k) }, 0);
  }

  /** The pipeline did its first work (a backfill finished, a poll answered): `/ready` may say 200. */
  markStarted(): void {
    this.#started = true;
  }

  /** `/ready` says 503 naming `fault` (e.g. Redis unreachable) while it is active. */
  setFault(fault: string, active: boolean): void {
    if (active) this.#faults.add(fault);
    else this.#faults.delete(fault);
  }

  /** For a cluster worker's events: Redis away makes `/ready` say 503 until it is back; a fence is counted. */
  readonly onClusterEvent = (e: { readonly type: string; readonly fenced?: boolean }): void => {
    if (e.type === 'members' && e.fenced === true) this.health.fences.inc();
    if (e.type === 'redis-unavailable') this.setFault('Redis unreachable', true);
    if (e.type === 'redis-available') this.setFault('Redis unreachable', false);
  };

  /** For commands whose first success is an answer (depth, suspensions, run): `/ready` from then on. */
  readonly startOnAnswer = (r: RequestRecord): void => {
    if (r.outcome === 'ok') this.markStarted();
  };

  /** What `/ready` waits for, or `undefined` when ready. */
  get notReady(): string | undefined {
    if (this.#faults.size > 0) return [...this.#faults].join(', ');
    return this.#started ? undefined : 'starting (no pipeline work done yet)';
  }

  /** Samples the scheduler's queue, waits and per-source shares on every scrape. */
  watchScheduler(client: QuoteflowClient): void {
    this.#now = () => client.clock.now();
    const scheduler = client.scheduler as unknown as Partial<SchedulerWithStats>;
    if (typeof scheduler.stats !== 'function') return;
    const sample = (): void => {
      const stats = (scheduler as SchedulerWithStats).stats();
      const s = 'local' in stats ? stats.local : stats;
      for (const [priority, n] of Object.entries(s.queued)) this.queued.set({ priority }, n);
      this.inFlight.set(s.inFlight);
      this.utilisation.set(s.utilisation);
      for (const source of s.sources ?? []) this.#sampleSource(source);
      this.#sampleQuota(s);
    };
    this.#sampler = sample;
  }

  /** Each rule's use and limit; the daily budget left (the stricter reading) and its forecast. */
  #sampleQuota(s: SchedulerSnapshot): void {
    for (const r of s.rules ?? []) {
      this.quotaUsed.set({ rule: r.id, scope: r.scope }, r.startsInWindow);
      this.quotaLimit.set({ rule: r.id, scope: r.scope }, r.limit);
    }
    const days = [s.day, s.rollingDay].filter((d) => d !== undefined);
    if (days.length === 0) return;
    const remaining = Math.min(...days.map((d) => d.limit - d.starts));
    this.dailyRemaining.set(remaining);
    this.dailyLimit.set(Math.min(...days.map((d) => d.limit)));
    const lastMinute = s.rules?.find((r) => r.id === 'per-minute')?.startsInWindow ?? 0;
    const forecastS = lastMinute === 0 ? Number.POSITIVE_INFINITY : (remaining / lastMinute) * 60;
    // A budget that resets before it runs out does not run out: +Inf, not fifty days.
    const resetsInS = s.day?.resetsAtMs === undefined ? Infinity : (s.day.resetsAtMs - this.#now()) / 1000;
    this.dailyExhausted.set(forecastS < resetsInS ? forecastS : Number.POSITIVE_INFINITY);
  }

  #sampleFreshness(): void {
    const now = this.#now();
    for (const { code, klineType, ms } of this.#readAt.values())
      this.freshness.set({ code, kline_type: String(klineType) }, Math.max(0, now - ms) / 1000);
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

  /**
   * Serves `GET /metrics`, `/health` (200 while the process answers) and `/ready` (200 once the
   * pipeline works, else 503 with what it waits for) on `host`:`port` (0 = a free port);
   * resolves to the port.
   */
  async listen(port: number, host = this.host): Promise<number> {
    const server = createServer((req, res) => {
      if (req.url === '/health') {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
        return;
      }
      if (req.url === '/ready') {
        const waiting = this.notReady;
        res
          .writeHead(waiting === undefined ? 200 : 503, { 'content-type': 'text/plain' })
          .end(waiting === undefined ? 'ready\n' : `not ready: ${waiting}\n`);
        return;
      }
      if (req.url !== '/metrics') {
        res.writeHead(404).end();
        return;
      }
      this.#sampler?.();
      this.#sampleFreshness();
      this.health.sample(this.#now());
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

/**
 * The address `--metrics-port` listens on: `QUOTEFLOW_METRICS_HOST` (an IP address: `0.0.0.0` or
 * `::` for every interface, as a container's probes and Prometheus need), 127.0.0.1 by default.
 */
export function metricsHost(env: Readonly<Record<string, string | undefined>>): string {
  const host = env['QUOTEFLOW_METRICS_HOST'];
  if (host === undefined || host === '') return '127.0.0.1';
  if (isIP(host) === 0)
    throw new UsageError(
      `QUOTEFLOW_METRICS_HOST must be an IP address to listen on (127.0.0.1, 0.0.0.0, ::), got ${JSON.stringify(host)}`,
    );
  return host;
}

/**
 * `--metrics-port`: samples `client`'s scheduler and serves `/metrics`, `/health` and `/ready` on
 * the metrics' host (127.0.0.1 unless `QUOTEFLOW_METRICS_HOST` says otherwise) and `port` (0: a
 * free port), logging the address.
 */
export async function serveMetrics(
  metrics: CliMetrics,
  client: QuoteflowClient,
  port: number,
  logger: { info(fields: object, message: string): void },
  /** The flag or field that set the port, for a usage error when it cannot be listened on. */
  flag = '--metrics-port',
): Promise<void> {
  const host = metrics.host;
  metrics.watchScheduler(client);
  let bound: number;
  try {
    bound = await metrics.listen(port, host);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL')
      throw new UsageError(
        `${flag} ${port}: ${code === 'EADDRINUSE' ? 'the port is in use' : 'the port may not be listened on'} on ${host}; choose another (0: any free port)`,
      );
    throw err;
  }
  const shown = host.includes(':') ? `[${host}]` : host;
  logger.info(
    { url: `http://${shown}:${bound}/metrics`, health: `/health`, ready: `/ready` },
    'metrics served',
  );
}
