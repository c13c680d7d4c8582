// `quoteflow report` at scale: build time (collectReportData + renderReport) of a dataset of N
// series × D days of 1-minute bars, against reading the same rows' starts alone (readSeriesStarts:
// the code, ts and read_at columns, the floor the build stands on) in the same run; the page's size; and its first paint in headless Chromium
// (Debian's chromium through puppeteer-core). BENCH_REPORT_SERIES (default 100,1000) and
// BENCH_REPORT_DAYS (default 1) set the sizes.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';
import type { Bar } from '@quoteflow/core';
import { readSeriesStarts } from '@quoteflow/pipelines';
import { collectReportData, renderReport } from '@quoteflow/report';
import { DatasetWriter } from '@quoteflow/sinks';

const seriesCounts = (process.env['BENCH_REPORT_SERIES'] ?? '100,1000').split(',').map(Number);
const days = Number(process.env['BENCH_REPORT_DAYS'] ?? 1);
const MINUTE = 60_000;
const START = Date.UTC(2026, 9, 5);

async function dataset(dir: string, series: number): Promise<number> {
  const writer = new DatasetWriter({ dir, format: 'parquet', maxRowsPerFile: 2_000_000 });
  let rows = 0;
  for (let s = 0; s < series; s++) {
    const code = `X${String(s).padStart(5, '0')}USDT`;
    let price = 100 + (s % 50);
    for (let m = 0; m < days * 1_440; m++) {
      // A hole now and then, so the heatmap has something to show.
      if (m % 997 === s % 997) continue;
      const tsMs = START + m * MINUTE;
      const open = price;
      price += Math.sin(m + s) * 0.1;
      const bar: Bar = {
        type: 'bar',
        code,
        klineType: 1,
        tsMs,
        open,
        high: Math.max(open, price) + 0.05,
        low: Math.min(open, price) - 0.05,
        close: price,
        volume: 10 + (m % 7),
        turnover: 1_000,
        readAtMs: tsMs + 2 * MINUTE,
        receivedAtMs: tsMs + 2 * MINUTE + 5,
      };
      writer.append(bar);
      rows++;
    }
  }
  await writer.close();
  return rows;
}

const seconds = (ms: number) => (ms / 1000).toFixed(2);
const browser = await puppeteer.launch({
  executablePath: process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu'],
});
console.log(
  '| series × days | rows | read starts alone (s) | report build (s) | build / read | page (MB) | first paint (s) |',
);
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const series of seriesCounts) {
  const dir = await mkdtemp(join(tmpdir(), 'qf-report-bench-'));
  try {
    const rows = await dataset(dir, series);
    const t0 = performance.now();
    const read = [...(await readSeriesStarts(dir)).values()].reduce((n, x) => n + x.starts.length, 0);
    const readMs = performance.now() - t0;
    if (read !== rows) throw new Error(`read ${read} rows of ${rows}`);
    const t1 = performance.now();
    const html = await renderReport(await collectReportData(dir));
    const buildMs = performance.now() - t1;
    const file = join(dir, 'report.html');
    await writeFile(file, html);
    const page = await browser.newPage();
    const t2 = performance.now();
    await page.goto(`file://${file}`, { waitUntil: 'load' });
    const paint = await page.evaluate(
      () => performance.getEntriesByName('first-paint')[0]?.startTime ?? Number.NaN,
    );
    const loadMs = performance.now() - t2;
    await page.close();
    console.log(
      `| ${series} × ${days} | ${rows.toLocaleString('en')} | ${seconds(readMs)} | ${seconds(buildMs)} | ` +
        `${(buildMs / readMs).toFixed(2)} | ${(html.length / 1e6).toFixed(1)} | ${seconds(paint)} (load ${seconds(loadMs)}) |`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
await browser.close();
