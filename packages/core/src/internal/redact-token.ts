/**
 * Replaces every `token=<value>` in `text` (URLs, undici messages) with `token=***`, and every
 * literal occurrence of `token` itself when it is given: the token never leaves in a message.
 */
export function redactToken(text: string, token?: string): string {
  let out = text.replace(/(token(?:=|%3D|"\s*:\s*"))[^&\s"'#]*/gi, '$1***');
  if (token !== undefined && token.length > 0) out = out.split(token).join('***');
  return out;
}
