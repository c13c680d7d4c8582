import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { BarUpdate } from '@quoteflow/core';
import { CliMetrics, metricsHost } from './cli-metrics.js';
import { HealthMetrics } from './health-metrics.js';

const final = (code: string, readAtMs: number): BarUpdate =>
  ({ code, klineType: 1, final: true, readAtMs }) as unknown as BarUpdate;

describe('HealthMetrics', () => {
  it("serves each sink's last checkpoint time, each series' lag and this worker's fences", async () => {
    const registry = new Registry();
    const health = new HealthMetrics(registry);
    health.onCheckpoint('files /data/out', 1_772_000_000_000);
    health.onCheckpoint('kafka qf.kline (exactly-once)', 1_772_000_001_500);
    health.onUpdate(final('BTCUSDT', Date.parse('2026-03-07T12:00:00Z')));
    health.sample(Date.parse('2026-03-07T12:03:00Z'));
    health.fences.inc();
    const text = await registry.metrics();
    expect(text).toContain('quoteflow_sink_checkpoint_timestamp_seconds{sink="files"} 1772000000\n');
    expect(text).toContain('quoteflow_sink_checkpoint_timestamp_seconds{sink="kafka"} 1772000001.5\n');
    expect(text).toContain('quoteflow_lag_seconds{code="BTCUSDT",kline_type="1"} 120\n');
    expect(text).toContain('quoteflow_cluster_fences_total 1\n');
  });

  it('counts a fence each time a cluster worker reports itself fenced', async () => {
    const metrics = new CliMetrics();
    metrics.onClusterEvent({ type: 'members', fenced: false });
    metrics.onClusterEvent({ type: 'members', fenced: true });
    metrics.onClusterEvent({ type: 'members', fenced: false });
    metrics.onClusterEvent({ type: 'members', fenced: true });
    expect(await metrics.registry.getSingleMetricAsString('quoteflow_cluster_fences_total')).toContain(
      'quoteflow_cluster_fences_total 2',
    );
  });
});

describe('metricsHost', () => {
  it('is 127.0.0.1 unless QUOTEFLOW_METRICS_HOST names an IP address; anything else is a usage error', () => {
    expect(metricsHost({})).toBe('127.0.0.1');
    expect(metricsHost({ QUOTEFLOW_METRICS_HOST: '0.0.0.0' })).toBe('0.0.0.0');
    expect(metricsHost({ QUOTEFLOW_METRICS_HOST: '::' })).toBe('::');
    expect(() => metricsHost({ QUOTEFLOW_METRICS_HOST: 'all' })).toThrow(
      'QUOTEFLOW_METRICS_HOST must be an IP address to listen on (127.0.0.1, 0.0.0.0, ::), got "all"',
    );
  });
});
