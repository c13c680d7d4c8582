import { QuoteflowError, type ErrorCode, type KlineType, type QuoteflowClient } from '@quoteflow/core';
import { findRefusedCodes, isCodeRefusal } from '@quoteflow/pipelines/internal';

/**
 * Asks the service for the newest bar of every (code, kline type) before any file is written: a
 * code it does not serve fails the command then (exit 3, naming that code) instead of after the
 * files of the others landed. Costs one `/batch-kline` request per plan group cap, as one live
 * cycle does (the answers are not kept); when the service refuses, a few more find which codes
 * (it refuses a request as a whole without saying which). The error names the codes, not the
 * endpoint of the check: `backfill` itself reads through `/kline`.
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
  try {
    await client.batchKline(groups, { signal, priority: 'live', sourceId: 'code-check' });
  } catch (err) {
    if (!isCodeRefusal(err)) throw err;
    const refused = await findRefusedCodes(client, groups, signal);
    const named = refused.length === 0 ? codes : refused.map((r) => r.code);
    const first = refused[0]?.error;
    const refusal = isCodeRefusal(first) ? first : err;
    const why =
      refusal.code === 'QF_UNAUTHORIZED_CODE'
        ? `not covered by the plan ${client.plan}`
        : 'unknown to the service (codes are case-sensitive)';
    const answer = `the service answered ret ${refusal.ret} "${refusal.msg}"${refusal.trace === undefined ? '' : `, trace ${refusal.trace}`}`;
    throw new RefusedCodesError(
      refusal.code,
      `--codes: the service does not serve ${named.join(', ')}: ${why} (${answer}); nothing was fetched or written`,
    );
  }
}

/** Codes the service refused at the start (exit 3: its code is the refusal's). */
class RefusedCodesError extends QuoteflowError {
  constructor(code: ErrorCode, message: string) {
    super(code, message);
  }
}
