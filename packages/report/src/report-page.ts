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

/** What one panel of the heatmap (one kline type) drew. */
export interface HeatmapPanelState {
  readonly klineType: number;
  readonly rows: number;
  readonly buckets: number;
  /** The panel's first instant and the width of one cell (ms). */
  readonly fromMs: number;
  readonly bucketMs: number;
  readonly missingCells: number;
  readonly haltedCells: number;
}

/** What the quota view drew. */
export interface QuotaViewState {
  readonly requests: number;
  readonly endpoints: string[];
  /** The plan's requests per minute (all endpoints), if it has such a rule. */
  readonly perMinute: number | undefined;
  /** The most requests of one minute, all endpoints together. */
  readonly peakPerMinute: number;
  /** The top of the per-minute chart's axis: scaled to the use, the plan's line inside it only when use comes near it. */
  readonly rateAxisMax: number;
}

/** What the page exposes for tests and for users' scripts: the numbers it drew. */
export interface ReportPageState {
  /** Rows of every panel. */
  readonly heatmapRows: number;
  /** The first panel's (the shortest kline type's) cells, first instant and cell width (ms). */
  readonly heatmapBuckets: number;
  readonly heatmapFromMs: number;
  readonly heatmapBucketMs: number;
  /** Of every panel. */
  readonly missingCells: number;
  readonly haltedCells: number;
  /** One per kline type, shortest period first. */
  readonly panels: readonly HeatmapPanelState[];
  chart: { code: string; klineType: number; candles: number; candleMs: number; gaps: number } | undefined;
  /** What the quota view drew, or `undefined` without a request log. */
  readonly quota: QuotaViewState | undefined;
  /** Opens the bars of the series at `row` of the summary (the dataset's order). */
  open(row: number): void;
}

/**
 * Runs in the browser, inlined into the page by `Function.prototype.toString` (so it may use
 * nothing from its module but {@link heatmapView}, {@link summaryView}, {@link candlesView} and
 * {@link quotaView}, inlined before it): draws the heatmap, the summary table, the quota view, and
 * the candlesticks of the series a click (or the first one) opens.
 */
export function reportPage(data: ReportData, charts: Charts): void {
  const panels = heatmapView(data, (i) => state.open(i));
  summaryView(data, (i) => state.open(i));
  const openCandles = candlesView(data, charts, (chart) => {
    state.chart = chart;
  });
  const state: ReportPageState = {
    heatmapRows: panels.reduce((n, p) => n + p.rows, 0),
    heatmapBuckets: panels[0]?.buckets ?? 0,
    heatmapFromMs: panels[0]?.fromMs ?? 0,
    heatmapBucketMs: panels[0]?.bucketMs ?? 0,
    missingCells: panels.reduce((n, p) => n + p.missingCells, 0),
    haltedCells: panels.reduce((n, p) => n + p.haltedCells, 0),
    panels,
    chart: undefined,
    quota: quotaView(data.quota, charts),
    open: openCandles,
  };

  (window as unknown as { quoteflowReport: ReportPageState }).quoteflowReport = state;
  state.open(0);
}

/**
 * The summary table: a row per series (the first 2,000), a click on one opens it. Runs in the
 * browser beside {@link reportPage} (inlined by `toString()` before it), using nothing from its module.
 */
export function summaryView(data: ReportData, open: (row: number) => void): void {
  const iso = (ms: number | undefined) =>
    ms === undefined ? '-' : new Date(ms).toISOString().replace('T', ' ').slice(0, 16);
  const body = document.getElementById('summary-body') as HTMLTableSectionElement;
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
    tr.addEventListener('click', () => open(i));
  });
}

/**
 * The candlesticks of one series with volume, gaps marked: returns the `open(row)` of the page,
 * which draws the series at `row` of the summary and tells `shown` what it drew (`undefined` when
 * its bars are not in the page). Runs in the browser beside {@link reportPage} (inlined by
 * `toString()` before it), using nothing from its module.
 */
