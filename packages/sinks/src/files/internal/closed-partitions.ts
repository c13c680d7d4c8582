/**
 * Whether a dataset partition (a path relative to `DIR`) covers a period that ended before `nowMs`
 * (UTC, as the writer partitions): `month=2026-01` is closed from 2026-02-01, `date=2026-01-05` from
 * the next day, `year=2025` from 2026. Partitions without a period (`kline_type=K` alone,
 * `exchange=E`) are never closed.
 */
export function isPartitionClosed(partition: string, nowMs: number): boolean {
  const leaf = partition.slice(partition.lastIndexOf('/') + 1);
  let m = /^month=(\d{4})-(\d{2})$/.exec(leaf);
  if (m !== null) return Date.UTC(Number(m[1]), Number(m[2]), 1) <= nowMs;
  m = /^date=(\d{4})-(\d{2})-(\d{2})$/.exec(leaf);
  if (m !== null) return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + 1) <= nowMs;
  m = /^year=(\d{4})$/.exec(leaf);
  if (m !== null) return Date.UTC(Number(m[1]) + 1, 0, 1) <= nowMs;
  return false;
}
