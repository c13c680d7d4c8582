import type { RequestRecord } from '@quoteflow/core';
import type { Logger } from 'pino';

/**
 * Says on stderr (a warning, shown by default) when a suspension query has not left after
 * `afterMs`: the token's once-a-minute slot was taken, maybe by another quoteflow process on this
 * machine, so the first answer can take up to a minute. Hand `onRequest` to the client.
 */
export function suspensionSlotNotice(
  logger: Logger,
  afterMs = 2_000,
): { readonly onRequest: (r: RequestRecord) => void; stop(): void } {
  let sent = false;
  const timer = setTimeout(() => {
    if (!sent)
      logger.warn(
        'waiting for the suspension query slot: one query a minute per token, shared by every quoteflow process of the token (another one may just have used it); the first answer can take up to 60 s',
      );
  }, afterMs);
  timer.unref();
  return {
    onRequest: (r) => {
      if (r.endpoint === 'suspension') sent = true;
    },
    stop: () => clearTimeout(timer),
  };
}
