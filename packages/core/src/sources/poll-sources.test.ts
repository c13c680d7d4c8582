import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { clockScheduler, ManualClock } from '../clock.js';
import type { Bar, DepthTick, SuspensionRecord } from '../domain.js';
import type { CallOptions } from '../client-types.js';
import { InvalidOptionError, RateLimitedError } from '../errors.js';
import { planLimits } from '../plans.js';
import { fetchStaticInfo } from './fetch-static-info.js';
import { pollDepth } from './poll-depth.js';
import { pollLatestBars, pollLatestBatches } from './poll-latest-bars.js';
import { pollSuspensions } from './poll-suspensions.js';
import type { SourceClient } from './source-client.js';

/** A thenable that settles synchronously (or at a virtual time), so sources run on virtual time. */
function settled<T>(
  value: T | { error: unknown },
  at?: { scheduler: TestScheduler; ms: number },
): Promise<T> {
  const thenable = {
    then(ok?: (v: T) => unknown, fail?: (e: unknown) => unknown) {
      const run = () =>
        typeof value === 'object' && value !== null && 'error' in value
          ? fail?.(value.error)
          : ok?.(value as T);
      if (at === undefined) run();
      else at.scheduler.schedule(run, at.ms);
      return thenable;
    },
  };
  return thenable as unknown as Promise<T>;
}

const tick = (code: string, seq: number): DepthTick => ({
  type: 'depth',
  code,
  seq: BigInt(seq),
  tickTimeMs: seq,
  bids: [],
  asks: [],
});
const bar = (code: string, tsMs: number): Bar => ({
  type: 'bar',
  code,
  klineType: 1,
  tsMs,
  open: 1,
  high: 1,
  low: 1,
  close: 1,
  volume: 1,
  turnover: 1,
  readAtMs: tsMs,
  receivedAtMs: tsMs + 1,
});

function fakeClient(
  overrides: Partial<SourceClient>,
  plan: 'free' | 'professional' = 'professional',
): SourceClient {
  const unused = () => {
    throw new Error('not used in this test');
  };
  return {
    clock: new ManualClock(0),
    limits: planLimits(plan),
    canPageBackwards: () => true,
    familyOf: () => 'general',
    depth: unused,
    batchKline: unused,
    kline: unused,
    suspensions: unused,
    staticInfo: unused,
    ...overrides,
  };
}

const newScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

describe('pollDepth', () => {
  it('polls at subscribe and then every interval, emitting each tick with live priority and its source id', () => {
    const ts = newScheduler();
    const calls: CallOptions[] = [];
    let seq = 0;
    const client = fakeClient({
      depth: (codes, opts = {}) => {
        calls.push(opts);
        seq++;
        return settled(codes.map((c) => tick(c, seq)));
      },
    });
    ts.run(({ expectObservable }) => {
      const ticks$ = pollDepth(client, { codes: ['A', 'B'], intervalMs: 10, scheduler: ts, sourceId: 'd1' });
      expectObservable(ticks$, '^ 25ms !').toBe('(ab) 6ms (cd) 6ms (ef)', {
        a: tick('A', 1),
        b: tick('B', 1),
        c: tick('A', 2),
        d: tick('B', 2),
        e: tick('A', 3),
        f: tick('B', 3),
      });
    });
    expect(calls.map((c) => [c.priority, c.sourceId])).toEqual([
      ['live', 'd1'],
      ['live', 'd1'],
      ['live', 'd1'],
    ]);
  });

  it('skips a poll that falls due while the previous one is still in flight', () => {
    const ts = newScheduler();
    let n = 0;
    const client = fakeClient({ depth: () => settled([tick('A', ++n)], { scheduler: ts, ms: 15 }) });
    ts.run(({ expectObservable }) => {
      // polls due at 0, 10, 20, 30: the one at 10 is skipped (first answers at 15), the one at 20 answers at 35.
      expectObservable(pollDepth(client, { codes: ['A'], intervalMs: 10, scheduler: ts }), '^ 40ms !').toBe(
        '15ms a 19ms b',
        {
          a: tick('A', 1),
          b: tick('A', 2),
        },
      );
    });
  });

  it('aborts the request in flight when unsubscribed', () => {
    const ts = newScheduler();
    const signals: AbortSignal[] = [];
    const client = fakeClient({
      depth: (_codes, opts = {}) => {
        signals.push(opts.signal!);
        return settled([tick('A', 1)], { scheduler: ts, ms: 100 });
      },
    });
    ts.run(({ expectObservable }) => {
      expectObservable(pollDepth(client, { codes: ['A'], intervalMs: 10, scheduler: ts }), '^ 5ms !').toBe(
        '',
      );
    });
    expect(signals).toHaveLength(1);
    expect(signals[0]!.aborted).toBe(true);
  });

  it('errors with the typed error of a failed poll', () => {
    const ts = newScheduler();
    const err = new RateLimitedError({
      endpoint: 'depth-tick',
      ret: 429,
      msg: 'rate limit',
      trace: 't',
      status: 200,
    });
    let n = 0;
    const client = fakeClient({
      depth: () => (++n === 1 ? settled([tick('A', 1)]) : settled<DepthTick[]>({ error: err })),
    });
    ts.run(({ expectObservable }) => {
      expectObservable(pollDepth(client, { codes: ['A'], intervalMs: 10, scheduler: ts })).toBe(
        'a 9ms #',
        { a: tick('A', 1) },
        err,
      );
    });
  });

  it('is cold: nothing is requested before subscribe, and options are checked at once', () => {
    let called = 0;
    const client = fakeClient({ depth: () => (called++, settled([])) });
    pollDepth(client, { codes: ['A'] });
    expect(called).toBe(0);
    expect(() => pollDepth(client, { codes: [] })).toThrow(InvalidOptionError);
    expect(() => pollDepth(client, { codes: ['A'], intervalMs: 0 })).toThrow(/intervalMs/);
  });
});

