import { Counter, Gauge, type Registry } from 'prom-client';
import type { BarUpdate } from '@quoteflow/core';
import { SeriesLag } from './series-lag.js';

/**
 * The metrics an operator's alert rules stand on beside the request and quota ones
 * (deploy/prometheus/quoteflow-alerts.yml): how far each series is behind its market, when each
 * sink last committed a checkpoint, and how often this cluster worker was fenced.
 */
export class HealthMetrics {
  readonly lag: Gauge<'code' | 'kline_type'>;
  readonly checkpointAt: Gauge<'sink'>;
  readonly fences: Counter;
  readonly #lag = new SeriesLag();

  constructor(registry: Registry) {
    this.lag = new Gauge({
      name: 'quoteflow_lag_seconds',
      help: "Trading time of the series' market since its newest final bar's values were read, beyond one bar period (0 while on time; still while the market cannot trade)",
      labelNames: ['code', 'kline_type'] as const,
      registers: [registry],
    });
    this.checkpointAt = new Gauge({
      name: 'quoteflow_sink_checkpoint_timestamp_seconds',
      help: 'When each sink of a K-line pipeline last committed a checkpoint (files, kafka, state), Unix time',
      labelNames: ['sink'] as const,
      registers: [registry],
    });
    this.fences = new Counter({
      name: 'quoteflow_cluster_fences_total',
      help: 'Times this cluster worker was fenced (its lease lapsed: it committed nothing more until it rejoined)',
      registers: [registry],
    });
  }

  /** A bar update: a final one moves its series' lag. */
  onUpdate(u: BarUpdate): void {
    if (u.final) this.#lag.onFinal(u.code, u.klineType, u.readAtMs);
  }

  /** A sink committed a checkpoint (`sinkName` as the pipeline names it: `files …`, `kafka …`, `state …`). */
  onCheckpoint(sinkName: string, atMs = Date.now()): void {
    this.checkpointAt.set({ sink: sinkName.split(' ')[0] ?? sinkName }, atMs / 1000);
  }

  /** On each scrape: the lags at `nowMs`. */
  sample(nowMs: number): void {
    for (const { code, klineType, seconds } of this.#lag.lags(nowMs))
      this.lag.set({ code, kline_type: String(klineType) }, seconds);
  }
}
