import { type Bar, type GapMarker, type KlineType } from '@quoteflow/core';
import { hasKlineType } from '@quoteflow/core/internal';
import { mergeBars } from '@quoteflow/operators';
import { defaultCatalogue, SimMarket } from '@quoteflow/simulator';
import { SIM_LABELLINGS } from '@quoteflow/simulator/internal';
import { from } from 'rxjs';
import { describe, expect, it } from 'vitest';

// What a sync sees: the simulator's history of every product class, read as one answer at each of
// these instants, through mergeBars (which reports gaps by core's calendar). Every bar the
// simulator lacks lies on a weekend, holiday, half day's afternoon, lunch break or forex weekend,
// so no gap may be reported.
const NOWS = [
  '2025-12-01T15:00:00Z', // Monday after Thanksgiving and its half day
  '2025-12-29T15:00:00Z', // after Christmas (US, HK) and HK's half day
  '2025-02-05T02:30:00Z', // A shares back from Lunar New Year, HK after its three days
  '2026-03-10T15:00:00Z', // US week after DST start
  '2026-02-24T02:30:00Z', // A shares after a week without sessions
  '2026-10-09T02:30:00Z', // A shares after Golden Week
];
const DAY_MS = 86_400_000;
const KLINE_TYPES: readonly KlineType[] = [1, 5, 8, 9];

describe('no false gap over weekends, holidays, lunch breaks and forex weekends', () => {
  for (const labelling of SIM_LABELLINGS) {
    it(`reports no missing bars in the simulator history of every class (${Object.values(labelling).join(',')})`, () => {
      const gaps: string[] = [];
      let bars = 0;
      for (const now of NOWS.map(Date.parse)) {
        // Five weeks of history: enough to cross each holiday, cheap to build.
        const market = new SimMarket(defaultCatalogue(), {
          seed: 5,
          historyStartMs: now - 35 * DAY_MS,
          labelling,
        });
        // One product per class and stock market: the calendar is all that differs within one.
        const seen = new Set<string>();
        const codes = market
          .products()
          .filter(
            (p) =>
              !seen.has(`${p.productClass}|${p.calendar.id}`) &&
              seen.add(`${p.productClass}|${p.calendar.id}`),
          )
          .map((p) => p.code);
        for (const code of codes) {
          for (const klineType of KLINE_TYPES) {
            if (!hasKlineType(code, klineType)) continue;
            const answer: Bar[] = market.bars(code, klineType, now, 500).map((b) => ({
              type: 'bar',
              code,
              klineType,
              tsMs: b.startMs,
              open: b.open,
              high: b.high,
              low: b.low,
              close: b.close,
              volume: b.volume,
              turnover: b.turnover,
              readAtMs: now,
              receivedAtMs: now,
            }));
            bars += answer.length;
            from([answer])
              .pipe(mergeBars())
              .subscribe((out) => {
                if (out.type !== 'gap' || (out as GapMarker).reason !== 'missing-bars') return;
                const g = out as GapMarker;
                gaps.push(
                  `${code} ${klineType} ${new Date(g.fromMs ?? 0).toISOString()} → ${new Date(g.toMs ?? 0).toISOString()}`,
                );
              });
          }
        }
      }
      expect(bars).toBeGreaterThan(2_000);
      expect(gaps).toEqual([]);
    });
  }
});
