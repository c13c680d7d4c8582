import { codeOfSuspendedSymbol, EXCHANGES, type Exchange } from '@quoteflow/core';
import { epochMsOf, forEachDatasetRow, listDatasetFiles } from './internal/read-kline-extents.js';

/** One suspension (halt) a dataset's suspension records hold, by product code. */
export interface DatasetHalt {
  readonly code: string;
  readonly exchange: Exchange;
  /** When trading stopped (epoch ms). */
  readonly fromMs: number;
  /** When it resumed (epoch ms), or `undefined` while the record says none. */
  readonly toMs: number | undefined;
}

const EXCHANGE = /(?:^|\/)exchange=([a-z]+)(?:\/|$)/;

/**
 * The halts in the suspension dataset under `dir` (`DIR/suspension/exchange=E/…`), each under the
 * product code its symbol names (core's `codeOfSuspendedSymbol`); records without a halt time are
 * skipped, and one record held twice (several polls, several files) counts once. No request.
 */
export async function readHalts(dir: string): Promise<DatasetHalt[]> {
  const seen = new Map<string, DatasetHalt>();
  for (const rel of await listDatasetFiles(dir, 'suspension')) {
    const exchange = EXCHANGE.exec(rel)?.[1] as Exchange | undefined;
    if (exchange === undefined || !EXCHANGES.includes(exchange)) continue;
    await forEachDatasetRow(dir, rel, (value) => {
      const symbol = value('symbol');
      const fromMs = epochMsOf(value('halt_at'));
      if (typeof symbol !== 'string' || !Number.isFinite(fromMs)) return;
      const resume = epochMsOf(value('resume_at'));
      const halt = {
        code: codeOfSuspendedSymbol(exchange, symbol),
        exchange,
        fromMs,
        toMs: Number.isFinite(resume) ? resume : undefined,
      };
      seen.set(`${halt.code}\u0000${fromMs}`, halt);
    });
  }
  return [...seen.values()].sort((a, b) =>
    a.code < b.code ? -1 : a.code > b.code ? 1 : a.fromMs - b.fromMs,
  );
}
