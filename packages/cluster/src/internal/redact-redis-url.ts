/** A Redis URL safe for messages: the password (and user) replaced by `***`. */
export function redactRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '' || parsed.username !== '') {
      parsed.username = parsed.username === '' ? '' : '***';
      parsed.password = parsed.password === '' ? '' : '***';
    }
    return parsed.toString();
  } catch {
    return '<unparseable redis url>';
  }
}
