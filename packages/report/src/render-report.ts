import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { ReportData } from './report-data.js';
import { candlesView, heatmapView, quotaView, reportPage, summaryView } from './report-page.js';

/** lightweight-charts' standalone build (it defines the global `LightweightCharts`), to inline. */
async function chartsScript(): Promise<string> {
  const pkg = createRequire(import.meta.url).resolve('lightweight-charts/package.json');
  return readFile(join(dirname(pkg), 'dist', 'lightweight-charts.standalone.production.js'), 'utf8');
}

/** JSON that is safe inside a `<script>` element (no `</script>`, no `<!--`). */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * One self-contained HTML page of `data`: no network URL in it (the chart library and the data are
 * inlined), so it opens offline from disk.
 */
export async function renderReport(data: ReportData): Promise<string> {
  const title = `quoteflow report: ${data.dir}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(title)}</title>
<style>
body { font: 14px system-ui, sans-serif; margin: 1.5rem; color: #263238; }
h1 { font-size: 1.3rem; } h2 { font-size: 1.1rem; margin-top: 2rem; }
.heatmap-cells { display: flex; max-width: 100%; }
.heatmap-labels { flex: none; }
.heatmap { image-rendering: pixelated; cursor: pointer; border: 1px solid #b0bec5; min-width: 0; max-width: 100%; flex: 0 1 auto; }
.legend span { display: inline-block; width: 0.9em; height: 0.9em; margin: 0 0.3em 0 1em; vertical-align: middle; }
table { border-collapse: collapse; } td, th { padding: 0.2rem 0.6rem; border-bottom: 1px solid #eceff1; text-align: left; }
tr.has-gaps td:nth-child(6) { color: #d32f2f; font-weight: 600; } tbody tr { cursor: pointer; }
#chart { width: 100%; max-width: 1100px; height: 360px; }
</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
<p>${data.summary.length} series; files: kline ${data.files.kline}, depth ${data.files.depth}, suspension ${data.files.suspension}; generated ${new Date(data.generatedAtMs).toISOString()}</p>
<section id="heatmap-view">
<h2 id="coverage">Coverage</h2>
<p class="legend"><span style="background:#2e7d32"></span>held<span style="background:#cfd8dc"></span>market closed (calendar)<span style="background:#d32f2f"></span>missing<span style="background:#ffb300"></span>halted (suspension records)</p>
<p>One panel per kline type, each over its own bars in cells of its own period. Click a row to open its bars.</p>
<div id="heatmap-panels"></div>
</section>
<section id="bars-view">
<h2 id="bars">Bars</h2>
<p id="chart-title"></p>
<div id="chart"></div>
</section>
<section id="quota-view">
<h2 id="quota">Quota</h2>
<p id="quota-title"></p>
<p id="quota-rate-title"></p>
<div id="quota-rate" style="max-width:1100px"></div>
<div id="quota-budget" style="max-width:1100px"></div>
</section>
<section id="summary-view">
<h2 id="summary">Summary</h2>
<table><thead><tr><th>code</th><th>type</th><th>rows</th><th>first bar (UTC)</th><th>last bar (UTC)</th><th>gaps</th><th>halts</th><th>last read (UTC)</th><th>freshness</th></tr></thead><tbody id="summary-body"></tbody></table>
</section>
<footer><p>Charts: TradingView Lightweight Charts™, Copyright (c) 2025 TradingView, Inc., https://www.tradingview.com/ (Apache License 2.0).</p></footer>
<script>${await chartsScript()}</script>
<script>${heatmapView.toString()}</script>
<script>${quotaView.toString()}</script>
<script>${summaryView.toString()}</script>
<script>${candlesView.toString()}</script>
<script>(${reportPage.toString()})(${scriptJson(data)}, LightweightCharts);</script>
</body>
</html>
`;
}
