/** No answer within the time an option allows (the cause of the sink error it leads to). */
export class OperationTimeout extends Error {
  override name = 'OperationTimeout';
}

/** `promise`, or an {@link OperationTimeout} naming the option once `timeoutMs` passed (the promise runs on). */
export async function withTimeout<T>(promise: Promise<T>, timeoutMs: number, option: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new OperationTimeout(`no answer within ${option} = ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
