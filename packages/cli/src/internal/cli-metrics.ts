import { createServer, type Server } from 'node:http';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { QuoteflowClient } from '@quoteflow/core';

interface SchedulerWithStats {
  stats(): {
    queued: Readonly<Record<string, number>>;
    inFlight: number;
    waits: Readonly<Record<string, { meanWaitMs: number; maxWaitMs: number }>>;
    utilisation: number;
  };
}

/**
 * The CLI's Prometheus metrics (`--metrics-port`): requests by endpoint and outcome, scheduler
 * queue, waits and utilisation, records per sink, and the lag of the newest bar.
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
  #server: Server | undefined;

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'quoteflow_process_' });
  }

  /** Samples the scheduler's queue and waits on every scrape. */
  watchScheduler(client: QuoteflowClient): void {
    const scheduler = client.scheduler as unknown as Partial<SchedulerWithStats>;
    if (typeof scheduler.stats !== 'function') return;
    const sample = (): void => {
      const s = (scheduler as SchedulerWithStats).stats();
      for (const [priority, n] of Object.entries(s.queued)) this.queued.set({ priority }, n);
      for (const [priority, w] of Object.entries(s.waits)) {
        this.waitMean.set({ priority }, w.meanWaitMs / 1000);
        this.waitMax.set({ priority }, w.maxWaitMs / 1000);
      }
      this.inFlight.set(s.inFlight);
      this.utilisation.set(s.utilisation);
    };
    this.#sampler = sample;
  }
  #sampler: (() => void) | undefined;

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
