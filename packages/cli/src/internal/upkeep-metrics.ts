import { Counter, Gauge, type Registry } from 'prom-client';
import type { UpkeepEvent } from '@quoteflow/sinks';

/**
 * What a dataset table's upkeep reports (`TableUpkeep`'s events), as metrics: whether it is behind
 * and for how long work has been due, the merges due, the log versions since the newest Delta
 * checkpoint, merges committed or void, failed steps. By `dataset` (`kline`, `depth`, `suspension`).
 */
export class UpkeepMetrics {
  readonly behind: Gauge<'dataset'>;
  readonly pending: Gauge<'dataset'>;
  readonly mergesDue: Gauge<'dataset'>;
  readonly versionsSinceCheckpoint: Gauge<'dataset'>;
  readonly compactions: Counter<'dataset' | 'outcome'>;
  readonly failures: Counter<'dataset' | 'step'>;

  constructor(registry: Registry) {
    const gauge = (name: string, help: string) =>
      new Gauge({ name, help, labelNames: ['dataset'] as const, registers: [registry] });
    this.behind = gauge(
      'quoteflow_upkeep_behind',
      "1 while a dataset table's upkeep has had work due longer than it should (it falls behind: reads slow down), else 0",
    );
    this.pending = gauge(
      'quoteflow_upkeep_pending_seconds',
      "How long a dataset table's upkeep has had work due without doing it (0: none due), at its last report",
    );
    this.mergesDue = gauge(
      'quoteflow_upkeep_merges_due',
      'Merges of small files due in a dataset table and not done yet',
    );
    this.versionsSinceCheckpoint = gauge(
      'quoteflow_upkeep_versions_since_checkpoint',
      "Versions of a dataset table's Delta log since its newest checkpoint",
    );
    this.compactions = new Counter({
      name: 'quoteflow_upkeep_compactions_total',
      help: "Merges by a dataset table's upkeep: committed, or void (another writer compacted the files first)",
      labelNames: ['dataset', 'outcome'] as const,
      registers: [registry],
    });
    this.failures = new Counter({
      name: 'quoteflow_upkeep_failures_total',
      help: "Failed steps of a dataset table's upkeep (tried again), by step",
      labelNames: ['dataset', 'step'] as const,
      registers: [registry],
    });
  }

  /** One of upkeep's events: where it stands, its merges and failures. */
  onEvent(e: UpkeepEvent): void {
    if (e.type === 'upkeep-status' || e.type === 'upkeep-behind' || e.type === 'upkeep-caught-up') {
      const { dataset, behind, pendingMs, mergesDue, versionsSinceCheckpoint } = e.status;
      const caughtUp = e.type === 'upkeep-caught-up';
      this.behind.set({ dataset }, !caughtUp && behind ? 1 : 0);
      this.pending.set({ dataset }, caughtUp ? 0 : pendingMs / 1000);
      this.mergesDue.set({ dataset }, mergesDue);
      this.versionsSinceCheckpoint.set({ dataset }, versionsSinceCheckpoint);
      // Counters start at 0 (a scrape before the first merge shows 0, as rate() and alerts want).
      for (const outcome of ['committed', 'void']) this.compactions.inc({ dataset, outcome }, 0);
    }
    if (e.type === 'compacted') this.compactions.inc({ dataset: e.dataset, outcome: 'committed' });
    if (e.type === 'compaction-void') this.compactions.inc({ dataset: e.dataset, outcome: 'void' });
    if (e.type === 'upkeep-failed') this.failures.inc({ dataset: e.dataset, step: e.step });
  }
}
