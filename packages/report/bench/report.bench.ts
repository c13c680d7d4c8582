// `quoteflow report` at scale: build time (collectReportData + renderReport) of a Parquet dataset
// of N series × D days of 1-minute bars (one file per 4 Mi rows, as compaction leaves a month),
// against one DuckDB group-by over the same files in the same run (rows, first and last bar and
// newest read per series: the floor any reader of every row stands on); the page's size; and its
// first paint in headless Chromium (Debian's chromium through puppeteer-core).
// BENCH_REPORT_SERIES (default 100,1000) and BENCH_REPORT_DAYS (default 1) set the sizes.
// The files are written by DuckDB (the dataset writer's 0.6 M rows/s would take 12 minutes for a
// month of 10,000 series): the same columns, `ts` and `read_at` in microseconds instead of ms.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import puppeteer from 'puppeteer-core';
import { collectReportData, renderReport } from '@quoteflow/report';
import { listDataFiles } from '@quoteflow/sinks/internal';

const seriesCounts = (process.env['BENCH_REPORT_SERIES'] ?? '100,1000').split(',').map(Number);
const days = Number(process.env['BENCH_REPORT_DAYS'] ?? 1);
const START_S = Date.UTC(2026, 9, 1) / 1000;
const ROWS_PER_FILE = 4 * 1024 * 1024;

/**
 * N series × `days` of 1-minute bars, a hole now and then (so the heatmap has something to show),
 * laid out as a sync and its compaction leave them: each file a span of time holding every series.
 */
async function dataset(dir: string, series: number): Promise<number> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const partition = join(dir, 'kline', 'kline_type=1', 'month=2026-10');
  await mkdir(partition, { recursive: true });
  const minutes = days * 1_440;
  const perFile = Math.max(1, Math.floor(ROWS_PER_FILE / series));
  let rows = 0;
  for (let first = 0, part = 0; first < minutes; first += perFile, part++) {
    const last = Math.min(minutes, first + perFile);
    const file = join(partition, `part-${String(part).padStart(5, '0')}.parquet`);
    await c.run(
      `COPY (
         SELECT 'X' || lpad(s::VARCHAR, 5, '0') || 'USDT' AS code,
                to_timestamp(${START_S} + m * 60) AS ts,
                100 + (m % 50) * 0.01 AS open, 101 + (m % 50) * 0.01 AS high, 99 + (m % 50) * 0.01 AS low,
                100 + ((m + 1) % 50) * 0.01 AS close, (10 + m % 7)::DOUBLE AS volume, 1000::DOUBLE AS turnover,
                to_timestamp(${START_S} + m * 60 + 120) AS read_at
         FROM range(${first}, ${last}) q(m), range(${series}) r(s)
         WHERE m % 997 <> s % 997
         ORDER BY ts, code
       ) TO '${file}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 1048576)`,
    );
    const n = await c.runAndReadAll(`SELECT count(*)::DOUBLE FROM read_parquet('${file}')`);
    rows += n.getColumnsJS()[0]![0] as number;
  }
  c.closeSync();
  db.closeSync();
  return rows;
}

/** The baseline: one DuckDB group-by over the same files (rows, first, last and newest read per series). */
async function groupByAlone(dir: string): Promise<number> {
  const files = (await listDataFiles(dir, 'kline')).map((f) => `'${join(dir, f)}'`).join(', ');
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const result = await c.runAndReadAll(
    `SELECT code, count(*)::DOUBLE, min(ts), max(ts), max(read_at) FROM read_parquet([${files}]) GROUP BY code`,
  );
  const rows = (result.getColumnsJS()[1] as number[]).reduce((n, x) => n + x, 0);
  c.closeSync();
  db.closeSync();
  return rows;
}

const seconds = (ms: number) => (ms / 1000).toFixed(2);
const browser = await puppeteer.launch({
  executablePath: process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu'],
});
console.log(
  '| series × days | rows | DuckDB group-by alone (s) | report build (s) | build / group-by | page (MB) | first paint (s) |',
);
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const series of seriesCounts) {
  const dir = await mkdtemp(join(tmpdir(), 'qf-report-bench-'));
  try {
    const rows = await dataset(dir, series);
    const t0 = performance.now();
    const read = await groupByAlone(dir);
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
