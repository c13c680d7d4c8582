// End-to-end: `quoteflow report` of a simulator dataset, opened in headless Chromium (Debian's
// chromium, the run's shared one, driven by puppeteer-core): no console error, no network request, a screenshot of each
// view, and the page's own numbers checked against `quoteflow inspect` and the dataset's rows.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { startSimulator, type Simulator } from '../packages/simulator/src/index.js';
import { dataFilesUnder, runQuoteflow } from './support/quoteflow-process.js';
import { sharedFixture } from './support/shared-fixtures.js';

const TOKEN = 'report-test-token-83a0';
const SHOTS = resolve(import.meta.dirname, '../.cache/report-screenshots');

let sim: Simulator;
let work: string;
let browser: Browser;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, tokens: { [TOKEN]: 'professional' }, seed: 4 });
  work = await mkdtemp(join(tmpdir(), 'qf-report-'));
  // The run's one Chromium (a shared fixture): this file opens its own pages in it.
  browser = await puppeteer.connect({ browserWSEndpoint: (await sharedFixture('chromium')).wsEndpoint });
});

afterAll(async () => {
  await browser?.disconnect();
  await sim.close();
  await rm(work, { recursive: true, force: true });
});

interface InspectJson {
  datasets: {
    kline: {
      series: { code: string; kline_type: number; rows: number; gaps: { from: string; bars: number }[] }[];
    };
  };
}

/** Backfills `codes` into `out` from the simulator, one `[klineType, bars]` after the other. */
async function backfillTypes(
  out: string,
  codes: string,
  types: readonly (readonly [string, string])[],
  flags: readonly string[] = [],
): Promise<void> {
  const env = { QUOTEFLOW_BASE_URL: sim.url, QUOTEFLOW_TOKEN: TOKEN, QUOTEFLOW_PLAN: 'professional' };
  for (const [type, bars] of types) {
    const r = await runQuoteflow(
      ['backfill', '--codes', codes, '--kline-type', type, '--bars', bars, '--out', out, ...flags],
      env,
    );
    expect(r.code, r.stderr).toBe(0);
  }
}

