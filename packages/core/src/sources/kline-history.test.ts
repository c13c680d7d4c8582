import { firstValueFrom, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import type { Bar, GapMarker } from '../domain.js';
import type { CallOptions } from '../client-types.js';
import type { KlineQuery } from '../endpoints/kline.js';
import { InvalidOptionError } from '../errors.js';
import { planLimits } from '../plans.js';
import { HISTORY_GAP_REASONS, klineHistory } from './kline-history.js';
import type { SourceClient } from './source-client.js';

const MIN = 60_000;
const LATEST = 1_700_000_040_000; // a minute boundary

/**
 * A fake /kline over a series of one-minute bars from `firstMs` to LATEST. Like the real service it
 * answers newest-first, treats the end time (whole seconds) as inclusive, and repeats the bar just
 * after the end, so pages overlap.
 */
function series(firstMs: number, canPage = true) {
  const calls: { query: KlineQuery; options: CallOptions }[] = [];
  const clock = new ManualClock(LATEST);
  const client: SourceClient = {
    clock,
    familyOf: () => 'general',
    limits: planLimits('professional'),
    canPageBackwards: () => canPage,
    kline: async (query, options = {}) => {
      calls.push({ query, options });
      const endMs =
        query.endMs === undefined || query.endMs === 0 ? LATEST : Math.floor(query.endMs / 1000) * 1000;
      const out: Bar[] = [];
      if (endMs + MIN <= LATEST) out.push(bar(endMs - (endMs % MIN) + MIN, clock.now()));
      for (let t = endMs - (endMs % MIN); t >= firstMs && out.length < query.count; t -= MIN)
        out.push(bar(t, clock.now()));
      return out;
    },
    depth: async () => [],
    batchKline: async () => [],
    suspensions: async () => [],
    staticInfo: async () => [],
  };
  return { client, calls };
}
const bar = (tsMs: number, readAtMs = LATEST): Bar => ({
  type: 'bar',
  code: 'BTCUSDT',
  klineType: 1,
  tsMs,
  open: 1,
  high: 2,
  low: 0.5,
  close: 1.5,
  volume: 3,
  turnover: 4,
  readAtMs,
  receivedAtMs: readAtMs + 1,
});

const collect = (o: ReturnType<typeof klineHistory>) => lastValueFrom(o.pipe(toArray()));

describe('klineHistory', () => {
  it('pages backwards 500 bars a request until N bars, deduplicating overlaps, oldest first', async () => {
    const { client, calls } = series(LATEST - 5_000 * MIN);
    const out = (await collect(
      klineHistory(client, { code: 'BTCUSDT', klineType: 1, bars: 1_200, sourceId: 'h1' }),
    )) as Bar[];
    expect(out).toHaveLength(1_200);
    expect(out.every((b) => b.type === 'bar')).toBe(true);
    expect(out.at(-1)!.tsMs).toBe(LATEST);
    expect(out[0]!.tsMs).toBe(LATEST - 1_199 * MIN);
    for (let i = 1; i < out.length; i++) expect(out[i]!.tsMs - out[i - 1]!.tsMs).toBe(MIN);
    expect(calls.map((c) => c.query.count)).toEqual([500, 500, 202]);
    expect(calls[0]!.query.endMs).toBe(0);
    expect(calls[1]!.query.endMs).toBe(LATEST - 499 * MIN - 1_000);
    expect(calls.every((c) => c.options.priority === 'backfill' && c.options.sourceId === 'h1')).toBe(true);
  });

  it("stamps every bar of one call as one answer: the first page's read and the last page's arrival", async () => {
    const { client } = series(LATEST - 5_000 * MIN);
    let call = 0;
    const paged: SourceClient = {
      ...client,
      kline: async (query, options) => {
        const n = call++;
        const page = await client.kline(query, options);
        return page.map((b) => ({
          ...b,
          readAtMs: LATEST + n * 1_000,
          receivedAtMs: LATEST + n * 1_000 + 10,
        }));
      },
    };
    const out = (await collect(klineHistory(paged, { code: 'BTCUSDT', klineType: 1, bars: 1_200 }))) as Bar[];
    expect(call).toBe(3);
    expect(new Set(out.map((b) => `${b.readAtMs}/${b.receivedAtMs}`))).toEqual(
      new Set([`${LATEST}/${LATEST + 2_010}`]),
    );
  });

  it('stops at the start time and leaves out older bars', async () => {
    const { client, calls } = series(LATEST - 5_000 * MIN);
    const startMs = LATEST - 700 * MIN;
    const out = (await collect(klineHistory(client, { code: 'BTCUSDT', klineType: 1, startMs }))) as Bar[];
    expect(out[0]!.tsMs).toBe(startMs);
    expect(out).toHaveLength(701);
    expect(calls).toHaveLength(2);
  });

  it('says clearly, with a gap marker first, that a stock code cannot page beyond one page', async () => {
    const { client, calls } = series(LATEST - 5_000 * MIN, false);
    const out = await collect(klineHistory(client, { code: 'AAPL.US', klineType: 1, bars: 800 }));
    expect(calls).toHaveLength(1);
    const marker = out[0] as GapMarker;
    expect(marker).toMatchObject({ type: 'gap', code: 'AAPL.US', klineType: 1, toMs: LATEST - 499 * MIN });
    expect(marker.reason).toContain(HISTORY_GAP_REASONS.cannotPage);
    expect(marker.reason).toContain('got 500 of 800 bars');
    expect(out.slice(1)).toHaveLength(500);
  });

  it('marks history that runs out before N bars', async () => {
    const { client } = series(LATEST - 699 * MIN);
    const out = await collect(klineHistory(client, { code: 'BTCUSDT', klineType: 1, bars: 1_000 }));
    expect(out[0]).toMatchObject({
      type: 'gap',
      reason: expect.stringContaining(HISTORY_GAP_REASONS.exhausted),
    });
    expect(out).toHaveLength(701);
  });

  it('emits no marker when a stock code needs only one page', async () => {
    const { client } = series(LATEST - 5_000 * MIN, false);
    const out = await collect(klineHistory(client, { code: 'AAPL.US', klineType: 1, bars: 300 }));
    expect(out).toHaveLength(300);
    expect(out.some((x) => x.type === 'gap')).toBe(false);
  });

  it('aborts the page in flight on unsubscribe and checks options up front', async () => {
    let signal: AbortSignal | undefined;
    const { client } = series(0);
    const hanging: SourceClient = {
      ...client,
      kline: (_q, o = {}) => ((signal = o.signal), new Promise<Bar[]>(() => {})),
    };
    const sub = klineHistory(hanging, { code: 'BTCUSDT', klineType: 1, bars: 5 }).subscribe();
    await Promise.resolve();
    sub.unsubscribe();
    expect(signal?.aborted).toBe(true);
    expect(() => klineHistory(client, { code: 'BTCUSDT', klineType: 1 })).toThrow(InvalidOptionError);
    expect(() => klineHistory(client, { code: 'BTCUSDT', klineType: 12 as never, bars: 1 })).toThrow(
      /klineType/,
    );
    await expect(
      firstValueFrom(
        klineHistory(series(0, false).client, { code: 'AAPL.US', klineType: 1, bars: 5, endMs: 5 }),
      ),
    ).rejects.toThrow(/cannot page/);
  });
});
