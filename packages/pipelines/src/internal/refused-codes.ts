import { ServiceError, type KlineType, type QuoteflowClient } from '@quoteflow/core';

/** A refusal that names no code but concerns the codes asked: unknown (600) or not in the plan (604). */
export function isCodeRefusal(err: unknown): err is ServiceError {
  return (
    err instanceof ServiceError && (err.code === 'QF_INVALID_CODE' || err.code === 'QF_UNAUTHORIZED_CODE')
  );
}

/** A code the service refused, and its refusal. */
export interface RefusedCode {
  readonly code: string;
  readonly error: unknown;
}

/**
 * Which of `series`' codes the service refuses: it refuses a whole `/batch-kline` request for one
 * unknown code without saying which, so the codes are asked in halves (the newest bar of each,
 * through `/batch-kline`: about 2·log2(n) requests for one refused code among n) down to the ones
 * refused. Any other failure is thrown.
 */
export async function findRefusedCodes(
  client: QuoteflowClient,
  series: readonly { readonly code: string; readonly klineType: KlineType }[],
  signal: AbortSignal,
): Promise<RefusedCode[]> {
  const typeOf = new Map<string, KlineType>();
  for (const s of series) if (!typeOf.has(s.code)) typeOf.set(s.code, s.klineType);
  const probe = async (codes: readonly string[]): Promise<RefusedCode[]> => {
    try {
      await client.batchKline(
        codes.map((code) => ({ code, klineType: typeOf.get(code)!, count: 1 as const })),
        { signal, priority: 'live', sourceId: 'code-check' },
      );
      return [];
    } catch (error) {
      if (!isCodeRefusal(error)) throw error;
      if (codes.length === 1) return [{ code: codes[0]!, error }];
      const half = Math.ceil(codes.length / 2);
      return [...(await probe(codes.slice(0, half))), ...(await probe(codes.slice(half)))];
    }
  };
  return typeOf.size === 0 ? [] : probe([...typeOf.keys()]);
}
