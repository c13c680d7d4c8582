/** JSON that carries bigints as decimal strings (depth `seq`) and drops nothing else. */
export function toJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), indent);
}
