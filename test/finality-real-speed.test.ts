import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  QuoteflowClient,
  acceleratedClock,
  calendarOf,
  klineHistory,
  type Bar,
  type BarUpdate,
  type Clock,
  type KlineType,
} from '@quoteflow/core';
import { tradingDateOf } from '@quoteflow/core/internal';
import { klineSync } from '@quoteflow/pipelines';
import { startSimulator, type SimLabelling, type Simulator } from '@quoteflow/simulator';
import { SIM_DEFAULT_LABELLING, SIM_LABELLINGS } from '@quoteflow/simulator/internal';
import { firstValueFrom, toArray } from 'rxjs';

// Finality at real speed: every clock here runs at 1x (only its starting instant is chosen), and the
// simulator and the pipeline share it, so a bar boundary and a session close are crossed the way they
// are in production. A bar may be written only with its final values (what a read long after its
// close returns), under every bar labelling the provider facts list.

const SECOND = 1_000;
const GRACE_MS = 5 * SECOND;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'qf-finality-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Row {
  readonly code: string;
  readonly ts: string;
  readonly open: number;
  readonly high: number;
  readonly low: number;
  readonly close: number;
  readonly volume: number | null;
  readonly turnover: number | null;
}

async function readRows(out: string): Promise<Row[]> {
  const rows: Row[] = [];
  for (const e of await readdir(join(out, 'kline'), { recursive: true, withFileTypes: true })) {
    if (!e.isFile() || !e.name.endsWith('.ndjson')) continue;
    const klineType = Number(/kline_type=(\d+)/.exec(e.parentPath)?.[1]);
    for (const line of (await readFile(join(e.parentPath, e.name), 'utf8')).split('\n')) {
      if (line.trim() === '') continue;
      const row = JSON.parse(line) as Row;
      rows.push({ ...row, code: `${row.code}:${klineType}` });
    }
  }
  return rows;
}

/** The final values of every bar up to now: read after the fact, with a fresh client on the same clock. */
async function truth(
  sim: Simulator,
  clock: Clock,
  code: string,
  klineType: KlineType,
): Promise<Map<number, Bar>> {
  const client = new QuoteflowClient({ baseUrl: sim.url, token: 'truth', plan: 'professional', clock });
  try {
    const bars = await firstValueFrom(klineHistory(client, { code, klineType, bars: 800 }).pipe(toArray()));
    return new Map(bars.filter((b): b is Bar => b.type === 'bar').map((b) => [b.tsMs, b]));
  } finally {
    await client.close();
  }
}

function expectFinalValues(
  row: Row | BarUpdate,
  tsMs: number,
  truthBars: Map<number, Bar>,
  where: string,
): void {
  const t = truthBars.get(tsMs);
  expect(t, `${where}: a bar the service does not have`).toBeDefined();
  expect(
    {
      open: row.open,
      high: row.high,
      low: row.low,
      close: row.close,
      volume: row.volume,
      turnover: row.turnover,
    },
    `${where} at ${new Date(tsMs).toISOString()} was written with values that are not final`,
  ).toEqual({
    open: t!.open,
    high: t!.high,
    low: t!.low,
    close: t!.close,
    volume: t!.volume,
    turnover: t!.turnover,
  });
}

/** What one real-speed sync of one stock saw: its finals, its file rows, the truth after it. */
interface SyncRun {
  readonly finals: BarUpdate[];
  /** When each of `finals` was emitted, on the run's clock. */
  readonly emittedAtMs: number[];
  readonly rows: Row[];
  readonly truthByType: Map<KlineType, Map<number, Bar>>;
  readonly refused: number;
}

/**
 * A sync of one stock (types 1, 5, 8) at real speed from `startMs` until `done(finals)` holds (or
 * `deadlineMs` passes on the shared clock, which fails the run), then the truth read after it.
 */