describe('pollLatestBars', () => {
  it('polls /batch-kline at the plan interval by default (Free: one every 10 s) and flattens the groups', () => {
    const ts = newScheduler();
    let n = 0;
    const client = fakeClient(
      {
        batchKline: (groups) => {
          n++;
          return settled(
            groups.map((g) => ({ code: g.code, klineType: g.klineType, bars: [bar(g.code, n * 60_000)] })),
          );
        },
      },
      'free',
    );
    ts.run(({ expectObservable }) => {
      const bars$ = pollLatestBars(client, {
        groups: [
          { code: 'X', klineType: 1 },
          { code: 'Y', klineType: 1 },
        ],
        scheduler: ts,
      });
      expectObservable(bars$, '^ 15s !').toBe('(xy) 9996ms (zw)', {
        x: bar('X', 60_000),
        y: bar('Y', 60_000),
        z: bar('X', 120_000),
        w: bar('Y', 120_000),
      });
    });
  });

  it('stretches the default interval when the groups need several requests per poll', () => {
    const ts = newScheduler();
    const client = fakeClient(
      {
        batchKline: (groups) =>
          settled(groups.map((g) => ({ code: g.code, klineType: g.klineType, bars: [] }))),
      },
      'free',
    );
    const times: number[] = [];
    const sizes: number[] = [];
    ts.run(() => {
      const groups = Array.from({ length: 25 }, (_, i) => ({ code: `C${i}`, klineType: 1 as const }));
      const calls$ = pollLatestBars(
        fakeClient(
          { batchKline: (g) => (times.push(ts.now()), sizes.push(g.length), client.batchKline(g)) },
          'free',
        ),
        { groups, scheduler: ts },
      );
      const sub = calls$.subscribe();
      ts.schedule(() => sub.unsubscribe(), 70_000);
    });
    // 25 groups / 10 per request on Free = 3 requests per poll (the scheduler spaces them), one
    // request per 10 s: a poll every 30 s.
    expect(times).toEqual([0, 0, 0, 30_000, 30_000, 30_000, 60_000, 60_000, 60_000]);
    expect(sizes.slice(0, 3)).toEqual([10, 10, 5]);
  });
});

describe('pollLatestBatches with selectGroups', () => {
  it("asks at each poll for the groups chosen then, in their order, and paces the next poll by this one's requests", () => {
    const ts = newScheduler();
    const calls: { at: number; codes: string[] }[] = [];
    const groups = Array.from({ length: 25 }, (_, i) => ({ code: `C${i}`, klineType: 1 as const }));
    const client = fakeClient(
      {
        batchKline: (g) => {
          calls.push({ at: ts.now(), codes: g.map((x) => x.code) });
          return settled(g.map((x) => ({ code: x.code, klineType: x.klineType, bars: [] })));
        },
      },
      'free',
    );
    // 0 s: all 25, the last one first (urgent); 30 s: 5; 40 s: none (no request); 50 s: 5 again.
    const choose = (): { code: string; klineType: 1 }[] => {
      const t = ts.now();
      if (t === 0) return [groups[24]!, ...groups.slice(0, 24)];
      if (t === 40_000) return [];
      return groups.slice(0, 5);
    };
    ts.run(() => {
      const sub = pollLatestBatches(client, { groups, scheduler: ts, selectGroups: choose }).subscribe();
      ts.schedule(() => sub.unsubscribe(), 55_000);
    });
    // Free: 10 groups per request, one request per 10 s: 3 requests then 30 s; 1 request then 10 s.
    expect(calls.map((c) => c.at)).toEqual([0, 0, 0, 30_000, 50_000]);
    expect(calls[0]!.codes[0]).toBe('C24');
    expect(calls.map((c) => c.codes.length)).toEqual([10, 10, 5, 5, 5]);
  });
});

