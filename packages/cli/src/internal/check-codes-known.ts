import type { KlineType, QuoteflowClient } from '@quoteflow/core';

/**
 * Asks the service for the newest bar of every (code, kline type) before any file is written: a
 * code it does not know fails the command then (exit 3, naming the code) instead of after the
 * files of the others landed. Costs one `/batch-kline` request per plan group cap, as one live
 * cycle does; the answers are not kept.
 */
export async function checkCodesKnown(
  client: QuoteflowClient,
  codes: readonly string[],
  klineTypes: readonly KlineType[],
  signal: AbortSignal,
): Promise<void> {
  const groups = codes.flatMap((code) =>
    klineTypes.map((klineType) => ({ code, klineType, count: 1 as const })),
  );
  await client.batchKline(groups, { signal, priority: 'live', sourceId: 'code-check' });
}
