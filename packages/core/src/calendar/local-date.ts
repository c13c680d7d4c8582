/** A local calendar date (month 1-12), without a zone: plain date arithmetic, no offsets involved. */
export type LocalDate = readonly [year: number, month: number, day: number];

/** `date` plus `days` calendar days. */
export function addLocalDays([y, m, d]: LocalDate, days: number): LocalDate {
  const t = new Date(Date.UTC(y, m - 1, d + days));
  return [t.getUTCFullYear(), t.getUTCMonth() + 1, t.getUTCDate()];
}

/** Day of the week of a local date (0 = Sunday). */
export function weekdayOfDate([y, m, d]: LocalDate): number {
  return new Date(Date.UTC(y, m - 1, d)).getUTCDay();
}

/** `YYYY-MM-DD`. */
export function formatLocalDate([y, m, d]: LocalDate): string {
  return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

/** Parses `YYYY-MM-DD`. */
export function parseLocalDate(date: string): LocalDate {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return [y, m, d];
}
