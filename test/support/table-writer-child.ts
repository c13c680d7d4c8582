/**
 * A writer of one kline table for the table-writers tests, as its own process (`startTsxChild`):
 * `DIR SERIES IF_OWNED BARS PER_CHECKPOINT PAUSE_MS LEASE_MS`. Prints `ready`, opens a `DatasetSink`
 * claiming SERIES (`CODE|1,…`) with IF_OWNED and LEASE_MS, prints `claimed` (or `owned …` and exits 3), then
 * writes every series' 1-minute bars from where the table ends to bar BARS - 1
 * ({@link tableWriterBar}), PER_CHECKPOINT bars a checkpoint, printing `committed N` after each
 * and pausing PAUSE_MS; a refused commit prints `fenced …` and exits 4. Closes (giving its claims
 * up) and exits 0.
 */
import { DatasetSink, type IfOwned } from '../../packages/sinks/src/index.js';
import type { BarUpdate } from '../../packages/core/src/index.js';

/** The first bar's start. */
export const TABLE_WRITER_T0 = Date.UTC(2026, 0, 5, 14, 30);

/** Bar `minute` of `code`: its close names both, so a reader sees which bar it is. */
export function tableWriterBar(code: string, minute: number): BarUpdate {
  const tsMs = TABLE_WRITER_T0 + minute * 60_000;
  const close = minute + code.charCodeAt(0) / 1_000;
  return {
    type: 'bar-update',
    final: true,
    revision: 0,
    code,
    klineType: 1,
    tsMs,
    open: close,
    high: close + 1,
    low: close - 1,
    close,
    volume: 1,
    turnover: 2,
    readAtMs: tsMs + 120_000,
    receivedAtMs: tsMs + 120_100,
  };
}

/**
 * Writes `series` (`CODE|1`) up to bar `bars - 1` from where `sink`'s watermarks end, `per` bars a
 * checkpoint; `after` runs after each checkpoint (a pause, a print).
 */
export async function writeSeriesToEnd(
  sink: DatasetSink,
  series: readonly string[],
  bars: number,
  per: number,
  after: (committed: number) => Promise<void>,
): Promise<void> {
  let committed = 0;
  const next = new Map<string, number>();
  for (const key of series) {
    const last = sink.watermarks().get(key)?.last;
    next.set(key, last === undefined ? 0 : (last - TABLE_WRITER_T0) / 60_000 + 1);
  }
  for (;;) {
    let wrote = 0;
    for (const key of series) {
      const code = key.slice(0, key.indexOf('|'));
      let minute = next.get(key)!;
      for (let i = 0; i < per && minute < bars; i++, minute++, wrote++)
        sink.write(tableWriterBar(code, minute));
      next.set(key, minute);
    }
    if (wrote === 0) return;
    await sink.checkpoint();
    committed += wrote;
    await after(committed);
  }
}

async function main(): Promise<void> {
  const [dir, list, ifOwned, bars, per, pauseMs, leaseMs] = process.argv.slice(2);
  const series = list!.split(',');
  console.log('ready');
  let sink: DatasetSink;
  try {
    sink = await DatasetSink.open({
      dir: dir!,
      series,
      ifOwned: ifOwned as IfOwned,
      leaseMs: Number(leaseMs),
      encoderThreads: 0,
      upkeep: false,
    });
  } catch (err) {
    console.log(`owned ${(err as { code?: string }).code} ${(err as Error).message}`);
    process.exit(3);
  }
  console.log('claimed');
  try {
    await writeSeriesToEnd(sink, series, Number(bars), Number(per), async (committed) => {
      console.log(`committed ${committed}`);
      await new Promise((resolve) => setTimeout(resolve, Number(pauseMs)));
    });
  } catch (err) {
    console.log(`fenced ${(err as { code?: string }).code} ${(err as Error).message}`);
    await sink.close().catch(() => undefined);
    process.exit(4);
  }
  await sink.close();
  console.log('done');
}

if (process.argv[1]?.endsWith('table-writer-child.ts') === true) await main();
