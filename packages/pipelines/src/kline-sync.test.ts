import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { QuoteflowClient, acceleratedClock, type Clock } from '@quoteflow/core';
import { startSimulator, type Simulator } from '@quoteflow/simulator';
import { DatasetLog, DatasetSink } from '@quoteflow/sinks';
import { forEachKlineRow } from '@quoteflow/sinks/internal';
import { firstValueFrom, takeWhile, toArray } from 'rxjs';
import { inspectDataset } from './inspect-dataset.js';
import { klineSync } from './kline-sync.js';
import type { KlineSyncEvent } from './kline-sync-options.js';
import { klineUpdates } from './kline-updates.js';

const TOKEN = 'pipelines-kline-sync-token';
let sim: Simulator;
let dir: string;
let client: QuoteflowClient;
/** One clock for the simulator and the pipeline: market time at 30x for both. */
let clock: Clock;

beforeAll(async () => {
  clock = acceleratedClock({ speed: 30 });
  sim = await startSimulator({ port: 0, tokens: { [TOKEN]: 'professional' }, seed: 9, clock });
});
afterAll(async () => {
  await sim.close();
});
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'qf-kline-sync-'));
  client = new QuoteflowClient({ baseUrl: sim.url, token: TOKEN, plan: 'professional', clock });
});
afterEach(async () => {
  await client.close();
  await rm(dir, { recursive: true, force: true });
});

async function rows(): Promise<{ code: string; ts: string; close: number }[]> {
  const out: { code: string; ts: string; close: number }[] = [];
  for (const e of await readdir(join(dir, 'kline'), { recursive: true, withFileTypes: true })) {
    if (!e.isFile() || !e.name.endsWith('.ndjson')) continue; // not the Delta log
    for (const line of (await readFile(join(e.parentPath, e.name), 'utf8')).split('\n')) {
      if (line.trim() !== '') out.push(JSON.parse(line) as { code: string; ts: string; close: number });
    }
  }
  return out;
}

function expectContiguous(starts: number[], stepMs: number): void {
  starts.sort((a, b) => a - b);
  expect(new Set(starts).size).toBe(starts.length);
  for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBe(stepMs);
}

/** Starts of `code`'s 1-minute bars: each once, and consecutive bars of the simulator's market. */
function expectSimSequence(starts: number[], code: string): void {
  starts.sort((a, b) => a - b);
  expect(new Set(starts).size).toBe(starts.length);
  const market = sim.market.bars(code, 1, sim.marketNow(), 2_000).map((b) => b.startMs);
  const from = market.indexOf(starts[0]!);
  expect(from).toBeGreaterThanOrEqual(0);
  expect(market.slice(from, from + starts.length)).toEqual(starts);
}

/** Resolves once `events` holds a checkpoint that wrote files (after `from`, an index into it). */
async function committed(events: readonly KlineSyncEvent[], from = 0): Promise<void> {
  await vi.waitFor(
    () => expect(events.slice(from).some((e) => e.type === 'checkpoint' && e.files.length > 0)).toBe(true),
    { timeout: 20_000, interval: 20 },
  );
}

/** Resolves once the market has passed its next 1-minute boundary (2 s of real time at most, at 30x). */
async function nextMinuteClosed(): Promise<void> {
  const boundary = Math.ceil((sim.marketNow() + 1) / 60_000) * 60_000;
  await vi.waitFor(() => expect(sim.marketNow()).toBeGreaterThan(boundary), {
    timeout: 20_000,
    interval: 20,
  });
}

