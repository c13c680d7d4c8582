/**
 * Replaces every `token=<value>` in `text` (URLs, undici messages) with `token=***`, and every
 * literal occurrence of `token` itself when it is given: the token never leaves in a message.
 */
export function redactToken(text: string, token?: string): string {
  let out = text.replace(/(token(?:=|%3D|"\s*:\s*"))[^&\s"'#]*/gi, '$1***');
  if (token !== undefined && token.length > 0) out = out.split(token).join('***');
  return out;
}

/**
 * Redacts the token from every own string property of `err` and its cause chain (message, stack,
 * and fields such as a service `msg` that echoed it), in place; returns `err`.
 */
export function redactErrorInPlace<E>(err: E, token: string): E {
  const seen = new Set<unknown>();
  for (let e: unknown = err; e instanceof Error && !seen.has(e); e = e.cause) {
    seen.add(e);
    for (const key of Object.getOwnPropertyNames(e)) {
      const value = (e as unknown as Record<string, unknown>)[key];
      if (typeof value === 'string') {
        const clean = redactToken(value, token);
        if (clean !== value)
          Object.defineProperty(e, key, {
            value: clean,
            writable: true,
            configurable: true,
            enumerable: key !== 'stack' && key !== 'message',
          });
      }
    }
  }
  return err;
}
