import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  QuoteflowClient,
  acceleratedClock,
  type BarUpdate,
  type Clock,
  type GapMarker,
  type HistoryMarker,
} from '@quoteflow/core';
import { startSimulator, type Simulator } from '@quoteflow/simulator';
import { Subject, takeWhile, toArray, firstValueFrom } from 'rxjs';
import { klineUpdates, type KlineUniverseChange } from './kline-updates.js';

const TOKEN = 'pipelines-kline-updates-token';
type Out = BarUpdate | GapMarker | HistoryMarker;
let sim: Simulator;
let client: QuoteflowClient;
let clock: Clock;

beforeAll(async () => {
  clock = acceleratedClock({ speed: 30 });
  sim = await startSimulator({ port: 0, tokens: { [TOKEN]: 'professional' }, seed: 13, clock });
});
afterAll(async () => {
  await sim.close();
});
beforeEach(() => {
  client = new QuoteflowClient({ baseUrl: sim.url, token: TOKEN, plan: 'professional', clock });
});
afterEach(async () => {
  await client.close();
});

/** The outputs of one series, in stream order. */
function ofSeries(out: readonly Out[], code: string): Out[] {
  return out.filter((o) => o.code === code);
}

function phases(out: readonly Out[]): string[] {
  return out.flatMap((o) => (o.type === 'history' ? [o.phase] : []));
}

/** Bar starts of the final updates among `out`. */
function finals(out: readonly Out[]): number[] {
  return out.flatMap((o) => (o.type === 'bar-update' && o.final ? [o.tsMs] : []));
}

describe('klineUpdates: history markers', () => {
  it('brackets each series’ backfill of several pages: begin before its first bar, complete once after its last page', async () => {
    const codes = ['BTCUSDT', 'ETHUSDT'];
    const completed = new Set<string>();
    // Until both histories are complete and each series has one final more (the live poll's).
    const out = await firstValueFrom(
      klineUpdates(client, { codes, klineTypes: [1], bars: 1_200, clock }).pipe(
        takeWhile((o) => {
          if (o.type === 'history' && o.phase === 'complete') completed.add(o.code);
          return completed.size < codes.length;
        }, true),
        toArray(),
      ),
    );
    for (const code of codes) {
      const mine = ofSeries(out, code);
      expect(mine[0], code).toEqual({ type: 'history', code, klineType: 1, phase: 'begin' });
      expect(phases(mine), code).toEqual(['begin', 'complete']);
      const end = mine.findIndex((o) => o.type === 'history' && o.phase === 'complete');
      const history = finals(mine.slice(0, end));
      // The pages came newest first (the reason for the markers): not in time order before the end.
      expect(history.length, code).toBeGreaterThanOrEqual(1_200);
      expect(history, code).not.toEqual([...history].sort((a, b) => a - b));
    }
  });

  it('a backfill-only run ends each history once every bar of it is out, the window’s oldest included', async () => {
    const out = await firstValueFrom(
      klineUpdates(client, { codes: ['BTCUSDT'], klineTypes: [1], bars: 1_200, live: false, clock }).pipe(
        toArray(),
      ),
    );
    const bars = out.filter((o) => o.type === 'bar-update');
    expect(out[0]).toEqual({ type: 'history', code: 'BTCUSDT', klineType: 1, phase: 'begin' });
    expect(out.at(-1)).toEqual({ type: 'history', code: 'BTCUSDT', klineType: 1, phase: 'complete' });
    expect(phases(out)).toEqual(['begin', 'complete']);
    expect(finals(bars)).toHaveLength(1_200);
  });

  it('a series removed during its backfill ends cut short, never complete; the others go on', async () => {
    const changes = new Subject<KlineUniverseChange>();
    const seen: Out[] = [];
    const out = await firstValueFrom(
      klineUpdates(client, {
        codes: ['BTCUSDT', 'ETHUSDT'],
        klineTypes: [1],
        bars: 1_200,
        changes,
        clock,
      }).pipe(
        takeWhile((o) => {
          seen.push(o);
          // Removed as soon as its history begins: its first page is not read yet.
          if (o.type === 'history' && o.code === 'BTCUSDT' && o.phase === 'begin')
            changes.next({ remove: ['BTCUSDT'] });
          return !(o.type === 'history' && o.code === 'ETHUSDT' && o.phase === 'complete');
        }, true),
        toArray(),
      ),
    );
    expect(out).toEqual(seen);
    expect(phases(ofSeries(out, 'BTCUSDT'))).toEqual(['begin', 'cut-short']);
    expect(phases(ofSeries(out, 'ETHUSDT'))).toEqual(['begin', 'complete']);
  });
});
