import { EXCHANGES, type Exchange } from '@quoteflow/core';
import { haltOf, uniqueHalts } from './internal/halt-of.js';
import { epochMsOf, forEachDatasetRow, listDataFiles } from '@quoteflow/sinks/internal';

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
  const halts: DatasetHalt[] = [];
  for (const rel of await listDataFiles(dir, 'suspension')) {
    const exchange = EXCHANGE.exec(rel)?.[1] as Exchange | undefined;
    if (exchange === undefined || !EXCHANGES.includes(exchange)) continue;
    await forEachDatasetRow(dir, rel, (value) => {
      const symbol = value('symbol');
      if (typeof symbol !== 'string') return;
      const halt = haltOf(exchange, symbol, epochMsOf(value('halt_at')), epochMsOf(value('resume_at')));
      if (halt !== undefined) halts.push(halt);
    });
  }
  return uniqueHalts(halts);
}
