import { describe, expect, it } from 'vitest';
import { simBarPeriodAt } from './calendars.js';
import { defaultCatalogue } from './catalogue.js';
import { SimMarket } from './sim-market.js';
import { SIM_LABELLINGS, type SimLabelling } from './sim-labelling.js';

// Tuesday 2026-11-17 15:00Z = 10:00 New York, 23:00 Hong Kong / Shanghai.
const NOW = Date.parse('2026-11-17T15:00:00Z');
const HISTORY = NOW - 150 * 86_400_000;
const market = (seed = 1, labelling: Partial<SimLabelling> = {}) =>
  new SimMarket(defaultCatalogue(), { seed, historyStartMs: HISTORY, labelling });
const values = ({ startMs: _label, ...rest }: { startMs: number }) => rest;

describe('SimMarket bars', () => {
  it('is deterministic per seed and differs between seeds', () => {
    const a = market(1).bars('BTCUSDT', 1, NOW, 50);
    const b = market(1).bars('BTCUSDT', 1, NOW, 50);
    const c = market(2).bars('BTCUSDT', 1, NOW, 50);
    expect(a).toEqual(b);
    expect(a.map((x) => x.close)).not.toEqual(c.map((x) => x.close));
  });

  it('returns bars oldest first, aligned to their periods, with the last one forming', () => {
    const m = market();
    for (const code of ['BTCUSDT', 'AAPL.US', '700.HK', '600416.SH', 'EURGBP']) {
      for (const type of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]) {
        const p = m.product(code)!;
        if (p.family === 'stock' && (type === 6 || type === 7)) continue;
        const bars = m.bars(code, type, NOW, 30);
        expect(bars.length).toBeGreaterThan(0);
        for (let i = 0; i < bars.length; i++) {
          const bar = bars[i]!;
          if (i > 0) expect(bar.startMs).toBeGreaterThan(bars[i - 1]!.startMs);
          const period = simBarPeriodAt(bar.startMs, type, p.calendar);
          expect(period?.startMs).toBe(bar.startMs);
          expect(bar.high).toBeGreaterThanOrEqual(Math.max(bar.open, bar.close));
          expect(bar.low).toBeLessThanOrEqual(Math.min(bar.open, bar.close));
          expect(bar.forming).toBe(bar.endMs > NOW);
          if (i < bars.length - 1) expect(bar.forming).toBe(false);
        }
      }
    }
  });

  it('has no stock bars outside session hours', () => {
    const m = market();
    for (const code of ['AAPL.US', '700.HK', '000627.SZ']) {
      const p = m.product(code)!;
      for (const bar of m.bars(code, 1, NOW, 500)) {
        expect(simBarPeriodAt(bar.startMs, 1, p.calendar)).toBeDefined();
      }
    }
    // At 23:00 Hong Kong the last HK 1-minute bar is the 15:59 one, closed.
    const last = m.bars('700.HK', 1, NOW, 1)[0]!;
    expect(last.startMs).toBe(Date.parse('2026-11-17T07:59:00Z'));
    expect(last.forming).toBe(false);
  });

  it('has no forex bars on weekends but crypto bars every day', () => {
    const m = market();
    const sunday = Date.parse('2026-11-22T12:00:00Z');
    const fx = m.bars('EURGBP', 5, sunday, 3);
    expect(fx.at(-1)!.startMs).toBe(Date.parse('2026-11-20T23:00:00Z'));
    const btc = m.bars('BTCUSDT', 5, sunday, 1);
    expect(btc[0]!.startMs).toBe(Date.parse('2026-11-22T12:00:00Z'));
  });

  it('makes every K-line type the exact fold of the 1-minute bars it spans', () => {
    const m = market();
    const ones = m.bars('ETHUSDT', 1, NOW, 240);
    const fives = m.bars('ETHUSDT', 2, NOW, 12);
    for (const five of fives) {
      const inside = ones.filter((b) => b.startMs >= five.startMs && b.startMs < five.endMs);
      if (inside.length !== 5) continue;
      expect(five.open).toBeCloseTo(inside[0]!.open, 9);
      expect(five.close).toBeCloseTo(inside.at(-1)!.close, 9);
      expect(five.high).toBeCloseTo(Math.max(...inside.map((b) => b.high)), 9);
      expect(five.low).toBeCloseTo(Math.min(...inside.map((b) => b.low)), 9);
      expect(five.volume).toBeCloseTo(
        inside.reduce((s, b) => s + b.volume, 0),
        4,
      );
    }
  });

  it('makes the daily bar of a stock the fold of its session minutes', () => {
    const m = market();
    const friday = Date.parse('2026-11-13T23:00:00Z');
    const day = m.bars('AAPL.US', 8, friday, 1)[0]!;
    const minutes = m.bars('AAPL.US', 1, friday, 390);
    expect(minutes[0]!.startMs).toBe(Date.parse('2026-11-13T14:30:00Z'));
    expect(day.open).toBeCloseTo(minutes[0]!.open, 9);
    expect(day.close).toBeCloseTo(minutes.at(-1)!.close, 9);
    expect(day.high).toBeCloseTo(Math.max(...minutes.map((b) => b.high)), 9);
  });

  it('keeps the forming daily bar the fold of today’s 1-minute bars, poll after poll', () => {
    const m = market(77);
    const dayStart = Date.parse('2026-11-17T00:00:00Z');
    for (const t of [
      dayStart + 3_600_000 + 7_000,
      dayStart + 3_600_000 + 65_500,
      dayStart + 5 * 3_600_000 + 1,
      dayStart + 2 * 3_600_000,
    ]) {
      const day = m.bars('SOLUSDT', 8, t, 1)[0]!;
      const minutes = m.bars('SOLUSDT', 1, t, 400).filter((b) => b.startMs >= dayStart);
      expect(day.forming).toBe(true);
      expect(day.open).toBeCloseTo(minutes[0]!.open, 9);
      expect(day.close).toBeCloseTo(minutes.at(-1)!.close, 9);
      expect(day.high).toBeCloseTo(Math.max(...minutes.map((b) => b.high)), 9);
      expect(day.low).toBeCloseTo(Math.min(...minutes.map((b) => b.low)), 9);
      expect(day.volume).toBeCloseTo(
        minutes.reduce((sum, b) => sum + b.volume, 0),
        4,
      );
    }
  });

  it('changes the forming bar as market time passes, then closes it unchanged', () => {
    const m = market();
    const t = Date.parse('2026-11-17T15:00:20Z');
    const a = m.bars('BTCUSDT', 1, t, 1)[0]!;
    const b = m.bars('BTCUSDT', 1, t + 17_000, 1)[0]!;
    expect(a.startMs).toBe(b.startMs);
    expect(a.forming && b.forming).toBe(true);
    expect(b.close).not.toBe(a.close);
    expect(b.volume).toBeGreaterThan(a.volume);
    expect(b.high).toBeGreaterThanOrEqual(a.high);
    const closed = m.bars('BTCUSDT', 1, t + 120_000, 3)[0]!;
    const closedAgain = m.bars('BTCUSDT', 1, t + 3_600_000, 70).find((x) => x.startMs === a.startMs);
    expect(closed.startMs).toBe(a.startMs);
    expect(closedAgain).toEqual(closed);
  });

  it('honours an end timestamp: bars whose start is at or before it', () => {
    const m = market();
    const end = Date.parse('2026-11-10T08:30:00Z');
    const bars = m.bars('AUDUSD', 1, NOW, 5, end);
    expect(bars.map((b) => b.startMs)).toEqual([4, 3, 2, 1, 0].map((k) => end - k * 60_000));
  });

  it('labels every bar at the start of the period that holds it, under every labelling', () => {
    for (const labelling of SIM_LABELLINGS) {
      const m = market(1, labelling);
      for (const code of ['AAPL.US', '700.HK', '600416.SH', 'BTCUSDT']) {
        for (const type of [1, 5, 8, 9, 10]) {
          const bars = m.bars(code, type, NOW, 12);
          expect(bars.length).toBeGreaterThan(0);
          for (let i = 0; i < bars.length; i++) {
            const bar = bars[i]!;
            if (i > 0) expect(bar.startMs).toBeGreaterThanOrEqual(bars[i - 1]!.endMs);
            expect(m.periodAt(code, type, bar.endMs - 1)).toMatchObject({
              startMs: bar.startMs,
              endMs: bar.endMs,
            });
            expect(bar.forming).toBe(bar.endMs > NOW);
          }
        }
      }
    }
  });

  it('gives a stock daily, weekly and monthly bar the same values under every labelling, only another label', () => {
    const friday = Date.parse('2026-11-13T23:00:00Z');
    for (const code of ['AAPL.US', '700.HK', '600416.SH']) {
      for (const type of [8, 9, 10]) {
        for (const t of [NOW, friday]) {
          const byLabelling = SIM_LABELLINGS.map((l) => market(3, l).bars(code, type, t, 3));
          for (const bars of byLabelling.slice(1))
            expect(bars.map(values)).toEqual(byLabelling[0]!.map(values));
        }
      }
    }
    const daily = (l: Partial<SimLabelling>) => market(3, l).bars('AAPL.US', 8, friday, 1)[0]!.startMs;
    expect(new Date(daily({ daily: 'local-midnight' })).toISOString()).toBe('2026-11-13T05:00:00.000Z');
    expect(new Date(daily({ daily: 'utc-midnight' })).toISOString()).toBe('2026-11-13T00:00:00.000Z');
    expect(new Date(daily({ daily: 'session-open' })).toISOString()).toBe('2026-11-13T14:30:00.000Z');
  });

  it("makes a 'clock' hourly stock bar the fold of the session minutes inside its clock hour", () => {
    const m = market(5, { intraday: 'clock' });
    const t = Date.parse('2026-11-17T16:10:00Z'); // 11:10 New York
    const [first, second] = m.bars('AAPL.US', 5, t, 3);
    expect(first!.startMs).toBe(Date.parse('2026-11-17T14:00:00Z'));
    expect(second!.startMs).toBe(Date.parse('2026-11-17T15:00:00Z'));
    const minutes = m
      .bars('AAPL.US', 1, t, 200)
      .filter((b) => b.startMs < first!.endMs && b.startMs >= first!.startMs);
    expect(minutes).toHaveLength(30);
    expect(minutes[0]!.startMs).toBe(Date.parse('2026-11-17T14:30:00Z'));
    expect(first!.open).toBeCloseTo(minutes[0]!.open, 9);
    expect(first!.close).toBeCloseTo(minutes.at(-1)!.close, 9);
    expect(first!.volume).toBeCloseTo(
      minutes.reduce((sum, b) => sum + b.volume, 0),
      4,
    );
  });

  it('selects by label with an end timestamp: a bar labelled before its first trade is included', () => {
    const end = Date.parse('2026-11-17T07:00:00Z'); // 02:00 New York, before Tuesday's open
    const latest = (daily: SimLabelling['daily']) =>
      new Date(market(1, { daily }).bars('AAPL.US', 8, NOW, 1, end)[0]!.startMs).toISOString();
    expect(latest('local-midnight')).toBe('2026-11-17T05:00:00.000Z');
    expect(latest('utc-midnight')).toBe('2026-11-17T00:00:00.000Z');
    expect(latest('session-open')).toBe('2026-11-16T14:30:00.000Z');
    // A monthly forex bar labelled on Saturday 2026-08-01, whose first trade is on Monday the 3rd.
    const sat = Date.parse('2026-08-01T12:00:00Z');
    const aug = market(1).bars('AUDUSD', 10, Date.parse('2026-08-05T00:00:00Z'), 2, sat);
    expect(aug.map((b) => new Date(b.startMs).toISOString())).toEqual([
      '2026-07-01T00:00:00.000Z',
      '2026-08-01T00:00:00.000Z',
    ]);
  });

  it('keeps the weekly US bar of the week before daylight saving time starts forming until 16:00 New York on Friday', () => {
    // DST starts Sunday 2026-03-08; Friday the 6th closes at 16:00 EST = 21:00Z (an hour-early bug would say 20:00Z).
    for (const labelling of SIM_LABELLINGS) {
      const m = new SimMarket(defaultCatalogue(), {
        seed: 1,
        historyStartMs: Date.parse('2026-01-01T00:00:00Z'),
        labelling,
      });
      const at = (iso: string) => m.bars('AAPL.US', 9, Date.parse(iso), 1)[0]!;
      expect(at('2026-03-06T20:30:00Z')).toMatchObject({
        forming: true,
        endMs: Date.parse('2026-03-06T21:00:00Z'),
      });
      expect(at('2026-03-06T20:59:59Z').forming).toBe(true);
      expect(at('2026-03-06T21:00:00Z').forming).toBe(false);
      expect(at('2026-03-07T12:00:00Z')).toEqual(at('2026-03-06T21:00:00Z'));
      // The first EDT week closes at 16:00 EDT = 20:00Z.
      expect(at('2026-03-13T19:59:00Z').forming).toBe(true);
      expect(at('2026-03-13T20:00:00Z')).toMatchObject({
        forming: false,
        endMs: Date.parse('2026-03-13T20:00:00Z'),
      });
    }
  });

  it('stops at the start of history', () => {
    const m = market();
    const bars = m.bars('BTCUSDT', 10, NOW, 500);
    expect(bars.length).toBeLessThan(20);
    expect(bars[0]!.startMs).toBeGreaterThanOrEqual(
      simBarPeriodAt(HISTORY, 10, m.product('BTCUSDT')!.calendar)!.startMs,
    );
  });
});

