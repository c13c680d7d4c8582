/** `promise`, or a rejection naming the option once `timeoutMs` passed (the promise runs on). */
export async function withTimeout<T>(promise: Promise<T>, timeoutMs: number, option: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${option} = ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
