// The soak's universe: every product class of the simulator's catalogue (its 69 products) and as
// many synthetic ones as asked, K-lines of 1 minute and 1 day, depth for one code of each class that
// has a book, the NYSE's suspensions watched (with one halt in the week); and what `quoteflow plan`
// says of it and of the largest universe of the same classes that the Professional plan sustains.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultCatalogue, syntheticCatalogue } from '@quoteflow/simulator';
import { QUOTEFLOW_BIN } from '../../../../test/support/quoteflow-process.js';

const HOUR_MS = 3_600_000;

export const SOAK_KLINE_TYPES = [1, 8] as const;
/**
 * History of the first start: 8 hours of 1-minute bars (the week's first bars are all there) and
 * within the 499 closed bars a product that cannot page back reaches in its one page of 500.
 */
export const SOAK_BARS = 480;
export const SOAK_DEPTH_CODES = [
  'AAPL.US',
  '700.HK',
  '600519.SH',
  'BTCUSDT',
  'EURUSD',
  'GOLD',
  'USOIL',
  'US30',
];
export const SOAK_SUSPENSION_EXCHANGE = 'nyse';

/** The soak's codes: the default catalogue (every class), then `synthetic` more. */
export function soakCodes(synthetic: number): { code: string; productClass: string }[] {
  return [...defaultCatalogue(), ...syntheticCatalogue({ count: synthetic })].map((p) => ({
    code: p.code,
    productClass: p.productClass,
  }));
}

/** One halt of a NYSE stock on the week's Tuesday, 11:00 to 13:00 New York time (the watch reports it). */
export function soakHalts(startMs: number): { code: string; fromMs: number; toMs: number }[] {
  const tuesday = startMs + 24 * HOUR_MS;
  return [{ code: 'KO.US', fromMs: tuesday + 15 * HOUR_MS, toMs: tuesday + 17 * HOUR_MS }];
}

/** What `quoteflow plan --format json` says of the soak's universe (the parts the report uses). */
export interface SoakPlan {
  readonly fits: boolean;
  readonly refreshPeriodMs: number;
  readonly depthPeriodMs: number | undefined;
  readonly requestsPerDayByCalendar: number;
  readonly dailyShareByCalendar: number;
  /** Per market of `quoteflow plan` (US, HK, CN, FX & CFD, crypto): refresh period while it trades. */
  readonly markets: readonly { market: string; series: number; refreshWhileTradingMs: number }[];
}

/** Runs `quoteflow plan` (offline) for `codes` on the Professional plan. */
export function planOf(codes: readonly string[], depthIntervalMs: number, workDir: string): SoakPlan {
  const file = join(workDir, `codes-${codes.length}.txt`);
  writeFileSync(file, `${codes.join('\n')}\n`);
  const run = spawnSync(
    QUOTEFLOW_BIN,
    [
      'plan',
      '--plan',
      'professional',
      '--codes-file',
      file,
      '--kline-types',
      SOAK_KLINE_TYPES.join(','),
      '--bars',
      String(SOAK_BARS),
      '--depth-codes',
      SOAK_DEPTH_CODES.join(','),
      '--depth-interval-ms',
      String(depthIntervalMs),
      '--format',
      'json',
    ],
    { encoding: 'utf8', maxBuffer: 64 << 20 },
  );
  if (run.status !== 0) throw new Error(`quoteflow plan exited ${run.status}: ${run.stderr}`);
  // `quoteflow plan --format json` names its fields in snake_case (docs/reference.md).
  const { estimate } = JSON.parse(run.stdout) as {
    estimate: {
      fits: boolean;
      daily_share_by_calendar: number;
      live: {
        refresh_period_ms: number;
        depth_period_ms?: number | null;
        requests_per_day_by_calendar: number;
        markets: { market: string; series: number; refresh_while_trading_ms: number }[];
      };
    };
  };
  const { live } = estimate;
  return {
    fits: estimate.fits,
    refreshPeriodMs: live.refresh_period_ms,
    depthPeriodMs: live.depth_period_ms ?? undefined,
    requestsPerDayByCalendar: live.requests_per_day_by_calendar,
    dailyShareByCalendar: estimate.daily_share_by_calendar,
    markets: live.markets.map((m) => ({
      market: m.market,
      series: m.series,
      refreshWhileTradingMs: m.refresh_while_trading_ms,
    })),
  };
}

/**
 * The largest universe of the soak's classes (the catalogue, then synthetic products) that
 * `quoteflow plan` says the Professional plan sustains: a binary search over the synthetic count.
 */
export function largestFittingUniverse(
  depthIntervalMs: number,
  workDir: string,
): { codes: number; plan: SoakPlan } {
  const fits = (synthetic: number): SoakPlan | undefined => {
    const plan = planOf(
      soakCodes(synthetic).map((c) => c.code),
      depthIntervalMs,
      workDir,
    );
    return plan.fits ? plan : undefined;
  };
  let lo = 0; // fits
  let hi = 1 << 15; // does not
  while (fits(hi) !== undefined) hi *= 2;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (fits(mid) !== undefined) lo = mid;
    else hi = mid;
  }
  return { codes: soakCodes(lo).length, plan: fits(lo)! };
}
