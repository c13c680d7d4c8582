import type { ReportData } from './report-data.js';

/** The parts of lightweight-charts' standalone global (`LightweightCharts`) the page uses. */
interface Charts {
  createChart(el: HTMLElement, options: object): Chart;
  CandlestickSeries: unknown;
  HistogramSeries: unknown;
  LineSeries: unknown;
  createSeriesMarkers(series: ChartSeries, markers: object[]): unknown;
}
interface Chart {
  addSeries(kind: unknown, options?: object): ChartSeries;
  remove(): void;
  timeScale(): { fitContent(): void };
  priceScale(id: string): { applyOptions(o: object): void };
}
interface ChartSeries {
  setData(data: object[]): void;
  createPriceLine(options: object): unknown;
}

/** What the page exposes for tests and for users' scripts: the numbers it drew. */
export interface ReportPageState {
  readonly heatmapRows: number;
  readonly heatmapBuckets: number;
  /** The heatmap's first instant and the width of one cell (ms). */
  readonly heatmapFromMs: number;
  readonly heatmapBucketMs: number;
  readonly missingCells: number;
  readonly haltedCells: number;
  chart: { code: string; klineType: number; candles: number; candleMs: number; gaps: number } | undefined;
  /** What the quota view drew, or `undefined` without a request log. */
  readonly quota: { requests: number; endpoints: string[]; perMinute: number | undefined } | undefined;
  open(row: number): void;
}

/**
 * Runs in the browser, inlined into the page by `Function.prototype.toString` (so it may use
 * nothing from its module): draws the heatmap on a canvas, the summary table, and the candlesticks
 * of the series a click (or the first one) opens.
 */
export function reportPage(data: ReportData, charts: Charts): void {
  const COLORS: Record<string, string> = {
    h: '#2e7d32',
    c: '#cfd8dc',
    m: '#d32f2f',
    x: '#ffb300',
    '.': '#ffffff',
  };
  const iso = (ms: number | undefined) =>
    ms === undefined ? '-' : new Date(ms).toISOString().replace('T', ' ').slice(0, 16);
  const el = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
  const { coverage } = data;

  // Heatmap: one pixel block per cell, one canvas for all of them.
  const canvas = el<HTMLCanvasElement>('heatmap');
  const cellW = Math.max(1, Math.min(8, Math.floor(1100 / coverage.buckets)));
  const rowH = Math.max(1, Math.min(14, Math.floor(4000 / Math.max(1, coverage.rows.length))));
  canvas.width = coverage.buckets * cellW;
  canvas.height = coverage.rows.length * rowH;
  // A narrow window narrows the cells (the page never scrolls sideways); rows keep their height,
  // so they stay level with their labels.
  canvas.style.height = `${canvas.height}px`;
  const ctx = canvas.getContext('2d')!;
  let missingCells = 0;
  let haltedCells = 0;
  coverage.rows.forEach((row, r) => {
    for (let b = 0; b < row.cells.length; b++) {
      const state = row.cells[b]!;
      if (state === 'm') missingCells++;
      if (state === 'x') haltedCells++;
      ctx.fillStyle = COLORS[state] ?? '#ffffff';
      ctx.fillRect(b * cellW, r * rowH, cellW, rowH);
    }
  });
  // Row labels beside the cells when rows are tall enough to read.
  const labels = el<HTMLCanvasElement>('heatmap-labels');
  labels.width = rowH >= 9 ? 140 : 0;
  labels.height = canvas.height;
  if (rowH >= 9) {
    const lctx = labels.getContext('2d')!;
    lctx.font = `${Math.min(12, rowH - 1)}px system-ui, sans-serif`;
    lctx.textBaseline = 'middle';
    lctx.fillStyle = '#263238';
    coverage.rows.forEach((row, r) =>
      lctx.fillText(`${row.code} · ${row.klineType}`, 2, r * rowH + rowH / 2),
    );
  }
  el('heatmap-caption').textContent =
    `${coverage.rows.length} series × ${coverage.buckets} cells of ${Math.round(coverage.bucketMs / 60_000)} min ` +
    `from ${iso(coverage.fromMs)} UTC; ${missingCells} missing cells, ${haltedCells} halted. Click a row to open its bars.`;

  // Summary table.
  const body = el<HTMLTableSectionElement>('summary-body');
  const freshness = (ms: number | undefined) =>
    ms === undefined ? '-' : ms < 120_000 ? `${Math.round(ms / 1000)} s` : `${Math.round(ms / 60_000)} min`;
  data.summary.slice(0, 2_000).forEach((s, i) => {
    const tr = body.insertRow();
    for (const v of [
      s.code,
      String(s.klineType),
      String(s.rows),
      iso(s.firstMs),
      iso(s.lastMs),
      `${s.gaps} (${s.missingBars} bars)`,
      String(s.halts),
      iso(s.lastReadMs),
      freshness(s.freshnessMs),
    ])
      tr.insertCell().textContent = v;
    if (s.gaps > 0) tr.className = 'has-gaps';
    tr.addEventListener('click', () => state.open(i));
  });

  // Candlesticks with volume, gaps marked.
  let chart: Chart | undefined;
  const state: ReportPageState = {
    heatmapRows: coverage.rows.length,
    heatmapBuckets: coverage.buckets,
    heatmapFromMs: coverage.fromMs,
    heatmapBucketMs: coverage.bucketMs,
    missingCells,
    haltedCells,
    chart: undefined,
    quota:
      data.quota === undefined
        ? undefined
        : {
            requests: data.quota.requests,
            endpoints: data.quota.perMinuteByEndpoint.map((e) => e.endpoint),
            perMinute: data.quota.perMinute,
          },
    open(row: number) {
      const wanted = coverage.rows[row];
      const title = el('chart-title');
      if (wanted === undefined) return;
      const series = data.candles.find((c) => c.code === wanted.code && c.klineType === wanted.klineType);
      chart?.remove();
      chart = undefined;
      if (series === undefined) {
        title.textContent = `${wanted.code} type ${wanted.klineType}: its bars are not in this page (report it with --codes ${wanted.code})`;
        state.chart = undefined;
        return;
      }
      const length =
        series.candleMs >= 86_400_000 ? 'one bar' : `${Math.round(series.candleMs / 60_000)} min`;
      title.textContent =
        `${series.code} type ${series.klineType}, ${series.candles.length} candles of ${length}` +
        (series.bars > series.candles.length
          ? `: the newest ${series.candles.length} of ${series.bars} bars (--from/--to show others)`
          : '');
      // The library's logo would sit over the lowest bars' marks: its attribution stands as text
      // below the page instead (the licence allows either).
      chart = charts.createChart(el('chart'), {
        height: 360,
        timeScale: { timeVisible: true },
        layout: { attributionLogo: false },
      });
      const candles = chart.addSeries(charts.CandlestickSeries);
      candles.setData(
        series.candles.map(([time, open, high, low, close]) => ({ time, open, high, low, close })),
      );
      const volume = chart.addSeries(charts.HistogramSeries, {
        priceScaleId: 'volume',
        color: '#90a4ae',
        lastValueVisible: false,
        priceLineVisible: false,
      });
      chart.priceScale('volume').applyOptions({ scaleMargins: { top: 0.8, bottom: 0 } });
      volume.setData(series.candles.map(([time, , , , , v]) => ({ time, value: v })));
      const firstCandle = series.candles[0]?.[0] ?? 0;
      const shownGaps = series.gaps.filter(([, to]) => to >= firstCandle);
      charts.createSeriesMarkers(
        candles,
        shownGaps.map(([from, to]) => ({
          time: series.candles.findLast(([t]) => t <= from)?.[0] ?? from,
          position: 'aboveBar',
          color: '#d32f2f',
          shape: 'arrowDown',
          text: `gap to ${new Date(to * 1000).toISOString().slice(0, 16)}`,
        })),
      );
      chart.timeScale().fitContent();
      state.chart = {
        code: series.code,
        klineType: series.klineType,
        candles: series.candles.length,
        candleMs: series.candleMs,
        gaps: shownGaps.length,
      };
    },
  };
  // The canvas may be drawn smaller than its pixels (max-width): map the click back to a row.
  canvas.addEventListener('click', (e) =>
    state.open(Math.floor((e.offsetY * canvas.height) / canvas.clientHeight / rowH)),
  );
  quotaView(data.quota, charts);

  (window as unknown as { quoteflowReport: ReportPageState }).quoteflowReport = state;
  state.open(0);
}

