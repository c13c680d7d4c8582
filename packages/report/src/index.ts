// quoteflow report: one self-contained HTML page of a dataset (coverage, candlesticks, summary).
export { collectReportData } from './report-data.js';
export type {
  CoveragePanel,
  ReportData,
  ReportOptions,
  SeriesCandles,
  SeriesSummary,
} from './report-data.js';
export type { Coverage, CoverageRow, HeldBars } from './coverage.js';
export type { QuotaData, EndpointRate } from './quota-data.js';
export { renderReport } from './render-report.js';
