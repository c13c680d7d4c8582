/**
 * The check of the exactly-once tests: each code's final bars, read back by a client quoteflow did
 * not write (kcat, DuckDB), are each there once, consecutive from the first to the newest, with the
 * simulator's market values as the wire rounds them.
 */
import { expect } from 'vitest';
import type { Simulator } from '@quoteflow/simulator';
import { readKlineBars } from '@quoteflow/pipelines';
import { consumeWithKcat, type ReadMessage } from './kafka.js';

const MIN = 60_000;

/** One final bar as read back: its code, start and [open, high, low, close]. */
export interface SeenBar {
  readonly code: string;
  readonly tsMs: number;
  readonly values: readonly number[];
}

/** The final bars among the kline records of a topic (JSON values as the contract says). */
export function finalBarsOf(records: readonly ReadMessage[]): SeenBar[] {
  return records
    .map((r) => JSON.parse(r.value) as Record<string, unknown>)
    .filter((v) => v['final'] === true)
    .map((v) => ({
      code: String(v['code']),
      tsMs: Date.parse(String(v['ts'])),
      values: [v['open'], v['high'], v['low'], v['close']] as number[],
    }));
}

/** The market's closed 1-minute bars of `code`, as the wire rounds them, by start. */
function marketValues(sim: Simulator, code: string): Map<number, number[]> {
  const decimals = sim.market.product(code)!.priceDecimals;
  const wire = (v: number): number => Number(v.toFixed(decimals));
  return new Map(
    sim.market
      .bars(code, 1, sim.marketNow(), 3_000)
      .filter((b) => !b.forming)
      .map((b) => [b.startMs, [b.open, b.high, b.low, b.close].map(wire)]),
  );
}

/** Each of `codes`' 1-minute final bars in `bars`: once, consecutive, the market's values; at least `atLeast`. */
export function expectEachOnceWithMarketValues(
  sim: Simulator,
  codes: readonly string[],
  where: string,
  bars: readonly SeenBar[],
  atLeast: number,
): void {
  for (const code of codes) {
    const market = marketValues(sim, code);
    const mine = bars.filter((b) => b.code === code).sort((a, b) => a.tsMs - b.tsMs);
    expect(mine.length, `${where} ${code}`).toBeGreaterThanOrEqual(atLeast);
    for (let i = 0; i < mine.length; i++) {
      const b = mine[i]!;
      if (i > 0) expect(b.tsMs - mine[i - 1]!.tsMs, `${where} ${code} ${b.tsMs}: twice, or a gap`).toBe(MIN);
      expect(b.values, `${where} ${code} ${new Date(b.tsMs).toISOString()}: final values`).toEqual(
        market.get(b.tsMs),
      );
    }
  }
}

/**
 * The end check of a sync into Kafka and files: `<prefix>.kline` read `read_committed` by kcat and
 * the kline dataset under `out` each hold every final bar of `codes` once, with the market's values,
 * and the service refused nothing.
 */
export async function expectKafkaAndFilesEachOnce(
  sim: Simulator,
  codes: readonly string[],
  sinks: { readonly brokers: string; readonly prefix: string; readonly out: string },
  atLeast: number,
): Promise<void> {
  const records = await consumeWithKcat(sinks.brokers, `${sinks.prefix}.kline`, 30_000, 'read_committed');
  expectEachOnceWithMarketValues(sim, codes, 'kafka', finalBarsOf(records), atLeast);
  const files = (await readKlineBars(sinks.out)).map((b) => ({
    code: b.code,
    tsMs: b.tsMs,
    values: [b.open, b.high, b.low, b.close],
  }));
  expectEachOnceWithMarketValues(sim, codes, 'files', files, atLeast);
  expect(sim.log.refused()).toEqual([]);
}