describe('klineSync', () => {
  it('writes exactly N closed bars in a backfill-only run and reports the series', async () => {
    const events: KlineSyncEvent[] = [];
    const summary = await klineSync({
      client,
      codes: ['BTCUSDT', 'ETHUSDT'],
      klineTypes: [1],
      bars: 600,
      files: { dir, format: 'ndjson' },
      live: false,
      onEvent: (e) => events.push(e),
    }).done;
    expect(summary.closedBars).toBe(1_200);
    const all = await rows();
    for (const code of ['BTCUSDT', 'ETHUSDT']) {
      const starts = all.filter((r) => r.code === code).map((r) => Date.parse(r.ts));
      expect(starts).toHaveLength(600);
      expectContiguous(starts, 60_000);
    }
    expect(events.filter((e) => e.type === 'backfill-series-done')).toHaveLength(2);
    expect(events.at(-1)?.type).toBe('checkpoint');
  });

  it('stopped during its backfill, keeps every page read before the stop, and says per series what is still lacking', async () => {
    // Each /kline answer takes a while: the stop lands while a page is in flight.
    sim.setFaults([{ kind: 'latency', endpoint: 'kline', latencyMs: 300 }]);
    const asked = sim.log.count({ endpoint: 'kline' });
    const events: KlineSyncEvent[] = [];
    const sync = klineSync({
      client,
      codes: ['BTCUSDT'],
      klineTypes: [1],
      bars: 2_000, // five pages, read newest first
      files: { dir, format: 'ndjson' },
      onEvent: (e) => events.push(e),
    });
    // Two pages answered, the third asked for.
    await vi.waitFor(() => expect(sim.log.count({ endpoint: 'kline' }) - asked).toBeGreaterThanOrEqual(3), {
      timeout: 20_000,
      interval: 10,
    });
    const summary = await sync.stop();
    sim.setFaults([]);
    const held = (await rows()).map((r) => Date.parse(r.ts)).sort((a, b) => a - b);
    // The newest page's 499 closed bars and the 500 of the next, each once, consecutive.
    expect(held.length).toBeGreaterThanOrEqual(999);
    expect(held.length).toBeLessThan(2_000);
    expect(new Set(held).size).toBe(held.length);
    for (let i = 1; i < held.length; i++) expect(held[i]! - held[i - 1]!).toBe(60_000);
    expect(summary.incompleteSeries).toEqual([
      { code: 'BTCUSDT', klineType: 1, held: held.length, wanted: 2_000 },
    ]);
    expect(events).toContainEqual({
      type: 'backfill-incomplete',
      code: 'BTCUSDT',
      klineType: 1,
      held: held.length,
      wanted: 2_000,
    });
  });

  it('a live run drops a code the service stops serving, with a code-dropped event, and the others go on', async () => {
    const own = await startSimulator({ port: 0, tokens: { [TOKEN]: 'professional' }, seed: 4, clock });
    const ownClient = new QuoteflowClient({ baseUrl: own.url, token: TOKEN, plan: 'professional', clock });
    try {
      const events: KlineSyncEvent[] = [];
      const finals: { code: string; tsMs: number }[] = [];
      const sync = klineSync({
        client: ownClient,
        codes: ['BTCUSDT', 'SOLUSDT', 'DOGEUSDT'],
        klineTypes: [1],
        bars: 3,
        files: { dir, format: 'ndjson' },
        onEvent: (e) => events.push(e),
        onUpdate: (u) => void (u.final && finals.push({ code: u.code, tsMs: u.tsMs })),
      });
      const cycles = (): number => events.filter((e) => e.type === 'live-cycle').length;
      await vi.waitFor(() => expect(cycles()).toBeGreaterThan(0), { timeout: 20_000, interval: 20 });
      own.withdraw('SOLUSDT');
      await vi.waitFor(() => expect(events.some((e) => e.type === 'code-dropped')).toBe(true), {
        timeout: 20_000,
        interval: 20,
      });
      // The others go on: more cycles, and a bar that closed after the drop.
      const droppedAt = own.marketNow();
      await vi.waitFor(
        () => expect(finals.some((f) => f.code === 'DOGEUSDT' && f.tsMs >= droppedAt)).toBe(true),
        { timeout: 20_000, interval: 20 },
      );
      const summary = await sync.stop();
      expect(events.filter((e) => e.type === 'code-dropped')).toEqual([
        { type: 'code-dropped', code: 'SOLUSDT', reason: expect.stringContaining('code invalid') as string },
      ]);
      expect(summary.droppedCodes).toEqual(['SOLUSDT']);
      expect(summary.series).toBe(2);
    } finally {
      await ownClient.close();
      await own.close();
    }
  });

  // Parquet files are the Delta log's `add` actions, the others ride in its domainMetadata: both healed.
  it.each(['parquet', 'ndjson'] as const)(
    'heals a dataset whose committed %s file was lost: said at the start, refetched, its gap gone',
    async (format) => {
      const run = (bars: number, onEvent?: (e: KlineSyncEvent) => void) =>
        klineSync({
          client,
          codes: ['ETHUSDT'],
          klineTypes: [1],
          bars,
          // Three files that stay three (no upkeep merges them), one of which is then lost.
          files: { dir, format, upkeep: false },
          live: false,
          ...(onEvent === undefined ? {} : { onEvent }),
        }).done;
      // Three files: the newest 200 bars, then 200 older, then 200 older still.
      for (const bars of [200, 400, 600]) await run(bars);
      const files = (await readdir(join(dir, 'kline'), { recursive: true })).filter(
        (f) => f.endsWith(`.${format}`) && !f.startsWith('_delta_log'),
      );
      expect(files.length).toBeGreaterThanOrEqual(3);
      const byFirst: { file: string; first: number }[] = [];
      for (const f of files) {
        let first = Infinity;
        await forEachKlineRow(dir, `kline/${f}`, (_code, tsMs) => (first = Math.min(first, tsMs)), []);
        byFirst.push({ file: f, first });
      }
      byFirst.sort((a, b) => a.first - b.first);
      const lost = `kline/${byFirst[1]!.file}`; // the middle one: a hole between held bars
      await rm(join(dir, lost));
      const before = await inspectDataset(dir);
      expect(before.kline.missingFiles).toEqual([lost]);
      // Its 200 older bars; and when market minutes (2 s each here) passed between the first two
      // runs, the second wrote the bars that closed meanwhile into the same file: a second hole.
      const gaps = before.kline.series[0]!.gaps;
      expect(gaps[0]).toMatchObject({ bars: 200 });
      expect(gaps.length).toBeLessThanOrEqual(2);

      const events: KlineSyncEvent[] = [];
      const summary = await run(600, (e) => events.push(e));
      expect(events).toContainEqual(
        expect.objectContaining({ type: 'warning', message: expect.stringContaining(lost) as string }),
      );
      const repaired = events.find((e) => e.type === 'repaired');
      expect(repaired).toMatchObject({ missingFiles: [lost] });
      expect(summary.repairs).toEqual([
        { code: 'ETHUSDT', klineType: 1, repaired: expect.any(Number) as number, lacking: 0 },
      ]);
      expect(summary.repairs[0]!.repaired).toBeGreaterThanOrEqual(190);
      const after = await inspectDataset(dir);
      expect(after.kline.missingFiles).toEqual([]);
      expect(after.kline.series[0]!.gaps).toEqual([]);
      expect(after.kline.series[0]!.duplicates).toBe(0);
      expect(after.kline.series[0]!.rows).toBeGreaterThanOrEqual(600);
      // The lost file left the table: a `remove` in the Delta log (a Parquet file's `add` is gone, so
      // Delta readers do not look for it).
      const log = await DatasetLog.open(dir, 'kline');
      expect(log.files.has(lost)).toBe(false);
      if (format === 'parquet') {
        const removed: string[] = [];
        for (const name of (await readdir(log.logDir)).filter((n) => /^\d{20}\.json$/.test(n)))
          for (const line of (await readFile(join(log.logDir, name), 'utf8')).split('\n'))
            if (line !== '') {
              const action = JSON.parse(line) as { remove?: { path: string } };
              if (action.remove !== undefined) removed.push(decodeURIComponent(action.remove.path));
            }
        expect(removed).toContain(lost.slice('kline/'.length));
      }
    },
  );

  it('after a kill -9 between a commit and its publishing, the next run publishes it; a staged checkpoint never committed stays out', async () => {
    const events: KlineSyncEvent[] = [];
    const opts = {
      client,
      codes: ['BTCUSDT'],
      klineTypes: [1 as const],
      bars: 20,
      files: { dir, format: 'ndjson' as const },
      checkpointMs: 15_000, // clock time: half a real second
      onEvent: (e: KlineSyncEvent) => events.push(e),
    };
    const first = klineSync(opts);
    await committed(events);
    await first.stop();
    // Undo the publishing of the newest checkpoint (the stop's release of the claims follows it),
    // as a kill -9 right after the commit leaves it: its files back in staging, `_applied` one
    // version behind it.
    const log = await DatasetLog.open(dir, 'kline');
    const commitOf = async (version: number) =>
      (await readFile(join(log.logDir, `${String(version).padStart(20, '0')}.json`), 'utf8'))
        .trim()
        .split('\n')
        .map(
          (l) =>
            JSON.parse(l) as {
              commitInfo?: { quoteflow: { operation: string; staged: Record<string, string> } };
            },
        )
        .find((a) => a.commitInfo !== undefined)!.commitInfo!.quoteflow;
    let version = log.version;
    while ((await commitOf(version)).operation !== 'checkpoint') version--;
    const newest = await commitOf(version);
    const staged = Object.entries(newest.staged);
    expect(staged.length).toBeGreaterThan(0);
    // (A clean stop removed the empty staging directory; a kill -9 would have left it.)
    await mkdir(join(dir, '.staging'), { recursive: true });
    for (const [path, stagedPath] of staged) await rename(join(dir, path), join(dir, stagedPath));
    await writeFile(join(log.logDir, '.quoteflow-applied'), `${version - 1}\n`);
    const hidden = (await rows()).length;
    // A checkpoint staged by a writer killed before its commit: a bar already in the dataset again.
    const again = (await readFile(join(dir, staged[0]![1]), 'utf8')).split('\n')[0];
    await writeFile(join(dir, '.staging', 'host~999999~part-x.ndjson.tmp.ready.tmp'), `${again}\n`);
    await nextMinuteClosed(); // the market moves on
    const resumedAt = events.length;
    const second = klineSync(opts);
    await committed(events, resumedAt);
    await second.stop();
    const starts = (await rows()).map((r) => Date.parse(r.ts));
    expect(starts.length).toBeGreaterThan(hidden);
    expect(starts.length).toBeGreaterThan(20);
    expectContiguous(starts, 60_000);
    expect(sim.log.refused()).toEqual([]);
  }, 30_000);

  it('grows the history backwards when a later run asks for more bars than the dataset holds', async () => {
    const run = (bars: number) =>
      klineSync({
        client,
        codes: ['BTCUSDT', 'AAPL.US'],
        klineTypes: [1],
        bars,
        files: { dir, format: 'ndjson' },
        live: false,
      }).done;
    await run(5);
    const before = await rows();
    expect(before.filter((r) => r.code === 'BTCUSDT')).toHaveLength(5);
    const summary = await run(50);
    const all = await rows();
    const btc = all.filter((r) => r.code === 'BTCUSDT').map((r) => Date.parse(r.ts));
    // At least the 50 most recent (a bar may have closed between the runs), contiguous, each once.
    expect(btc.length).toBeGreaterThanOrEqual(50);
    expectContiguous(btc, 60_000);
    const btcBefore = before.filter((r) => r.code === 'BTCUSDT').map((r) => Date.parse(r.ts));
    expect(Math.min(...btc)).toBeLessThan(Math.min(...btcBefore));
    // A stock code cannot page back, but its one latest page holds 50: the older bars come from
    // it, each once, and no shortfall is reported.
    expect(summary.truncatedSeries).toEqual([]);
    const aapl = all.filter((r) => r.code === 'AAPL.US').map((r) => Date.parse(r.ts));
    expect(aapl.length).toBeGreaterThanOrEqual(50);
    expectSimSequence(aapl, 'AAPL.US');
    const aaplBefore = before.filter((r) => r.code === 'AAPL.US').map((r) => Date.parse(r.ts));
    expect(Math.min(...aapl)).toBeLessThan(Math.min(...aaplBefore));
  });

  it('grows a stock from its one latest page and says, with the counts, what lies beyond it', async () => {
    const events: KlineSyncEvent[] = [];
    const run = (bars: number) =>
      klineSync({
        client,
        codes: ['AAPL.US'],
        klineTypes: [1],
        bars,
        files: { dir, format: 'ndjson' },
        live: false,
        onEvent: (e) => events.push(e),
      }).done;
    await run(5);
    const since = sim.marketNow();
    const summary = await run(600);
    // The first /kline of the second run is the growth's read of the latest page.
    const read = sim.log.filter({ endpoint: 'kline', sinceMs: since })[0]!;
    const page = sim.market.bars('AAPL.US', 1, read.marketMs, 500);
    const aapl = (await rows()).map((r) => Date.parse(r.ts));
    expectSimSequence(aapl, 'AAPL.US');
    // Every older bar the page holds was written: the series starts at the page's oldest bar.
    expect(Math.min(...aapl)).toBe(page[0]!.startMs);
    expect(summary.truncatedSeries).toEqual(['AAPL.US:1']);
    const gaps = events.filter((e) => e.type === 'gap');
    expect(gaps).toHaveLength(1);
    expect(gaps[0]).toMatchObject({
      code: 'AAPL.US',
      reason: expect.stringMatching(
        /^AAPL\.US kline_type 1: codes other than forex, precious metals and crypto cannot page backwards.*; got \d+ of the 595 bars older than the 5 held/,
      ),
    });
    // With a page's worth held, the latest page cannot reach further back: a restart says so
    // without a request to learn it (its one /kline is the resume read). 499 held while the market
    // was open at the read leave the page one bar to offer, so it is read.
    const again = sim.marketNow();
    const third = await run(600);
    expect(third.truncatedSeries).toEqual(['AAPL.US:1']);
    expect(sim.log.filter({ endpoint: 'kline', sinceMs: again })).toHaveLength(aapl.length >= 500 ? 1 : 2);
  });

  it('compacts the closed month partitions a growing history wrote into, with every bar kept once', async () => {
    const events: KlineSyncEvent[] = [];
    const run = (bars: number) =>
      klineSync({
        client,
        codes: ['BTCUSDT', 'ETHUSDT'],
        klineTypes: [8],
        bars,
        files: { dir, format: 'ndjson', upkeep: false },
        live: false,
        onEvent: (e) => events.push(e),
      }).done;
    await run(70);
    await run(140); // older days: new files in the month partitions the first run wrote
    // A sink opened on the dataset (a sync starting) finds the closed months due and merges them.
    const sink = await DatasetSink.open({
      dir,
      format: 'ndjson',
      clock: client.clock,
      onCompacted: (r) => events.push({ type: 'compacted', ...r }),
    });
    await sink.upkeepIdle();
    await sink.close();
    const compacted = events.filter((e) => e.type === 'compacted');
    expect(compacted.length).toBeGreaterThan(0);
    const thisMonth = new Date(sim.marketNow()).toISOString().slice(0, 7);
    for (const e of compacted) {
      expect(e.partition).toMatch(/^kline\/kline_type=8\/month=\d{4}-\d{2}$/);
      expect(e.partition.endsWith(thisMonth)).toBe(false); // the month still being written waits
      expect(e.filesAfter).toBe(1);
    }
    const all = await rows();
    for (const code of ['BTCUSDT', 'ETHUSDT']) {
      const starts = all.filter((r) => r.code === code).map((r) => Date.parse(r.ts));
      expect(starts.length).toBeGreaterThanOrEqual(140);
      expectContiguous(starts, 86_400_000);
    }
  });

  it('takes codes in and out of a running sync without a restart: only added series are read back', async () => {
    const historyReads: string[] = [];
    const events: KlineSyncEvent[] = [];
    const sync = klineSync({
      client,
      codes: ['BTCUSDT'],
      klineTypes: [1],
      bars: 5,
      files: { dir, format: 'ndjson' },
      checkpointMs: 15_000,
      onEvent: (e) => events.push(e),
    });
    await committed(events);
    const since = sim.marketNow();
    await sync.add(['ETHUSDT', 'BTCUSDT']); // BTCUSDT is already synced: ignored
    for (const e of sim.log.filter({ sinceMs: since })) if (e.endpoint === 'kline') historyReads.push(e.path);
    expect(historyReads).toHaveLength(1); // ETHUSDT's history only
    await sync.remove(['BTCUSDT']);
    const btcAtRemove = (await rows()).filter((r) => r.code === 'BTCUSDT').length;
    // Until a bar of ETHUSDT that closed since it was added is committed (its 5 of history and more).
    await vi.waitFor(
      async () => expect((await rows()).filter((r) => r.code === 'ETHUSDT').length).toBeGreaterThanOrEqual(6),
      { timeout: 20_000, interval: 50 },
    );
    const summary = await sync.stop();
    const all = await rows();
    expect(all.filter((r) => r.code === 'BTCUSDT')).toHaveLength(btcAtRemove);
    const eth = all.filter((r) => r.code === 'ETHUSDT').map((r) => Date.parse(r.ts));
    expect(eth.length).toBeGreaterThanOrEqual(6); // 5 of history and those closed since
    expectContiguous(eth, 60_000);
    expect(summary.series).toBe(1);
    expect(sim.log.refused()).toEqual([]);
  }, 30_000);

  it('takes a code back after another writer held it: resumes from the other writer’s bars, no duplicate, no gap, no restart', async () => {
    const events: KlineSyncEvent[] = [];
    const mine = klineSync({
      client,
      onEvent: (e) => events.push(e),
      codes: ['BTCUSDT', 'ETHUSDT'],
      klineTypes: [1],
      bars: 5,
      files: { dir, format: 'ndjson' },
      checkpointMs: 15_000,
    });
    await committed(events);
    await mine.remove(['BTCUSDT']);
    const btcByMine = (await rows()).filter((r) => r.code === 'BTCUSDT').map((r) => Date.parse(r.ts));
    // Another worker holds BTCUSDT for a while (a bar closes meanwhile), then hands it back.
    await nextMinuteClosed();
    const other = klineSync({
      client,
      codes: ['BTCUSDT'],
      klineTypes: [1],
      bars: 5,
      files: { dir, format: 'ndjson' },
    });
    // Until the other wrote bars of its own (newer than mine's).
    await vi.waitFor(
      async () => {
        const btc = (await rows()).filter((r) => r.code === 'BTCUSDT').map((r) => Date.parse(r.ts));
        expect(Math.max(...btc)).toBeGreaterThan(Math.max(...btcByMine));
      },
      { timeout: 20_000, interval: 50 },
    );
    await other.stop();
    const btcByOther = (await rows()).filter((r) => r.code === 'BTCUSDT').map((r) => Date.parse(r.ts));
    await nextMinuteClosed(); // a market minute nobody holds it
    const before = events.length;
    await mine.add(['BTCUSDT']);
    // Only BTCUSDT is read, from the other writer's newest bar on: ETHUSDT is not read again.
    const reads = events.slice(before).filter((e) => e.type === 'backfill-progress');
    expect(reads).toEqual([expect.objectContaining({ code: 'BTCUSDT' })]);
    expect(reads[0]).toMatchObject({ bars: expect.any(Number) });
    expect((reads[0] as { bars: number }).bars).toBeLessThan(5);
    // Until it went on past the other writer's bars: a bar closed since it took BTCUSDT back.
    await vi.waitFor(
      async () => {
        const btc = (await rows()).filter((r) => r.code === 'BTCUSDT').map((r) => Date.parse(r.ts));
        expect(Math.max(...btc)).toBeGreaterThan(Math.max(...btcByOther) + 60_000);
      },
      { timeout: 20_000, interval: 50 },
    );
    const summary = await mine.stop();
    const btc = (await rows()).filter((r) => r.code === 'BTCUSDT').map((r) => Date.parse(r.ts));
    expectContiguous(btc, 60_000);
    // Its polls since the take-back waited for that read: the merger never saw a hole to report.
    expect(events.slice(before).filter((e) => e.type === 'gap')).toEqual([]);
    expect(Math.max(...btc)).toBeGreaterThan(Math.max(...btcByOther) + 60_000); // it went on
    expect(summary.series).toBe(2);
    expect(sim.log.refused()).toEqual([]);
  }, 40_000);

  it('refuses an add or a remove it could not apply once the run ended, instead of leaving it pending', async () => {
    // A run that fails before its stream starts (its dataset directory is a file): a change asked
    // of it then settles with the run's end (a cluster worker waits for it before its next change).
    const notADir = join(dir, 'a-file');
    await writeFile(notADir, 'not a directory');
    const sync = klineSync({ client, codes: ['BTCUSDT'], klineTypes: [1], bars: 5, files: { dir: notADir } });
    const adding = sync.add(['ETHUSDT']);
    const removing = sync.remove(['BTCUSDT']);
    const failure = await sync.done.then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(Error);
    await expect(adding).rejects.toMatchObject({
      code: 'QF_PIPELINE',
      message: 'klineSync: the run ended before the codes were added',
      cause: failure,
    });
    await expect(removing).rejects.toMatchObject({
      message: 'klineSync: the run ended before the codes were removed',
    });
  });

  it('stops promptly on its signal and flushes what it has', async () => {
    const stop = new AbortController();
    const events: KlineSyncEvent[] = [];
    const sync = klineSync({
      client,
      codes: ['ETHUSDT'],
      klineTypes: [5],
      bars: 10,
      files: { dir, format: 'ndjson' },
      signal: stop.signal,
      onEvent: (e) => events.push(e),
    });
    // Live after its backfill: the bars read are held, not yet committed (checkpoints each 30 s of clock).
    await vi.waitFor(() => expect(events.some((e) => e.type === 'live-cycle')).toBe(true), {
      timeout: 20_000,
      interval: 20,
    });
    const t0 = Date.now();
    stop.abort();
    const summary = await sync.done;
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(summary.closedBars).toBeGreaterThanOrEqual(10);
    expect((await rows()).length).toBe(summary.closedBars);
  });

  it('refuses empty codes and bad kline types when it is built', () => {
    expect(() => klineSync({ client, codes: [], klineTypes: [1] })).toThrow(/codes/);
    expect(() => klineSync({ client, codes: ['BTCUSDT'], klineTypes: [12 as 1] })).toThrow(/klineTypes/);
  });
});