describe('SimMarket books', () => {
  it('grows seq only when the book changes', () => {
    const m = market();
    let prev = m.book('BTCUSDT', NOW);
    let changes = 0;
    for (let t = NOW + 100; t < NOW + 20_000; t += 100) {
      const b = m.book('BTCUSDT', t);
      if (b.seq === prev.seq) expect(b).toEqual(prev);
      else {
        expect(b.seq).toBeGreaterThan(prev.seq);
        expect(b.tickTimeMs).toBeGreaterThan(prev.tickTimeMs);
        changes++;
      }
      prev = b;
    }
    expect(changes).toBeGreaterThan(5);
  });

  it('freezes a stock book outside session hours', () => {
    const m = market();
    const a = m.book('700.HK', NOW);
    const b = m.book('700.HK', NOW + 3_600_000);
    expect(b).toEqual(a);
    expect(a.tickTimeMs).toBeLessThanOrEqual(Date.parse('2026-11-17T08:00:00Z'));
  });

  it('keeps levels within the documented depth per class, best first', () => {
    const m = market();
    const max: Record<string, number> = {
      'AAPL.US': 1,
      '700.HK': 10,
      '600416.SH': 5,
      BTCUSDT: 5,
      EURGBP: 1,
      GOLD: 1,
      USOIL: 1,
    };
    for (const [code, levels] of Object.entries(max)) {
      for (let k = 0; k < 20; k++) {
        const b = m.book(code, NOW - k * 37_000);
        expect(b.bids.length).toBeLessThanOrEqual(levels);
        expect(b.asks.length).toBeLessThanOrEqual(levels);
        for (let i = 1; i < b.bids.length; i++) expect(b.bids[i]![0]).toBeLessThan(b.bids[i - 1]![0]);
        for (let i = 1; i < b.asks.length; i++) expect(b.asks[i]![0]).toBeGreaterThan(b.asks[i - 1]![0]);
        if (b.bids.length > 0 && b.asks.length > 0) expect(b.asks[0]![0]).toBeGreaterThan(b.bids[0]![0]);
      }
    }
  });

  it('empties one side of an A-share book on a limit day once the price reaches the limit', () => {
    const m = market();
    let found = 0;
    for (const code of [
      '600416.SH',
      '600519.SH',
      '601318.SH',
      '600036.SH',
      '000627.SZ',
      '000001.SZ',
      '000858.SZ',
      '300750.SZ',
    ]) {
      for (let d = 0; d < 120 && found < 3; d++) {
        const afternoon = Date.parse('2026-11-17T06:30:00Z') - d * 86_400_000; // 14:30 Shanghai
        const dir = m.limitDirection(code, afternoon);
        if (dir === 0 || [0, 6].includes(new Date(afternoon).getUTCDay())) continue;
        const book = m.book(code, afternoon);
        const bar = m.bars(code, 8, afternoon, 1)[0]!;
        if (dir > 0) {
          expect(book.asks).toEqual([]);
          expect(book.bids[0]![0]).toBeCloseTo(bar.close, 2);
        } else {
          expect(book.bids).toEqual([]);
          expect(book.asks[0]![0]).toBeCloseTo(bar.close, 2);
        }
        found++;
      }
    }
    expect(found).toBeGreaterThan(0);
  });

  it('can put seq above 2^53', () => {
    const m = new SimMarket(defaultCatalogue(), { seed: 1, historyStartMs: HISTORY, seqBase: 2n ** 53n });
    expect(m.book('ETHUSDT', NOW).seq).toBeGreaterThan(2n ** 53n);
  });
});