async function syncAtRealSpeed(
  labelling: SimLabelling,
  code: string,
  run: {
    readonly name: string;
    readonly startMs: number;
    readonly deadlineMs: number;
    readonly done: (finals: readonly BarUpdate[], emittedAtMs: readonly number[]) => boolean;
  },
): Promise<SyncRun> {
  const clock = acceleratedClock({ speed: 1, startMs: run.startMs });
  const sim = await startSimulator({
    port: 0,
    tokens: { e2e: 'professional', truth: 'professional' },
    seed: 5,
    clock,
    labelling,
  });
  const out = join(dir, `${code}-${labelling.intraday}-${labelling.daily}-${run.name}`);
  const client = new QuoteflowClient({ baseUrl: sim.url, token: 'e2e', plan: 'professional', clock });
  const finals: BarUpdate[] = [];
  const emittedAtMs: number[] = [];
  try {
    const sync = klineSync({
      client,
      codes: [code],
      klineTypes: [1, 5, 8],
      bars: 5,
      files: { dir: out, format: 'ndjson' },
      graceMs: GRACE_MS,
      refreshPeriodMs: 1_000,
      checkpointMs: 5 * SECOND,
      onUpdate: (u) => {
        if (!u.final) return;
        finals.push(u);
        emittedAtMs.push(clock.now());
      },
    });
    // Until the finals the run is about have come (each update is checked at once, so no later
    // than the poll that brings them), on the shared clock.
    await new Promise<void>((resolve, reject) => {
      // A sync that ended (failed) first fails the run with its own error.
      sync.done.then(
        () => reject(new Error(`${code} ${run.name}: the sync ended before its finals came`)),
        (err: unknown) => reject(new Error(`${code} ${run.name}: the sync failed`, { cause: err })),
      );
      const check = (): void => {
        if (run.done(finals, emittedAtMs)) resolve();
        else if (clock.now() > run.deadlineMs) {
          const last = sim.log.entries().at(-1);
          reject(
            new Error(
              `${code} ${run.name}: not done by ${new Date(run.deadlineMs).toISOString()}: ${finals.length} finals, ` +
                `${sim.log.entries().length} requests, the last one ${last === undefined ? '-' : new Date(last.marketMs).toISOString()}`,
            ),
          );
        } else clock.setTimeout(check, 100);
      };
      check();
    });
    await sync.stop();
    const truthByType = new Map<KlineType, Map<number, Bar>>();
    for (const k of [1, 5, 8] as const) truthByType.set(k, await truth(sim, clock, code, k));
    return { finals, emittedAtMs, rows: await readRows(out), truthByType, refused: sim.log.refused().length };
  } finally {
    await client.close();
    await sim.close();
  }
}

/** Every final and every file row of `run` holds the bar's final values, each bar once. */
function expectOnlyFinalValues(run: SyncRun, where: string): void {
  expect(run.refused, `${where}: refusals`).toBe(0);
  const seen = new Set<string>();
  for (const u of run.finals) {
    const key = `${u.klineType}@${u.tsMs}`;
    expect(seen.has(key), `${where}: ${key} final twice`).toBe(false);
    seen.add(key);
    expectFinalValues(u, u.tsMs, run.truthByType.get(u.klineType)!, `${where} type ${u.klineType}`);
  }
  expect(run.rows.length, `${where}: files hold the finals`).toBe(run.finals.length);
  for (const row of run.rows) {
    const klineType = Number(row.code.split(':')[1]) as KlineType;
    expectFinalValues(
      row,
      Date.parse(row.ts),
      run.truthByType.get(klineType)!,
      `${where} file row type ${klineType}`,
    );
  }
}

const MARKETS = [
  { code: 'AAPL.US', closeIso: '2026-11-17T21:00:00Z' }, // 16:00 New York (EST)
  { code: '700.HK', closeIso: '2026-11-17T08:00:00Z' }, // 16:00 Hong Kong
  { code: '600416.SH', closeIso: '2026-11-17T07:00:00Z' }, // 15:00 Shanghai
] as const;

/** The Friday closes of the markets (20 November 2026), where a daily label's date matters most. */
const FRIDAY_CLOSES = [
  { code: 'AAPL.US', closeIso: '2026-11-20T21:00:00Z' },
  { code: '700.HK', closeIso: '2026-11-20T08:00:00Z' },
  { code: '600416.SH', closeIso: '2026-11-20T07:00:00Z' },
] as const;

