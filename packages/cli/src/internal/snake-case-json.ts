/**
 * A value for quoteflow's JSON output with every camelCase key in snake_case (`durationMs` →
 * `duration_ms`), at any depth, and every absent value (`undefined`) as `null`, so a record keeps
 * its keys: the names the datasets, Kafka values and `run` use. Keys that are not camelCase
 * identifiers (a code, `per-minute`) are data and stay as they are.
 */
export function snakeCaseJson(value: unknown): unknown {
  if (value === undefined) return null;
  if (Array.isArray(value)) return value.map(snakeCaseJson);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [
      /^[a-z][A-Za-z0-9]*$/.test(key) ? key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) : key,
      snakeCaseJson(v),
    ]),
  );
}
