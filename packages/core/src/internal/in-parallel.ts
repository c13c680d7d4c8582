/**
 * Runs `work` for every part at once (a call's requests split by plan limits or by family); the
 * first failure aborts the others and rejects. The results in the order of `parts`.
 */
export async function inParallel<P, R>(
  parts: readonly P[],
  signal: AbortSignal | undefined,
  work: (part: P, signal: AbortSignal | undefined) => Promise<readonly R[]>,
): Promise<R[]> {
  // One part (the common case) needs no linked controller: fewer abort listeners per request.
  if (parts.length === 1) return [...(await work(parts[0]!, signal))];
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal?.reason);
  if (signal?.aborted === true) controller.abort(signal.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const results = await Promise.all(
      parts.map((p) =>
        work(p, controller.signal).catch((err: unknown) => {
          controller.abort(err);
          throw err;
        }),
      ),
    );
    return results.flat();
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}