describe('klineSync taking over a series its dataset holds', () => {
  // 5x: a market minute is 12 s of real time, so the takeover below happens within the minute
  // (or the next) of the other writer's last commit, however loaded the machine.
  let slow: Clock;
  let slowSim: Simulator;
  let slowClient: QuoteflowClient;
  beforeAll(async () => {
    slow = acceleratedClock({ speed: 5 });
    slowSim = await startSimulator({ port: 0, tokens: { [TOKEN]: 'professional' }, seed: 9, clock: slow });
  });
  afterAll(async () => {
    await slowSim.close();
  });
  beforeEach(() => {
    slowClient = new QuoteflowClient({
      baseUrl: slowSim.url,
      token: TOKEN,
      plan: 'professional',
      clock: slow,
    });
  });
  afterEach(async () => {
    await slowClient.close();
  });

  it('polls a series held up to a moment ago in its next poll, with no /kline read, and goes on without a gap', async () => {
    const files = { dir, format: 'ndjson' as const };
    // Another writer held BTCUSDT and stopped (its last closed bars committed).
    const started = slowSim.marketNow();
    const other = klineSync({ client: slowClient, codes: ['BTCUSDT'], klineTypes: [1], bars: 5, files });
    await vi.waitFor(
      () => expect(slowSim.log.count({ endpoint: 'batch-kline', sinceMs: started })).toBeGreaterThan(0),
      { timeout: 20_000, interval: 20 },
    );
    await other.stop();
    const held = (await rows()).map((r) => Date.parse(r.ts));
    expect(held.length).toBeGreaterThanOrEqual(5);
    const events: KlineSyncEvent[] = [];
    const mine = klineSync({
      client: slowClient,
      codes: ['ETHUSDT'],
      klineTypes: [1],
      bars: 5,
      files,
      checkpointMs: 5_000,
      onEvent: (e) => events.push(e),
    });
    await vi.waitFor(() => expect(events.some((e) => e.type === 'live-cycle')).toBe(true), {
      timeout: 20_000,
      interval: 20,
    });
    const since = slowSim.marketNow();
    const before = events.length;
    await mine.add(['BTCUSDT']);
    // Its first answer followed on from the dataset's newest bar: polled, never read through /kline.
    const asked = slowSim.log.filter({ sinceMs: since }).filter((e) => e.series.includes('BTCUSDT:1'));
    expect(asked.map((e) => e.endpoint)).toContain('batch-kline');
    expect(asked.filter((e) => e.endpoint === 'kline')).toEqual([]);
    expect(events.slice(before).filter((e) => e.type === 'backfill-series-done')).toEqual([
      expect.objectContaining({ code: 'BTCUSDT', klineType: 1, bars: 0 }),
    ]);
    // It goes on: a bar that closed after the takeover is committed, after the other writer's.
    await vi.waitFor(
      async () => {
        const btc = (await rows()).filter((r) => r.code === 'BTCUSDT').map((r) => Date.parse(r.ts));
        expect(Math.max(...btc)).toBeGreaterThan(Math.max(...held));
      },
      { timeout: 40_000, interval: 100 },
    );
    await mine.stop();
    const btc = (await rows()).filter((r) => r.code === 'BTCUSDT').map((r) => Date.parse(r.ts));
    expectContiguous(btc, 60_000);
    expect(events.filter((e) => e.type === 'gap')).toEqual([]);
    expect(slowSim.log.refused()).toEqual([]);
  }, 60_000);

  it('brackets a joining series’ history: begin before its first answer’s bars, complete once it is current', async () => {
    const files = { dir, format: 'ndjson' as const };
    const started = slowSim.marketNow();
    const other = klineSync({ client: slowClient, codes: ['BTCUSDT'], klineTypes: [1], bars: 5, files });
    await vi.waitFor(
      () => expect(slowSim.log.count({ endpoint: 'batch-kline', sinceMs: started })).toBeGreaterThan(0),
      { timeout: 20_000, interval: 20 },
    );
    await other.stop();
    const sink = await DatasetSink.open({ dir, format: 'ndjson' });
    try {
      const since = slowSim.marketNow();
      let complete = false;
      // Until its history is complete and one bar update came after it.
      const out = await firstValueFrom(
        klineUpdates(slowClient, { codes: ['BTCUSDT'], klineTypes: [1], bars: 5, resumeFrom: [sink] }).pipe(
          takeWhile((o) => {
            if (complete && o.type === 'bar-update') return false;
            if (o.type === 'history' && o.phase === 'complete') complete = true;
            return true;
          }, true),
          toArray(),
        ),
      );
      expect(out[0]).toEqual({ type: 'history', code: 'BTCUSDT', klineType: 1, phase: 'begin' });
      expect(out.filter((o) => o.type === 'history').map((o) => (o as { phase: string }).phase)).toEqual([
        'begin',
        'complete',
      ]);
      expect(out.at(-1)).toMatchObject({ type: 'bar-update', code: 'BTCUSDT' });
      const asked = slowSim.log.filter({ sinceMs: since }).filter((e) => e.series.includes('BTCUSDT:1'));
      expect(asked.filter((e) => e.endpoint === 'kline')).toEqual([]);
    } finally {
      await sink.close();
    }
  });
});