describe('sources on the client clock', () => {
  const T0 = Date.UTC(2026, 0, 5, 14, 30);
  const latest = (clock: ManualClock, polls: number[]) =>
    fakeClient({
      clock,
      batchKline: (groups) => {
        polls.push(clock.now());
        return Promise.resolve(
          groups.map((g) => ({ code: g.code, klineType: g.klineType, bars: [bar(g.code, clock.now())] })),
        );
      },
    });

  it('pollLatestBars on clockScheduler(manualClock) polls when the clock is advanced and not before', async () => {
    const clock = new ManualClock(T0);
    const polls: number[] = [];
    const out: Bar[] = [];
    const sub = pollLatestBars(latest(clock, polls), {
      groups: [{ code: 'X', klineType: 1 }],
      intervalMs: 1_000,
      scheduler: clockScheduler(clock),
    }).subscribe((b) => out.push(b));
    await new Promise((resolve) => setTimeout(resolve, 20)); // real time passes: nothing happens
    expect(polls).toEqual([]);
    await clock.advance(0);
    expect(polls).toEqual([T0]);
    expect(out.map((b) => b.tsMs)).toEqual([T0]);
    await clock.advance(999);
    expect(polls).toEqual([T0]);
    await clock.advance(1);
    await clock.advance(2_000);
    expect(polls).toEqual([T0, T0 + 1_000, T0 + 2_000, T0 + 3_000]);
    sub.unsubscribe();
    expect(clock.pendingTimers).toBe(0);
    await clock.advance(5_000);
    expect(polls).toHaveLength(4);
  });

  it('polls on the client clock by default', async () => {
    const clock = new ManualClock(T0);
    const polls: number[] = [];
    const sub = pollLatestBars(latest(clock, polls), {
      groups: [{ code: 'X', klineType: 1 }],
      intervalMs: 1_000,
    }).subscribe();
    expect(polls).toEqual([]);
    await clock.advance(1_500);
    expect(polls).toEqual([T0, T0 + 1_000]);
    sub.unsubscribe();
  });

  it('polls depth and suspensions on the client clock by default', async () => {
    const clock = new ManualClock(T0);
    const depthAt: number[] = [];
    const suspensionsAt: number[] = [];
    const client = fakeClient({
      clock,
      depth: (codes) => (depthAt.push(clock.now()), Promise.resolve(codes.map((c) => tick(c, 1)))),
      suspensions: () => (suspensionsAt.push(clock.now()), Promise.resolve([])),
    });
    const subs = [
      pollDepth(client, { codes: ['A'], intervalMs: 5_000 }).subscribe(),
      pollSuspensions(client, { exchange: 'sse' }).subscribe(),
    ];
    await clock.advance(60_000);
    expect(depthAt).toHaveLength(13);
    expect(suspensionsAt).toEqual([T0, T0 + 60_000]);
    for (const sub of subs) sub.unsubscribe();
  });
});

describe('pollSuspensions and fetchStaticInfo', () => {
  it('emits a snapshot at subscribe and once a minute after', () => {
    const ts = newScheduler();
    const snapshot: SuspensionRecord[] = [];
    const client = fakeClient({ suspensions: () => settled(snapshot) });
    ts.run(({ expectObservable }) => {
      expectObservable(pollSuspensions(client, { exchange: 'sse', scheduler: ts }), '^ 2m !').toBe(
        'a 59999ms a 59999ms a',
        { a: snapshot },
      );
    });
  });

  it('refuses to poll suspensions more than once a minute', () => {
    expect(() => pollSuspensions(fakeClient({}), { exchange: 'sse', intervalMs: 30_000 })).toThrow(
      />= 60000/,
    );
  });

  it('emits one static-info record per code and completes', () => {
    const ts = newScheduler();
    const info = (code: string) => ({ type: 'static-info', code }) as never;
    const client = fakeClient({ staticInfo: (codes) => settled(codes.map(info)) });
    ts.run(({ expectObservable }) => {
      expectObservable(fetchStaticInfo(client, { codes: ['700.HK', 'AAPL.US'] })).toBe('(ab|)', {
        a: info('700.HK'),
        b: info('AAPL.US'),
      });
    });
  });
});
