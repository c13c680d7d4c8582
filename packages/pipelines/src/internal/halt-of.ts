import { type Exchange } from '@quoteflow/core';
import { codeOfSuspendedSymbol } from '@quoteflow/core/internal';
import type { DatasetHalt } from '../read-halts.js';

/**
 * The halt one suspension record names, under the product code of its symbol (core's
 * `codeOfSuspendedSymbol`), or `undefined` for a record without a halt time. One conversion for
 * the records a dataset holds and those the service answers, so both explain the same gaps.
 */
export function haltOf(
  exchange: Exchange,
  symbol: string,
  haltAtMs: number | undefined,
  resumeAtMs: number | undefined,
): DatasetHalt | undefined {
  if (haltAtMs === undefined || !Number.isFinite(haltAtMs)) return undefined;
  return {
    code: codeOfSuspendedSymbol(exchange, symbol),
    exchange,
    fromMs: haltAtMs,
    toMs: resumeAtMs !== undefined && Number.isFinite(resumeAtMs) ? resumeAtMs : undefined,
  };
}

/** `halts` by code and start, one halt held twice (several polls, several files) counted once: the last one read wins. */
export function uniqueHalts(halts: Iterable<DatasetHalt>): DatasetHalt[] {
  const seen = new Map<string, DatasetHalt>();
  for (const h of halts) seen.set(`${h.code}\u0000${h.fromMs}`, h);
  return [...seen.values()].sort((a, b) =>
    a.code < b.code ? -1 : a.code > b.code ? 1 : a.fromMs - b.fromMs,
  );
}