export function candlesView(
  data: ReportData,
  charts: Charts,
  shown: (chart: ReportPageState['chart']) => void,
): (row: number) => void {
  let chart: Chart | undefined;
  return (row) => {
    const wanted = data.summary[row];
    const title = document.getElementById('chart-title')!;
    if (wanted === undefined) return;
    const series = data.candles.find((c) => c.code === wanted.code && c.klineType === wanted.klineType);
    chart?.remove();
    chart = undefined;
    if (series === undefined) {
      title.textContent = `${wanted.code} type ${wanted.klineType}: its bars are not in this page (report it with --codes ${wanted.code})`;
      shown(undefined);
      return;
    }
    const length = series.candleMs >= 86_400_000 ? 'one bar' : `${Math.round(series.candleMs / 60_000)} min`;
    title.textContent =
      `${series.code} type ${series.klineType}, ${series.candles.length} candles of ${length}` +
      (series.bars > series.candles.length
        ? `: the newest ${series.candles.length} of ${series.bars} bars (--from/--to show others)`
        : '');
    // The library's logo would sit over the lowest bars' marks: its attribution stands as text
    // below the page instead (the licence allows either).
    chart = charts.createChart(document.getElementById('chart')!, {
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
    shown({
      code: series.code,
      klineType: series.klineType,
      candles: series.candles.length,
      candleMs: series.candleMs,
      gaps: shownGaps.length,
    });
  };
}

/**
 * The coverage heatmap: one panel per kline type (shortest period first), each over its own span in
 * cells of its own period, one canvas each; a click on a row opens that series (`open`, by its index
 * in the summary). Runs in the browser beside {@link reportPage} (inlined by `toString()` before
 * it), and may use nothing from its module either.
 */
export function heatmapView(data: ReportData, open: (index: number) => void): HeatmapPanelState[] {
  const COLORS: Record<string, string> = {
    h: '#2e7d32',
    c: '#cfd8dc',
    m: '#d32f2f',
    x: '#ffb300',
    '.': '#ffffff',
  };
  const iso = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 16);
  const length = (ms: number) =>
    ms % 86_400_000 === 0
      ? `${ms / 86_400_000} d`
      : ms % 3_600_000 === 0
        ? `${ms / 3_600_000} h`
        : `${Math.round(ms / 60_000)} min`;
  const indexOf = new Map(data.summary.map((s, i) => [`${s.code} ${s.klineType}`, i]));
  const make = <K extends keyof HTMLElementTagNameMap>(tag: K, className: string) =>
    Object.assign(document.createElement(tag), { className });
  const holder = document.getElementById('heatmap-panels')!;
  return data.coverage.map((coverage) => {
    const caption = make('p', 'heatmap-caption');
    const cells = make('div', 'heatmap-cells');
    const labels = make('canvas', 'heatmap-labels');
    const canvas = make('canvas', 'heatmap');
    cells.append(labels, canvas);
    holder.append(caption, cells);
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
    caption.textContent =
      `Kline type ${coverage.klineType}: ${coverage.rows.length} series × ${coverage.buckets} cells of ` +
      `${length(coverage.bucketMs)} from ${iso(coverage.fromMs)} UTC; ${missingCells} missing cells, ${haltedCells} halted.`;
    // The canvas may be drawn smaller than its pixels (max-width): map the click back to a row.
    canvas.addEventListener('click', (e) => {
      const row = coverage.rows[Math.floor((e.offsetY * canvas.height) / canvas.clientHeight / rowH)];
      const index = row === undefined ? undefined : indexOf.get(`${row.code} ${row.klineType}`);
      if (index !== undefined) open(index);
    });
    return {
      klineType: coverage.klineType,
      rows: coverage.rows.length,
      buckets: coverage.buckets,
      fromMs: coverage.fromMs,
      bucketMs: coverage.bucketMs,
      missingCells,
      haltedCells,
    };
  });
}

/**
 * The quota view: requests per minute by endpoint and the daily budget left, the plan's limits as
 * lines. Runs in the browser beside {@link reportPage} (inlined by `toString()` before it, so it
 * is the page's global `quotaView`), and may use nothing from its module either.
 */
export function quotaView(quota: ReportData['quota'], charts: Charts): QuotaViewState | undefined {
  const el = (id: string) => document.getElementById(id)!;
  const title = el('quota-title');
  if (quota === undefined) {
    title.textContent =
      'No request log beside this dataset: run backfill, sync or run with --request-log to see the quota here.';
    return undefined;
  }
  const outcomes = Object.entries(quota.outcomes)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  title.textContent = `${quota.requests} requests on plan ${quota.plan} (${outcomes})`;
  const palette = ['#1565c0', '#ef6c00', '#6a1b9a', '#00838f', '#558b2f'];
  // The price axis from 0 to `top`: a line of the plan's stays in view.
  const upTo = (top: number | undefined) => ({
    autoscaleInfoProvider: (original: () => { priceRange: { maxValue: number } } | null) => ({
      priceRange: {
        minValue: 0,
        maxValue: Math.max(top ?? 0, original()?.priceRange.maxValue ?? 0) * 1.05,
      },
    }),
  });
  // Requests per minute are scaled to the use: a plan's 1,200 a minute drawn beside a dozen
  // flattened every line into the axis. The plan's line joins them once the busiest minute reaches
  // half of it; below, the limit is marked in the title, with how much of it the peak used.
  const all = new Map<number, number>();
  for (const e of quota.perMinuteByEndpoint)
    for (const [time, n] of e.points) all.set(time, (all.get(time) ?? 0) + n);
  const peak = Math.max(0, ...all.values());
  const limit = quota.perMinute;
  const limitInView = limit !== undefined && peak >= limit / 2;
  const rateTop = Math.max(1, peak, limitInView ? limit : 0);
  el('quota-rate-title').textContent =
    `Requests per minute by endpoint: the busiest minute ${peak}` +
    (limit === undefined
      ? ''
      : `, ${Math.round((peak / limit) * 1000) / 10}% of the plan's ${limit} a minute` +
        (limitInView ? ' (its line in red)' : ' (its line is above this scale)'));
  const chart = (id: string, height: number) =>
    charts.createChart(el(id), {
      height,
      timeScale: { timeVisible: true },
      layout: { attributionLogo: false },
    });
  const rates = chart('quota-rate', 240);
  quota.perMinuteByEndpoint.forEach((e, i) => {
    const line = rates.addSeries(charts.LineSeries, {
      color: palette[i % palette.length],
      title: e.endpoint,
      lineWidth: 2,
      ...upTo(rateTop),
    });
    line.setData(e.points.map(([time, value]) => ({ time, value })));
    if (i === 0 && limitInView)
      line.createPriceLine({ price: limit, color: '#d32f2f', lineStyle: 2, title: 'plan: per minute' });
  });
  rates.timeScale().fitContent();
  const budget = chart('quota-budget', 200);
  const left = budget.addSeries(charts.LineSeries, {
    color: '#2e7d32',
    title: 'daily budget left',
    ...upTo(quota.perDay),
  });
  left.setData(quota.budgetLeft.map(([time, value]) => ({ time, value })));
  left.createPriceLine({ price: quota.perDay, color: '#d32f2f', lineStyle: 2, title: 'plan: per day' });
  left.createPriceLine({ price: 0, color: '#263238', lineStyle: 2, title: 'none left' });
  budget.timeScale().fitContent();
  return {
    requests: quota.requests,
    endpoints: quota.perMinuteByEndpoint.map((e) => e.endpoint),
    perMinute: limit,
    peakPerMinute: peak,
    rateAxisMax: rateTop * 1.05,
  };
}
