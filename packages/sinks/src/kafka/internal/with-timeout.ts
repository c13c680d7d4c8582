import { QuoteflowError } from '@quoteflow/core';

/** No answer within the time an option allows (`QF_TIMEOUT`, retryable; the cause of the sink error it leads to). */
export class OperationTimeout extends QuoteflowError {
  constructor(message: string) {
    super('QF_TIMEOUT', message, { retryable: true });
  }
}

/**
 * `promise`, or an {@link OperationTimeout} naming the option once `timeoutMs` passed (the promise
 * runs on); `limit` says what the limit was when it is not the option itself.
 */
export async function withTimeout<T>(
  promise: Promise<T>,
  timeoutMs: number,
  option: string,
  limit = `${option} = ${timeoutMs} ms`,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new OperationTimeout(`no answer within ${limit}`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
