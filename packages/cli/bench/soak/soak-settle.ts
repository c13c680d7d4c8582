// The end of a soak: before the final SIGTERM the sync has caught up with the clock and each of its
// sinks has committed since. A condition with a deadline rather than a fixed wait, so that a slow
// machine makes the end later instead of leaving the last closed bars out of the final check.
import { setTimeout as sleep } from 'node:timers/promises';
import type { SoakProcess } from './soak-process.js';

/** A series counts as caught up within this much trading time behind its market (simulated s). */
const CAUGHT_UP_S = 60;

/** How the end went: whether the sync settled before the deadline, after how long (real s). */
export interface Settled {
  readonly settled: boolean;
  readonly waitedS: number;
  /** The largest `quoteflow_lag_seconds` of the sync's series at the last look (simulated s). */
  readonly lagS: number;
}

function valuesOf(metrics: ReadonlyMap<string, number>, name: string): number[] {
  return [...metrics].filter(([k]) => k === name || k.startsWith(`${name}{`)).map(([, v]) => v);
}

/**
 * Waits until every series of the sync is at most {@link CAUGHT_UP_S} behind its market
 * (`quoteflow_lag_seconds`) and then every sink has committed a checkpoint
 * (`quoteflow_sink_checkpoint_timestamp_seconds`, real time), or `giveUpMs` of real time passed.
 */
export async function settle(sync: SoakProcess, giveUpMs: number): Promise<Settled> {
  const t0 = Date.now();
  let caughtUpAtMs: number | undefined;
  let lagS = Number.NaN;
  while (Date.now() - t0 < giveUpMs) {
    const metrics = (await sync.sample())?.metrics;
    if (metrics !== undefined) {
      const lags = valuesOf(metrics, 'quoteflow_lag_seconds');
      lagS = Math.max(0, ...lags);
      if (caughtUpAtMs === undefined && lags.length > 0 && lagS <= CAUGHT_UP_S) caughtUpAtMs = Date.now();
      const checkpoints = valuesOf(metrics, 'quoteflow_sink_checkpoint_timestamp_seconds');
      if (
        caughtUpAtMs !== undefined &&
        checkpoints.length > 0 &&
        Math.min(...checkpoints) * 1000 >= caughtUpAtMs
      )
        return { settled: true, waitedS: (Date.now() - t0) / 1000, lagS };
    }
    await sleep(500);
  }
  return { settled: false, waitedS: (Date.now() - t0) / 1000, lagS };
}