/**
 * The quota view: requests per minute by endpoint and the daily budget left, the plan's limits as
 * lines. Runs in the browser beside {@link reportPage} (inlined by `toString()` before it, so it
 * is the page's global `quotaView`), and may use nothing from its module either.
 */
export function quotaView(quota: ReportData['quota'], charts: Charts): void {
  const el = (id: string) => document.getElementById(id)!;
  const title = el('quota-title');
  if (quota === undefined) {
    title.textContent =
      'No request log beside this dataset: run backfill, sync or run with --request-log to see the quota here.';
    return;
  }
  const outcomes = Object.entries(quota.outcomes)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  title.textContent = `${quota.requests} requests on plan ${quota.plan} (${outcomes})`;
  const palette = ['#1565c0', '#ef6c00', '#6a1b9a', '#00838f', '#558b2f'];
  // The plan's lines stay in view: the price axis always spans 0 to the limit.
  const upTo = (limit: number | undefined) => ({
    autoscaleInfoProvider: (original: () => { priceRange: { maxValue: number } } | null) => ({
      priceRange: {
        minValue: 0,
        maxValue: Math.max(limit ?? 0, original()?.priceRange.maxValue ?? 0) * 1.05,
      },
    }),
  });
  const rates = charts.createChart(el('quota-rate'), {
    height: 240,
    timeScale: { timeVisible: true },
    layout: { attributionLogo: false },
  });
  quota.perMinuteByEndpoint.forEach((e, i) => {
    const line = rates.addSeries(charts.LineSeries, {
      color: palette[i % palette.length],
      title: e.endpoint,
      lineWidth: 2,
      ...upTo(quota.perMinute),
    });
    line.setData(e.points.map(([time, value]) => ({ time, value })));
    if (i === 0 && quota.perMinute !== undefined)
      line.createPriceLine({
        price: quota.perMinute,
        color: '#d32f2f',
        lineStyle: 2,
        title: 'plan: per minute',
      });
  });
  rates.timeScale().fitContent();
  const budget = charts.createChart(el('quota-budget'), {
    height: 200,
    timeScale: { timeVisible: true },
    layout: { attributionLogo: false },
  });
  const left = budget.addSeries(charts.LineSeries, {
    color: '#2e7d32',
    title: 'daily budget left',
    ...upTo(quota.perDay),
  });
  left.setData(quota.budgetLeft.map(([time, value]) => ({ time, value })));
  left.createPriceLine({ price: quota.perDay, color: '#d32f2f', lineStyle: 2, title: 'plan: per day' });
  left.createPriceLine({ price: 0, color: '#263238', lineStyle: 2, title: 'none left' });
  budget.timeScale().fitContent();
}