/**
 * The 1-minute bars made final by crossing `minuteMs` live: emitted after it, newer than every one
 * emitted before it (the bar that was forming when the boundary passed). Not by `readAtMs`: a read
 * that left just before the boundary may arrive after it and bring the newer bar.
 */
function crossedMinute(
  finals: readonly BarUpdate[],
  emittedAtMs: readonly number[],
  minuteMs: number,
): BarUpdate[] {
  const before = finals.filter((u, i) => u.klineType === 1 && emittedAtMs[i]! < minuteMs).map((u) => u.tsMs);
  const newestBefore = Math.max(Number.NEGATIVE_INFINITY, ...before);
  return finals.filter((u, i) => u.klineType === 1 && emittedAtMs[i]! >= minuteMs && u.tsMs > newestBefore);
}

// Every run starts 15 s before the boundary it crosses (the backfill of 5 bars is read before it),
// and all of them, and the backfill below, run at once: each waits on real time, not on the CPU.
const LEAD_MS = 15 * SECOND;

describe.concurrent('finality at real speed, under every bar labelling', () => {
  it('a sync of US, HK and A-share stocks (types 1, 5, 8) across a minute boundary in the session and across the close writes only final values, each bar once, and the closing bars after the close', async () => {
    const runs = await Promise.all(
      SIM_LABELLINGS.flatMap((labelling) =>
        MARKETS.flatMap((m) => {
          const closeMs = Date.parse(m.closeIso);
          const minuteMs = closeMs - 60 * SECOND; // a minute boundary inside the session
          const where = `${m.code} under ${JSON.stringify(labelling)}`;
          return [
            // The minute bar forming at the start is final once a read after the boundary shows the
            // newer bar.
            syncAtRealSpeed(labelling, m.code, {
              name: 'minute',
              startMs: minuteMs - LEAD_MS,
              deadlineMs: minuteMs + 60 * SECOND,
              done: (finals, emitted) => crossedMinute(finals, emitted, minuteMs).length > 0,
            }).then((run) => ({ kind: 'minute' as const, where, minuteMs, closeMs, ...run })),
            // The closing bars are final once read after the close + grace (no newer bar comes).
            syncAtRealSpeed(labelling, m.code, {
              name: 'close',
              startMs: closeMs - LEAD_MS,
              deadlineMs: closeMs + GRACE_MS + 60 * SECOND,
              done: (finals) =>
                ([1, 5, 8] as const).every((k) =>
                  finals.some((u) => u.klineType === k && u.readAtMs >= closeMs + GRACE_MS),
                ),
            }).then((run) => ({ kind: 'close' as const, where, minuteMs, closeMs, ...run })),
          ];
        }),
      ),
    );
    expect(runs).toHaveLength(SIM_LABELLINGS.length * MARKETS.length * 2);
    for (const run of runs) {
      const where = `${run.where} (${run.kind})`;
      expectOnlyFinalValues(run, where);
      if (run.kind === 'minute') {
        // The bar that was forming when the boundary passed was written, final, once the boundary
        // was crossed; the bar forming after the boundary was not.
        // (The backfill's finals came before the boundary: the sync was live when it passed.)
        expect(Math.min(...run.emittedAtMs), `${where}: the first final`).toBeLessThan(run.minuteMs);
        const crossed = crossedMinute(run.finals, run.emittedAtMs, run.minuteMs);
        expect(crossed.length, `${where}: a minute bar made final by the boundary`).toBeGreaterThan(0);
        for (const u of crossed) expect(u.tsMs, where).toBeLessThan(run.minuteMs + 60 * SECOND);
      } else {
        // The closing bars are written once the close is proven: the day's last minute bar, the
        // last hourly bar and the daily bar of the session.
        for (const k of [1, 5, 8] as const) {
          const newestTruth = Math.max(...run.truthByType.get(k)!.keys());
          expect(
            run.finals.some((u) => u.klineType === k && u.tsMs === newestTruth),
            `${where}: the closing bar of type ${k} (${new Date(newestTruth).toISOString()}) was written`,
          ).toBe(true);
          expect(
            run.finals.find((u) => u.klineType === k && u.tsMs === newestTruth)!.readAtMs,
            `${where}: the closing bar of type ${k} was final only after the close + grace`,
          ).toBeGreaterThanOrEqual(run.closeMs + GRACE_MS);
        }
      }
    }
  }, 180_000);

  it('a daily bar labelled inside the session is final at the Friday close plus the grace, dated that Friday, at every exchange (issue 33 item 3)', async () => {
    // The rule that shifted a daily label by 12 hours named Saturday for a label after 12:00 local,
    // a day without a session: the bar then waited for the end of Saturday.
    const labelling: SimLabelling = { ...SIM_DEFAULT_LABELLING, daily: 'in-session' };
    const runs = await Promise.all(
      FRIDAY_CLOSES.map((m) => {
        const closeMs = Date.parse(m.closeIso);
        return syncAtRealSpeed(labelling, m.code, {
          name: 'friday-close',
          startMs: closeMs - LEAD_MS,
          deadlineMs: closeMs + GRACE_MS + 60 * SECOND,
          done: (finals) => finals.some((u) => u.klineType === 8 && u.readAtMs >= closeMs + GRACE_MS),
        }).then((run) => ({ ...m, closeMs, run }));
      }),
    );
    for (const { code, closeMs, run } of runs) {
      const where = `${code} (daily labelled inside the session, Friday close)`;
      expectOnlyFinalValues(run, where);
      const newest = Math.max(...run.truthByType.get(8)!.keys());
      const friday = run.finals.find((u) => u.klineType === 8 && u.tsMs === newest);
      expect(friday, `${where}: Friday's daily bar was written`).toBeDefined();
      expect(friday!.readAtMs, where).toBeGreaterThanOrEqual(closeMs + GRACE_MS);
      expect(tradingDateOf(friday!.tsMs, calendarOf(code)), where).toBe('2026-11-20');
    }
  }, 180_000);

  it('a backfill on the basic plan whose pages cross a minute boundary writes exactly N bars per series, all final', async () => {
    // 10:00:50 UTC: the first pages are read while the 10:00 bar forms; the last ones after 10:01.
    const clock = acceleratedClock({ speed: 1, startMs: Date.parse('2026-11-17T10:00:50Z') });
    const sim = await startSimulator({
      port: 0,
      tokens: { e2e: 'basic', truth: 'professional' },
      seed: 6,
      clock,
    });
    const client = new QuoteflowClient({ baseUrl: sim.url, token: 'e2e', plan: 'basic', clock });
    const codes = ['BTCUSDT', 'ETHUSDT', 'SOLUSDT', 'BNBUSDT', 'XRPUSDT', 'DOGEUSDT'];
    const out = join(dir, 'backfill-basic');
    try {
      const startedMs = clock.now();
      const summary = await klineSync({
        client,
        codes,
        klineTypes: [1],
        bars: 600,
        files: { dir: out, format: 'ndjson' },
        live: false,
        graceMs: GRACE_MS,
      }).done;
      expect(clock.now() - startedMs, 'the backfill crossed the 10:01 boundary').toBeGreaterThan(10 * SECOND);
      expect(summary.closedBars).toBe(codes.length * 600);
      const rows = await readRows(out);
      for (const code of codes) {
        const truthBars = await truth(sim, clock, code, 1);
        const mine = rows.filter((r) => r.code === `${code}:1`).map((r) => ({ r, ts: Date.parse(r.ts) }));
        expect(mine, code).toHaveLength(600);
        const starts = mine.map((m) => m.ts).sort((a, b) => a - b);
        for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!, code).toBe(60 * SECOND);
        for (const { r, ts } of mine) expectFinalValues(r, ts, truthBars, code);
        // The newest bar written closed before the backfill ended.
        expect(starts.at(-1)! + 60 * SECOND).toBeLessThanOrEqual(clock.now());
      }
      expect(sim.log.refused()).toEqual([]);
    } finally {
      await client.close();
      await sim.close();
    }
  }, 180_000);
});
