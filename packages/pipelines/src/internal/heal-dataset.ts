import { klineHistory, type Bar, type KlineType, type QuoteflowClient, seriesKey } from '@quoteflow/core';
import { MAX_KLINE_PER_REQUEST } from '@quoteflow/core/internal';
import type { DatasetSink, SeriesWatermark } from '@quoteflow/sinks';
import { unexplainedGap } from '../inspect-dataset.js';
import type { DatasetRepair } from '../kline-sync-options.js';
import { readHalts, type DatasetHalt } from '../read-halts.js';
import { readSeriesStarts } from '../read-kline-bars.js';
import { collect } from './collect.js';

/** What {@link healDataset} did: the repairs, and the rows each series' files hold now. */
export interface Healed {
  readonly repairs: readonly DatasetRepair[];
  /** Per series (`seriesKey`), the rows its files hold after the repair. */
  readonly heldRows: ReadonlyMap<string, number>;
}

/** Two consecutive bars held with bars between them that neither the calendar nor a halt explains. */
interface Hole {
  readonly afterMs: number;
  readonly beforeMs: number;
}

/**
 * Fills the unexplained gaps of the universe's series in the kline dataset under `dir` with what
 * the service still serves (between held bars, and between the ends its commit log records and
 * the bars its files still hold): the bars between two held bars (final by evidence: the newer one was
 * held before they were read), read backwards across the gaps where the code can page, else from
 * its latest page (stocks), written through `sink.reopen` (the commit log covers them; their file
 * was lost) and committed in one checkpoint. Says per series what it repaired and what it cannot.
 */
export async function healDataset(options: {
  readonly client: QuoteflowClient;
  readonly dir: string;
  readonly sink: DatasetSink;
  readonly codes: readonly string[];
  readonly klineTypes: readonly KlineType[];
  readonly signal: AbortSignal;
}): Promise<Healed> {
  const { client, dir, sink, signal } = options;
  const series = await readSeriesStarts(dir, { codes: options.codes, klineTypes: options.klineTypes });
  const halts = await readHalts(dir);
  const logged = sink.watermarks();
  const repairs: DatasetRepair[] = [];
  const heldRows = new Map<string, number>();
  // Series the log holds whose files are all gone: nothing read, everything lacking.
  for (const code of options.codes)
    for (const klineType of options.klineTypes)
      if (logged.has(seriesKey(code, klineType)) && !series.has(`${code}\u0000${klineType}`))
        series.set(`${code}\u0000${klineType}`, { code, klineType, starts: [], lastReadMs: undefined });
  for (const { code, klineType, starts } of series.values()) {
    const codeHalts = halts.filter((h) => h.code === code);
    const log = logged.get(seriesKey(code, klineType));
    const holes = [...edgesOf(starts, log), ...holesOf(code, klineType, starts, codeHalts)].sort(
      (a, b) => a.afterMs - b.afterMs,
    );
    let rows = starts.length;
    if (holes.length > 0) {
      const bars = await readAcross(client, code, klineType, holes, signal);
      const held = new Set(starts);
      const fill = bars.filter((b) => !held.has(b.tsMs) && holes.some((h) => inside(h, b.tsMs)));
      sink.reopen(
        code,
        klineType,
        fill.map((b) => b.tsMs),
      );
      for (const b of fill) sink.write({ ...b, type: 'bar-update', final: true, revision: 0 });
      rows += fill.length;
      const after = [...starts, ...fill.map((b) => b.tsMs)].sort((a, b) => a - b);
      const left = [...edgesOf(after, log), ...holesOf(code, klineType, after, codeHalts)].reduce(
        (n, h) => n + (unexplainedGap(code, klineType, h.afterMs, h.beforeMs, codeHalts)?.bars ?? 1),
        0,
      );
      repairs.push({ code, klineType, repaired: fill.length, lacking: left });
    }
    heldRows.set(seriesKey(code, klineType), rows);
  }
  if (repairs.some((r) => r.repaired > 0)) await sink.checkpoint();
  return { repairs, heldRows };
}

function holesOf(
  code: string,
  klineType: KlineType,
  starts: readonly number[],
  halts: readonly DatasetHalt[],
): Hole[] {
  const holes: Hole[] = [];
  for (let i = 1; i < starts.length; i++) {
    const a = starts[i - 1]!;
    const b = starts[i]!;
    if (a !== b && unexplainedGap(code, klineType, a, b, halts) !== undefined)
      holes.push({ afterMs: a, beforeMs: b });
  }
  return holes;
}

/**
 * The ends the commit log says a series reaches and its files no longer do (the first or the last
 * file lost): a hole from the log's first bar to the first held, and from the last held to the
 * log's last (both ends included).
 */
function edgesOf(starts: readonly number[], log: SeriesWatermark | undefined): Hole[] {
  if (log === undefined) return [];
  const first = starts[0];
  const last = starts.at(-1);
  if (first === undefined || last === undefined) return [{ afterMs: log.first - 1, beforeMs: log.last + 1 }];
  const edges: Hole[] = [];
  if (log.first < first) edges.push({ afterMs: log.first - 1, beforeMs: first });
  if (log.last > last) edges.push({ afterMs: last, beforeMs: log.last + 1 });
  return edges;
}

const inside = (h: Hole, ts: number): boolean => h.afterMs < ts && ts < h.beforeMs;

/** The service's bars across the holes: paged back from the newest hole to the oldest, or a stock's latest page. */
async function readAcross(
  client: QuoteflowClient,
  code: string,
  klineType: KlineType,
  holes: readonly Hole[],
  signal: AbortSignal,
): Promise<Bar[]> {
  const canPage = client.canPageBackwards(code);
  const items = await collect(
    klineHistory(client, {
      code,
      klineType,
      ...(canPage
        ? { startMs: holes[0]!.afterMs, endMs: holes.at(-1)!.beforeMs }
        : { bars: MAX_KLINE_PER_REQUEST }),
      sourceId: `${code}:${klineType}:repair`,
    }),
    signal,
  );
  return items.filter((x): x is Bar => x.type === 'bar');
}
