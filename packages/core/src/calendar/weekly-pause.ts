import { zonedToUtcMs } from '../internal/zoned-time.js';

/**
 * The weekly pause of forex, metals, energy, CFD indices and commodities. Their week runs from
 * Sunday 17:00 to Friday 17:00 New York (the interbank week follows the New York close), but
 * providers differ at its edges: some start bars on Sunday evening, others on Monday 00:00 UTC;
 * some end them at the New York close, others at Saturday 00:00 UTC. Rules here, not generated
 * data: no package publishes these hours, and they have not changed in decades.
 */

const DAY_MS = 86_400_000;
const NEW_YORK = 'America/New_York';

/** Whether the week of forex and the like trades at instant `ms` (Sunday 17:00 to Friday 17:00 New York). */
export function isWeeklyMarketOpenAt(ms: number): boolean {
  const utcDay = Math.floor(ms / DAY_MS);
  const weekday = (utcDay + 4) % 7; // 1970-01-01 was a Thursday
  if (weekday === 6) return false; // Saturday UTC lies wholly inside the pause
  const d = new Date(utcDay * DAY_MS);
  const [y, m, day] = [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate()];
  // 17:00 New York falls on the same UTC date (21:00 or 22:00 UTC).
  const nyClose = zonedToUtcMs(NEW_YORK, y, m, day, 17);
  if (weekday === 5) return ms < nyClose;
  if (weekday === 0) return ms >= nyClose;
  return true;
}

/**
 * Trading time within [fromMs, toMs) that every provider's reading of the week counts as trading:
 * Monday 00:00 UTC to Friday 17:00 New York, except 25 December and 1 January (UTC dates), when
 * most venues are shut. A bar period that overlaps it is expected from every provider.
 */
export function surelyTradingMsBetween(fromMs: number, toMs: number): number {
  let total = 0;
  if (!(toMs > fromMs)) return 0;
  for (let day = Math.floor(fromMs / DAY_MS); day * DAY_MS < toMs; day++) {
    const weekday = (day + 4) % 7;
    if (weekday === 0 || weekday === 6) continue;
    const d = new Date(day * DAY_MS);
    const mmdd = (d.getUTCMonth() + 1) * 100 + d.getUTCDate();
    if (mmdd === 1225 || mmdd === 101) continue;
    const start = day * DAY_MS;
    const end =
      weekday === 5
        ? zonedToUtcMs(NEW_YORK, d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), 17)
        : start + DAY_MS;
    const overlap = Math.min(end, toMs) - Math.max(start, fromMs);
    if (overlap > 0) total += overlap;
  }
  return total;
}