describe('quoteflow report', () => {
  it('draws the coverage, the candlesticks and the summary of a dataset with holes, offline', async () => {
    const out = join(work, 'data');
    const env = { QUOTEFLOW_BASE_URL: sim.url, QUOTEFLOW_TOKEN: TOKEN, QUOTEFLOW_PLAN: 'professional' };
    const backfill = await runQuoteflow(
      [
        'backfill',
        '--codes',
        'BTCUSDT,ETHUSDT,AAPL.US',
        '--kline-type',
        '1',
        '--bars',
        '240',
        '--out',
        out,
        '--format',
        'ndjson',
        '--request-log',
      ],
      env,
    );
    expect(backfill.code, backfill.stderr).toBe(0);
    // Holes: BTCUSDT loses 4 bars in one place and 2 in another, ETHUSDT 1.
    const [file] = await dataFilesUnder(join(out, 'kline'));
    const rows = (await readFile(file!, 'utf8')).trim().split('\n');
    const byCode = (code: string) => rows.filter((r) => (JSON.parse(r) as { code: string }).code === code);
    const drop = new Set([
      ...byCode('BTCUSDT').slice(50, 54),
      ...byCode('BTCUSDT').slice(120, 122),
      byCode('ETHUSDT')[70]!,
    ]);
    // AAPL.US loses 10 bars to a halt its exchange published: held as a suspension record.
    const aapl = byCode('AAPL.US').map((r) => JSON.parse(r) as { ts: string });
    for (const r of byCode('AAPL.US').slice(100, 110)) drop.add(r);
    await writeFile(file!, `${rows.filter((r) => !drop.has(r)).join('\n')}\n`);
    await mkdir(join(out, 'suspension', 'exchange=nyse'), { recursive: true });
    await writeFile(
      join(out, 'suspension', 'exchange=nyse', 'halts.ndjson'),
      `${JSON.stringify({ symbol: 'AAPL', halt_at: aapl[100]!.ts, resume_at: aapl[110]!.ts, publish_date: aapl[100]!.ts })}\n`,
    );

    const inspect = await runQuoteflow(['inspect', '--out', out, '--format', 'json'], {});
    expect(inspect.code, inspect.stderr).toBe(0);
    const series = (JSON.parse(inspect.stdout) as InspectJson).datasets.kline.series;
    const gapBars = series.flatMap((s) => s.gaps).reduce((n, g) => n + g.bars, 0);
    // The halt explains AAPL.US's hole: inspect reports only the 7 bars nothing explains.
    expect(gapBars).toBe(7);
    expect(series.find((s) => s.code === 'AAPL.US')!.gaps).toEqual([]);
    // The table names each gap in UTC and on the exchange's own clock.
    const inspectTable = await runQuoteflow(['inspect', '--out', out], {});
    expect(inspectTable.stdout).toMatch(
      /^gap BTCUSDT type 1: \S+Z to \S+Z \(4 bars; exchange time \d{4}-\d\d-\d\d \d\d:\d\d (Etc\/)?UTC to /m,
    );

    const html = join(work, 'report', 'report.html');
    await mkdir(join(work, 'report'));
    const before = sim.log.length;
    const report = await runQuoteflow(['report', '--out', out, '--html', html], {});
    expect(report.code, report.stderr).toBe(0);
    expect(sim.log.length).toBe(before); // no request

    const page = await browser.newPage();
    onTestFinished(() => page.close());
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warn') problems.push(`${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`pageerror: ${String(e)}`));
    await page.setRequestInterception(true);
    page.on('request', (r) => {
      if (r.url().startsWith('file:')) void r.continue();
      else {
        problems.push(`network: ${r.url()}`);
        void r.abort();
      }
    });
    await page.setViewport({ width: 1300, height: 1000 });
    await page.goto(`file://${html}`, { waitUntil: 'load' });
    await mkdir(SHOTS, { recursive: true });

    const state = () =>
      page.evaluate(() => {
        const s = (globalThis as unknown as { quoteflowReport: Record<string, unknown> }).quoteflowReport;
        return {
          heatmapRows: s['heatmapRows'],
          heatmapFromMs: s['heatmapFromMs'] as number,
          heatmapBucketMs: s['heatmapBucketMs'] as number,
          missingCells: s['missingCells'],
          haltedCells: s['haltedCells'],
          chart: s['chart'],
          quota: s['quota'],
        };
      });
    const first = await state();
    // The heatmap's missing cells are the cells that inspect's missing bars fall in: one per bar
    // when a cell is one minute; wider cells (the data spans more than 720 minutes when New York
    // closed long ago) hold several.
    expect(first.heatmapRows).toBe(3);
    const missingCells = new Set<string>();
    for (const s of series)
      for (const g of s.gaps)
        for (let i = 0; i < g.bars; i++)
          missingCells.add(
            `${s.code}|${Math.floor((Date.parse(g.from) + i * 60_000 - first.heatmapFromMs) / first.heatmapBucketMs)}`,
          );
    expect(first.missingCells).toBe(missingCells.size);
    if (first.heatmapBucketMs === 60_000) expect(first.missingCells).toBe(gapBars);
    // The 10 halted bars' cells, likewise, but for a cell that also holds a bar (held wins).
    const cellOf = (r: { ts: string }) =>
      Math.floor((Date.parse(r.ts) - first.heatmapFromMs) / first.heatmapBucketMs);
    const heldCells = new Set([...aapl.slice(0, 100), ...aapl.slice(110)].map(cellOf));
    const haltedCells = new Set(
      aapl
        .slice(100, 110)
        .map(cellOf)
        .filter((c) => !heldCells.has(c)),
    );
    expect(first.haltedCells).toBe(haltedCells.size);
    if (first.heatmapBucketMs === 60_000) expect(first.haltedCells).toBe(10);
    await (await page.$('#heatmap-view'))!.screenshot({ path: join(SHOTS, 'coverage.png') });
    // The quota view counts every request the simulator saw (the code check's and the backfill's:
    // inspect and report send none).
    expect(first.quota).toEqual(
      expect.objectContaining({
        requests: sim.log.length,
        endpoints: expect.arrayContaining(['batch-kline', 'kline']) as unknown,
        perMinute: 1200,
      }),
    );
    await (await page.$('#quota-view'))!.screenshot({ path: join(SHOTS, 'quota.png') });

    // The candlesticks of a series hold that series' bars (one candle per bar at this length).
    const rowOf = (code: string) => series.findIndex((s) => s.code === code);
    await page.evaluate((row) => {
      (globalThis as unknown as { quoteflowReport: { open(r: number): void } }).quoteflowReport.open(row);
    }, rowOf('BTCUSDT'));
    const opened = await state();
    expect(opened.chart).toEqual({
      code: 'BTCUSDT',
      klineType: 1,
      candles: series[rowOf('BTCUSDT')]!.rows,
      candleMs: 60_000,
      gaps: 2,
    });
    await (await page.$('#bars-view'))!.screenshot({ path: join(SHOTS, 'bars.png') });

    const table = await page.$$eval('#summary-body tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
    );
    expect(table.map((r) => [r[0], r[2], r[5]])).toEqual(
      series.map((s) => [
        s.code,
        String(s.rows),
        `${s.gaps.length} (${s.gaps.reduce((n, g) => n + g.bars, 0)} bars)`,
      ]),
    );
    await (await page.$('#summary-view'))!.screenshot({ path: join(SHOTS, 'summary.png') });

    // A click on the heatmap's ETHUSDT row opens it, as a person would.
    const heatmap = (await page.$('.heatmap'))!;
    await heatmap.scrollIntoView();
    const box = (await heatmap.boundingBox())!;
    const rowHeight = box.height / 3;
    await page.mouse.click(box.x + 5, box.y + rowHeight * rowOf('ETHUSDT') + rowHeight / 2);
    expect((await state()).chart).toMatchObject({ code: 'ETHUSDT', gaps: 1 });
    expect(problems).toEqual([]);
  });

  it('fits a 1,200 px window, draws 1-minute bars as 1-minute candles, and leaves gap labels uncovered', async () => {
    const out = join(work, 'wide');
    await backfillTypes(out, 'BTCUSDT', [
      ['1', '2500'],
      ['5', '60'],
    ]);
    // A window of 550 minutes: 550 one-minute cells of 2 px, the widest the heatmap draws, beside
    // the row labels: what overflowed a 1,200 px window.
    const inspect = await runQuoteflow(['inspect', '--out', out, '--format', 'json'], {});
    const minutes = (JSON.parse(inspect.stdout) as InspectJson).datasets.kline.series.find(
      (x) => x.kline_type === 1,
    ) as unknown as { last: string };
    const toMs = Date.parse(minutes.last) + 60_000;
    const iso = (ms: number) => new Date(ms).toISOString();
    const [whole, narrow] = [join(work, 'wide.html'), join(work, 'window.html')];
    for (const [html, window] of [
      [whole, []],
      [narrow, ['--from', iso(toMs - 550 * 60_000), '--to', iso(toMs)]],
    ] as const) {
      const report = await runQuoteflow(['report', '--out', out, '--html', html, ...window], {});
      expect(report.code, report.stderr).toBe(0);
    }
    const page = await browser.newPage();
    onTestFinished(() => page.close());
    await page.setViewport({ width: 1200, height: 900 });
    const layout = async (html: string) => {
      await page.goto(`file://${html}`, { waitUntil: 'load' });
      return page.evaluate(() => {
        // The page's DOM (this file is type-checked without the DOM library).
        const doc = (
          globalThis as unknown as {
            document: {
              documentElement: { scrollWidth: number; clientWidth: number };
              querySelectorAll(selector: string): Iterable<{ getBoundingClientRect(): { right: number } }>;
              querySelector(selector: string): { textContent: string | null } | null;
            };
          }
        ).document;
        const state = (
          globalThis as unknown as { quoteflowReport: { heatmapBuckets: number; chart: unknown } }
        ).quoteflowReport;
        return {
          pageWidth: doc.documentElement.scrollWidth,
          windowWidth: doc.documentElement.clientWidth,
          heatmapRight: Math.max(
            ...[...doc.querySelectorAll('.heatmap')].map((c) => c.getBoundingClientRect().right),
          ),
          buckets: state.heatmapBuckets,
          chart: state.chart,
          logo: doc.querySelector('#tv-attr-logo') !== null,
          footer: doc.querySelector('footer')?.textContent ?? '',
        };
      });
    };
    const windowed = await layout(narrow);
    expect(windowed.buckets).toBe(550);
    // Nothing sticks out sideways: the heatmap narrows its cells to the window.
    expect(windowed.heatmapRight).toBeLessThanOrEqual(windowed.windowWidth);
    expect(windowed.pageWidth).toBeLessThanOrEqual(windowed.windowWidth);
    await page.screenshot({ path: join(SHOTS, 'report-1200px.png'), fullPage: true });
    const all = await layout(whole);
    // No logo over the chart's lowest bars and their gap labels: the attribution stands as text.
    expect(all.logo).toBe(false);
    expect(all.footer).toMatch(/TradingView Lightweight Charts.*https:\/\/www\.tradingview\.com\//);
    // The 1-minute series (row 0) as 2,500 one-minute candles, not 1,250 two-minute ones.
    expect(all.chart).toMatchObject({ code: 'BTCUSDT', klineType: 1, candleMs: 60_000, candles: 2500 });
  });

  it('gives 1-minute series a panel of their own beside years of daily bars, and scales the per-minute quota to the use', async () => {
    const out = join(work, 'mixed');
    await backfillTypes(
      out,
      'BTCUSDT,ETHUSDT',
      [
        ['8', '600'],
        ['1', '240'],
      ],
      ['--request-log'],
    );
    const html = join(work, 'mixed.html');
    const report = await runQuoteflow(['report', '--out', out, '--html', html], {});
    expect(report.code, report.stderr).toBe(0);
    const page = await browser.newPage();
    onTestFinished(() => page.close());
    await page.setViewport({ width: 1300, height: 1000 });
    await page.goto(`file://${html}`, { waitUntil: 'load' });
    const drawn = await page.evaluate(() => {
      const s = (
        globalThis as unknown as {
          quoteflowReport: { panels: unknown; quota: Record<string, number> };
          document: { querySelector(selector: string): { textContent: string | null } | null };
        }
      ).quoteflowReport;
      const doc = (
        globalThis as unknown as {
          document: { querySelector(selector: string): { textContent: string | null } | null };
        }
      ).document;
      return {
        panels: s.panels,
        quota: s.quota,
        rateTitle: doc.querySelector('#quota-rate-title')?.textContent,
      };
    });
    // Each kline type over its own bars, one bar a cell: the 240 one-minute bars are 240 cells, not
    // a sliver of cells 20 hours wide beside 600 days.
    expect(drawn.panels).toEqual([
      expect.objectContaining({ klineType: 1, rows: 2, bucketMs: 60_000, buckets: 240, missingCells: 0 }),
      expect.objectContaining({ klineType: 8, rows: 2, bucketMs: 86_400_000, buckets: 600, missingCells: 0 }),
    ]);
    await (await page.$('#heatmap-view'))!.screenshot({ path: join(SHOTS, 'coverage-panels.png') });
    // A handful of requests a minute against the plan's 1,200: the axis follows the use, and the
    // limit is said, not drawn 100 times higher than the lines.
    const quota = drawn.quota;
    expect(quota['perMinute']).toBe(1200);
    expect(quota['peakPerMinute']).toBeGreaterThan(0);
    expect(quota['peakPerMinute']).toBeLessThan(600);
    expect(quota['rateAxisMax']).toBeGreaterThanOrEqual(quota['peakPerMinute']!);
    expect(quota['rateAxisMax']).toBeLessThan(quota['peakPerMinute']! * 1.2 + 1);
    expect(drawn.rateTitle).toContain(`the busiest minute ${quota['peakPerMinute']}`);
    expect(drawn.rateTitle).toContain("of the plan's 1200 a minute (its line is above this scale)");
    await (await page.$('#quota-view'))!.screenshot({ path: join(SHOTS, 'quota-scaled.png') });
  });

  it('refuses a code the dataset does not hold with exit 2 naming it, writing nothing', async () => {
    const html = join(work, 'nosuch.html');
    const r = await runQuoteflow(['report', '--out', work, '--html', html, '--codes', 'NOSUCH.US'], {});
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--codes NOSUCH\.US: the dataset under .* holds no bars of this code/);
    await expect(readFile(html)).rejects.toThrow(/ENOENT/);
  });

  it('refuses a missing dataset and a bad time with exit 2, writing nothing', async () => {
    const html = join(work, 'never.html');
    const missing = await runQuoteflow(['report', '--out', join(work, 'nope'), '--html', html], {});
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--out .*nope: no such directory/);
    const badTime = await runQuoteflow(['report', '--out', work, '--html', html, '--from', 'yesterday'], {});
    expect(badTime.code).toBe(2);
    expect(badTime.stderr).toMatch(/--from yesterday: not an ISO-8601 time/);
    await expect(readFile(html)).rejects.toThrow(/ENOENT/);
  });

  it("makes the page's directory when it does not exist yet", async () => {
    const html = join(work, 'pages', 'today', 'report.html');
    const r = await runQuoteflow(['report', '--out', work, '--html', html], {});
    expect(r.code, r.stderr).toBe(0);
    expect((await readFile(html, 'utf8')).startsWith('<!doctype html>')).toBe(true);
  });
});
