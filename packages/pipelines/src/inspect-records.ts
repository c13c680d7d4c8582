import { epochMsOf, forEachDatasetRow, listDataFiles } from '@quoteflow/sinks/internal';

/** What a depth dataset holds of one code (`inspect`). */
export interface DepthCodeInspection {
  readonly code: string;
  readonly ticks: number;
  /** Earliest and latest `tick_time` (epoch ms); `undefined` when no tick carries one. */
  readonly firstMs: number | undefined;
  readonly lastMs: number | undefined;
  /** Smallest and largest `seq` (decimal strings: it reaches 2^64 - 1); `undefined` without any. */
  readonly firstSeq: string | undefined;
  readonly lastSeq: string | undefined;
  /** Ticks whose `seq` another tick of the code already has: 0 after `dedupeBySeq`. */
  readonly repeatedSeq: number;
}

/** What a suspension dataset holds of one exchange (`inspect`). */
export interface SuspensionExchangeInspection {
  readonly exchange: string;
  readonly records: number;
  /** Distinct symbols. */
  readonly symbols: number;
  /** Records with a halt time and no resume time: halts still open when they were read. */
  readonly open: number;
  /** Earliest and latest `publish_date` (epoch ms); `undefined` when none is readable. */
  readonly firstMs: number | undefined;
  readonly lastMs: number | undefined;
}

const EXCHANGE = /(?:^|\/)exchange=([^/]+)(?:\/|$)/;

/** Per code of the depth dataset under `dir`: ticks, first and last tick time and seq. No request. */
export async function inspectDepth(dir: string): Promise<DepthCodeInspection[]> {
  const byCode = new Map<
    string,
    { ticks: number; firstMs: number; lastMs: number; seqs: Set<bigint>; repeated: number }
  >();
  for (const rel of await listDataFiles(dir, 'depth'))
    await forEachDatasetRow(
      dir,
      rel,
      (value) => {
        const code = value('code');
        if (typeof code !== 'string') return;
        let entry = byCode.get(code);
        if (entry === undefined)
          byCode.set(
            code,
            (entry = { ticks: 0, firstMs: Infinity, lastMs: -Infinity, seqs: new Set(), repeated: 0 }),
          );
        entry.ticks++;
        const ms = epochMsOf(value('tick_time'));
        if (Number.isFinite(ms)) {
          entry.firstMs = Math.min(entry.firstMs, ms);
          entry.lastMs = Math.max(entry.lastMs, ms);
        }
        const seq = seqOf(value('seq'));
        if (seq !== undefined) {
          if (entry.seqs.has(seq)) entry.repeated++;
          entry.seqs.add(seq);
        }
      },
      ['code', 'tick_time', 'seq'],
    );
  return [...byCode.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([code, e]) => {
      const seqs = [...e.seqs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      return {
        code,
        ticks: e.ticks,
        firstMs: Number.isFinite(e.firstMs) ? e.firstMs : undefined,
        lastMs: Number.isFinite(e.lastMs) ? e.lastMs : undefined,
        firstSeq: seqs[0]?.toString(),
        lastSeq: seqs.at(-1)?.toString(),
        repeatedSeq: e.repeated,
      };
    });
}

/** Per exchange of the suspension dataset under `dir`: records, symbols, open halts, publish dates. */
export async function inspectSuspensions(dir: string): Promise<SuspensionExchangeInspection[]> {
  const byExchange = new Map<
    string,
    { records: number; symbols: Set<string>; open: number; firstMs: number; lastMs: number }
  >();
  for (const rel of await listDataFiles(dir, 'suspension')) {
    const exchange = EXCHANGE.exec(rel)?.[1] ?? '?';
    let entry = byExchange.get(exchange);
    if (entry === undefined)
      byExchange.set(
        exchange,
        (entry = { records: 0, symbols: new Set(), open: 0, firstMs: Infinity, lastMs: -Infinity }),
      );
    const e = entry;
    await forEachDatasetRow(
      dir,
      rel,
      (value) => {
        e.records++;
        const symbol = value('symbol');
        if (typeof symbol === 'string') e.symbols.add(symbol);
        if (Number.isFinite(epochMsOf(value('halt_at'))) && !Number.isFinite(epochMsOf(value('resume_at'))))
          e.open++;
        const ms = epochMsOf(value('publish_date'));
        if (Number.isFinite(ms)) {
          e.firstMs = Math.min(e.firstMs, ms);
          e.lastMs = Math.max(e.lastMs, ms);
        }
      },
      ['symbol', 'halt_at', 'resume_at', 'publish_date'],
    );
  }
  return [...byExchange.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([exchange, e]) => ({
      exchange,
      records: e.records,
      symbols: e.symbols.size,
      open: e.open,
      firstMs: Number.isFinite(e.firstMs) ? e.firstMs : undefined,
      lastMs: Number.isFinite(e.lastMs) ? e.lastMs : undefined,
    }));
}

/** A `seq` cell as a bigint: uint64 in Parquet/Arrow, a decimal string in NDJSON. */
function seqOf(v: unknown): bigint | undefined {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  if (typeof v === 'string' && /^\d+$/.test(v)) return BigInt(v);
  return undefined;
}
