// End-to-end: the other commands of the built `quoteflow` binary against the simulator (needs
// `pnpm build` first). Strict limits: every test checks that the simulator refused nothing. The
// simulators run on the real clock: the CLI is another process and cannot share a clock object, so
// market time must not run faster than the CLI's.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startSimulator,
  type Simulator,
  SIM_DAILY_LABELLINGS,
  type SimBar,
} from '../packages/simulator/src/index.js';
import { dataFilesUnder, QUOTEFLOW_BIN, runQuoteflow, startQuoteflow } from './support/quoteflow-process.js';
import { waitUntil } from './support/kafka.js';

const BIN = QUOTEFLOW_BIN;
const TOKEN = 'cli-commands-token-91be';
const quoteflow = runQuoteflow;
const files = dataFilesUnder;

let sim: Simulator;
let work: string;
const env = (plan = 'professional', token = TOKEN): Record<string, string> => ({
  QUOTEFLOW_BASE_URL: sim.url,
  QUOTEFLOW_TOKEN: token,
  QUOTEFLOW_PLAN: plan,
});
/** Tokens of the tests that run at once (the simulator keeps each token's limits apart). */
const DEPTH_TOKEN = `${TOKEN}-depth`;
const RUN_TOKEN = `${TOKEN}-run`;
/** A second suspension query at once: the plan allows one a minute per token. */
const SUSPENSIONS_TOKEN = `${TOKEN}-suspensions`;

beforeAll(async () => {
  sim = await startSimulator({
    port: 0,
    tokens: {
      [TOKEN]: 'professional',
      [`${TOKEN}-basic`]: 'basic',
      [DEPTH_TOKEN]: 'professional',
      [RUN_TOKEN]: 'professional',
      [SUSPENSIONS_TOKEN]: 'professional',
    },
    seed: 5,
  });
  work = await mkdtemp(join(tmpdir(), 'qf-cli-cmd-'));
});

afterAll(async () => {
  expect(sim.log.refused().map((e) => [e.endpoint, e.refusedBy])).toEqual([]);
  await sim.close();
  await rm(work, { recursive: true, force: true });
});

describe('quoteflow sim', () => {
  it('prints "listening on http://HOST:PORT" first, serves the demo token, and exits 0 on SIGTERM', async () => {
    const child = spawn(BIN, ['sim', '--port', '0', '--seed', '3'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const first = await new Promise<string>((res) => {
      let buf = '';
      child.stdout.on('data', (c: Buffer) => {
        buf += c.toString();
        if (buf.includes('\n')) res(buf.split('\n')[0]!);
      });
    });
    expect(first).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+$/);
    const url = first.slice('listening on '.length);
    const r = await quoteflow([
      'static-info',
      '--codes',
      'AAPL.US',
      '--format',
      'json',
      '--base-url',
      url,
      '--token',
      'demo',
      '--plan',
      'professional',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { code: string }[])[0]!.code).toBe('AAPL.US');
    const exited = new Promise<number | null>((res) => child.on('close', res));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});

describe('quoteflow plan against a measured run', () => {
  it('predicts the /kline requests and the minimum backfill time that the simulator then measures', async () => {
    const args = ['--codes', 'BTCUSDT,ETHUSDT', '--bars', '1200'];
    const plan = await quoteflow([
      'plan',
      ...args,
      '--kline-types',
      '1',
      '--plan',
      'basic',
      '--format',
      'json',
    ]);
    expect(plan.code, plan.stderr).toBe(0);
    const estimate = (
      JSON.parse(plan.stdout) as { estimate: { backfill: { requests: number; duration_ms: number } } }
    ).estimate;
    expect(estimate.backfill.requests).toBe(6);
    const since = Date.now();
    const out = join(work, 'measured');
    const r = await quoteflow(
      ['backfill', ...args, '--kline-type', '1', '--out', out, '--format', 'ndjson'],
      { ...env('basic'), QUOTEFLOW_TOKEN: `${TOKEN}-basic` },
    );
    expect(r.code, r.stderr).toBe(0);
    const klines = sim.log.filter({ endpoint: 'kline', sinceMs: since });
    expect(klines).toHaveLength(estimate.backfill.requests);
    const spanMs = klines.at(-1)!.arrivalMs - klines[0]!.arrivalMs;
    expect(spanMs).toBeGreaterThanOrEqual(estimate.backfill.duration_ms - 50); // arrival jitter
    // The upper bound catches a scheduler that idles a whole window; load on a shared machine
    // stretches each request's own time, so the bound is loose (the estimate is a minimum).
    expect(spanMs).toBeLessThan(2 * estimate.backfill.duration_ms + 5_000);
  });
});

interface YesterdayCloseRow {
  code: string;
  prev_date: string;
  prev_ts: string;
  prev_close: number;
  latest_date: string;
  latest_ts: string;
}

/**
 * The exchange's trading date of a simulated daily bar, from the simulator alone: the exchange-local
 * date of the trades the bar holds (its last session's first trade), whatever instant labels it.
 */
function tradingDateOfSimBar(market: Simulator['market'], code: string, bar: SimBar): string {
  const period = market.periodAt(code, 8, bar.endMs - 1);
  expect(period?.startMs, `${code}: the bar's period`).toBe(bar.startMs);
  const timeZone = market.product(code)!.calendar.timeZone;
  // en-CA formats a date as YYYY-MM-DD.
  return new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(period!.tradesFromMs);
}

/** A `yesterday-close` row against the simulator's own two newest daily bars of its code. */
function expectYesterdayClose(on: Simulator, row: YesterdayCloseRow, labelling = 'default'): void {
  const what = `${row.code} (${labelling})`;
  const decimals = on.market.product(row.code)!.priceDecimals;
  const [prev, latest] = on.market.bars(row.code, 8, on.marketNow(), 2) as [SimBar, SimBar];
  expect(row.prev_date, what).toBe(tradingDateOfSimBar(on.market, row.code, prev));
  expect(row.prev_ts, what).toBe(new Date(prev.startMs).toISOString());
  expect(row.prev_close, what).toBe(Number(prev.close.toFixed(decimals)));
  expect(row.latest_date, what).toBe(tradingDateOfSimBar(on.market, row.code, latest));
  expect(row.latest_ts, what).toBe(new Date(latest.startMs).toISOString());
}

describe('quoteflow plan by the calendar', () => {
  it('exits 2 naming the stock code and the 2-hour kline type it does not have, with no request', async () => {
    const before = sim.log.length;
    const r = await quoteflow(
      ['plan', '--codes', 'BTCUSDT,AAPL.US', '--kline-types', '1,6', '--bars', '10'],
      env(),
    );
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/--kline-types 6: stock and index codes have no 2-hour bars \(AAPL\.US\)/);
    expect(r.stdout).toBe('');
    expect(sim.log.length).toBe(before);
  });

  it('adds the requests a day by the calendar and those saved to the JSON, and fits Free by them', async () => {
    const r = await quoteflow(
      [
        'plan',
        '--codes',
        'AAPL.US',
        '--kline-types',
        '1',
        '--bars',
        '10',
        '--plan',
        'free',
        '--format',
        'json',
      ],
      env(),
    );
    expect(r.code, r.stderr).toBe(0);
    const { estimate } = JSON.parse(r.stdout) as {
      estimate: { fits: boolean; daily_share: number; live: Record<string, unknown> };
    };
    // The fields that were there stay; New York's 6 h 35 min of polling a day (79 five-minute
    // steps) in Free's 1,000 requests.
    expect(estimate.live).toMatchObject({
      refresh_period_ms: 23_700,
      requests_per_day: 3_646,
      requests_per_day_by_calendar: 1_000,
      requests_saved_per_day: 2_646,
    });
    expect(estimate.daily_share).toBeCloseTo(3.646, 3);
    expect(estimate.fits).toBe(true);
    const table = await quoteflow(
      ['plan', '--codes', 'AAPL.US', '--kline-types', '1', '--bars', '10', '--plan', 'free'],
      env(),
    );
    expect(table.stdout).toMatch(
      /daily budget +100\.0% live by the calendar \(1,000 of 1,000 requests on the busiest day; polling every series all day: 3,646, so 2,646 saved\)/,
    );
  });
});

describe('quoteflow one-shot queries', () => {
  it("static-info --format json prints one JSON document with every code, in the provider's snake_case names", async () => {
    const r = await quoteflow(
      ['static-info', '--codes', 'AAPL.US,700.HK,600416.SH', '--format', 'json'],
      env(),
    );
    expect(r.code, r.stderr).toBe(0);
    const infos = JSON.parse(r.stdout) as Record<string, unknown>[];
    expect(infos.map((s) => s['code'])).toEqual(['AAPL.US', '700.HK', '600416.SH']);
    // Every record has every field (null where the service gives none), named as on the wire.
    for (const info of infos)
      expect(Object.keys(info).sort()).toEqual(
        [
          'code',
          'board',
          'bps',
          'circulating_shares',
          'currency',
          'dividend_yield',
          'eps',
          'eps_ttm',
          'exchange',
          'hk_shares',
          'lot_size',
          'name_cn',
          'name_en',
          'name_hk',
          'total_shares',
        ].sort(),
      );
    expect(infos[0]!['name_en']).toEqual(expect.any(String));
  });

  it('yesterday-close gives the close of the older of the two newest daily bars, dated by its trading date', async () => {
    const r = await quoteflow(['yesterday-close', '--codes', 'BTCUSDT,AAPL.US', '--format', 'json'], env());
    expect(r.code, r.stderr).toBe(0);
    const rows = JSON.parse(r.stdout) as YesterdayCloseRow[];
    expect(rows.map((row) => row.code)).toEqual(['BTCUSDT', 'AAPL.US']);
    for (const row of rows) expectYesterdayClose(sim, row);
  });

  // One run per labelling asks for both codes: a run per code asked the same simulator again.
  it('yesterday-close names the same trading date of 700.HK and of 600416.SH under every daily bar labelling', async () => {
    const codes = ['700.HK', '600416.SH'];
    const dates = new Map<string, string[]>(codes.map((code) => [code, []]));
    const labels = new Map<string, Set<string>>(codes.map((code) => [code, new Set()]));
    for (const daily of SIM_DAILY_LABELLINGS) {
      await using other = await startSimulator({
        port: 0,
        tokens: { [TOKEN]: 'professional' },
        seed: 5,
        labelling: { daily },
      });
      const r = await quoteflow(['yesterday-close', '--codes', codes.join(','), '--format', 'json'], {
        ...env(),
        QUOTEFLOW_BASE_URL: other.url,
      });
      expect(r.code, r.stderr).toBe(0);
      const rows = JSON.parse(r.stdout) as YesterdayCloseRow[];
      expect(rows.map((row) => row.code)).toEqual(codes);
      for (const row of rows) {
        expectYesterdayClose(other, row, daily);
        dates.get(row.code)!.push(row.prev_date);
        labels.get(row.code)!.add(row.prev_ts);
      }
      expect(other.log.refused()).toEqual([]);
    }
    for (const code of codes) {
      expect(labels.get(code)!.size, `${code}: each labelling labels the bar differently`).toBe(
        SIM_DAILY_LABELLINGS.length,
      );
      expect(
        new Set(dates.get(code)).size,
        `${code}: one date under ${SIM_DAILY_LABELLINGS.join(', ')}`,
      ).toBe(1);
    }
  });

  it.each([
    ['700.HK', 'Asia/Hong_Kong'],
    ['AAPL.US', 'America/New_York'],
    ['600416.SH', 'Asia/Shanghai'],
    ['000627.SZ', 'Asia/Shanghai'],
  ])(
    'yesterday-close dates %s daily bars labelled inside the session by their sessions: Friday, then Monday (run in %s)',
    async (code, timeZone) => {
      // Monday 6 March 2023, 09:45 New York (after the Hong Kong and Shanghai closes). The Friday
      // bar is labelled 20 minutes before Friday's close: for 700.HK 2023-03-03T07:40:00Z, the
      // provider's own sample (issue 33 item 3: the rule that shifted labels by 12 hours said Saturday).
      await using other = await startSimulator({
        port: 0,
        tokens: { [TOKEN]: 'professional' },
        seed: 5,
        labelling: { daily: 'in-session' },
        clock: { now: () => Date.parse('2023-03-06T14:45:00Z') },
      });
      const r = await quoteflow(['yesterday-close', '--codes', code, '--format', 'json'], {
        ...env(),
        QUOTEFLOW_BASE_URL: other.url,
        TZ: timeZone,
      });
      expect(r.code, r.stderr).toBe(0);
      const [row] = JSON.parse(r.stdout) as YesterdayCloseRow[];
      expect([row?.prev_date, row?.latest_date], code).toEqual(['2023-03-03', '2023-03-06']);
      if (code === '700.HK') expect(row?.prev_ts).toBe('2023-03-03T07:40:00.000Z');
      expectYesterdayClose(other, row!, 'in-session');
      // The calendar and the service agree: no warning of a disagreement.
      expect(r.stderr).not.toContain('calendar has no trading');
      expect(other.log.refused()).toEqual([]);
    },
  );

  it.each(SIM_DAILY_LABELLINGS)(
    'yesterday-close after a day the calendar calls a holiday and the service traded (%s labels): two dates, one warning',
    async (daily) => {
      // The Friday evening after Thanksgiving 2026, which this service traded.
      await using other = await startSimulator({
        port: 0,
        tokens: { [TOKEN]: 'professional' },
        seed: 5,
        labelling: { daily },
        clock: { now: () => Date.parse('2026-11-27T23:00:00Z') },
        holidayTrading: { us: ['2026-11-26'] },
      });
      const r = await quoteflow(['yesterday-close', '--codes', 'AAPL.US,MSFT.US', '--format', 'json'], {
        ...env(),
        QUOTEFLOW_BASE_URL: other.url,
        QUOTEFLOW_LOG_FORMAT: 'json',
      });
      expect(r.code, r.stderr).toBe(0);
      for (const row of JSON.parse(r.stdout) as YesterdayCloseRow[])
        expect([row.prev_date, row.latest_date]).toEqual(['2026-11-26', '2026-11-27']);
      // Once for the exchange and the date, not once per code.
      expect(r.stderr.split('2026-11-26 where the').length - 1).toBe(1);
    },
  );

  it("suspensions --format ndjson prints one record per line, latest first, in the dataset's snake_case columns", async () => {
    const r = await quoteflow(['suspensions', '--exchange', 'nyse', '--format', 'ndjson'], env());
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, string | null>);
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.every((l) => l['exchange'] === 'nyse')).toBe(true);
    expect(Date.parse(lines[0]!['publish_date']!)).toBeGreaterThanOrEqual(
      Date.parse(lines.at(-1)!['publish_date']!),
    );
    // The same keys as the suspension dataset and the P.suspension Kafka value (raw fields as raw_*).
    expect(Object.keys(lines[0]!)).toEqual(
      expect.arrayContaining([
        'symbol',
        'symbol_name',
        'halt_at',
        'resume_at',
        'halt_reason',
        'raw_publish_date',
      ]),
    );
    const json = await quoteflow(
      ['suspensions', '--exchange', 'nyse', '--format', 'json'],
      env('professional', SUSPENSIONS_TOKEN),
    );
    expect(JSON.parse(json.stdout)).toEqual(lines);
  });
});

// At once: their --duration runs overlap instead of adding up. Each on a token of its own (the
// demo runs offline, on its own simulator), so none takes another's quota.
describe.concurrent('quoteflow depth, run and demo', () => {
  it('depth drops repeated seq and writes the depth dataset', async ({ expect }) => {
    const out = join(work, 'depth');
    const r = await quoteflow(
      ['depth', '--codes', 'BTCUSDT,ETHUSDT', '--out', out, '--format', 'ndjson', '--duration', '3'],
      env('professional', DEPTH_TOKEN),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    const rows: { code: string; seq: string }[] = [];
    for (const f of await files(join(out, 'depth')))
      for (const l of (await readFile(f, 'utf8')).trim().split('\n'))
        if (l !== '') rows.push(JSON.parse(l) as { code: string; seq: string });
    expect(rows.length).toBeGreaterThan(0);
    expect(new Set(rows.map((t) => `${t.code}#${t.seq}`)).size).toBe(rows.length);
    // inspect summarizes a depth-only dataset: per code its ticks and seq range, as the rows say.
    const inspect = await quoteflow(['inspect', '--out', out, '--format', 'json'], {});
    expect(inspect.code, inspect.stderr).toBe(0);
    const { depth } = (
      JSON.parse(inspect.stdout) as {
        datasets: {
          depth: { codes: { code: string; ticks: number; first_seq: string; last_seq: string }[] };
        };
      }
    ).datasets;
    const seqsOf = (code: string) =>
      rows
        .filter((t) => t.code === code)
        .map((t) => BigInt(t.seq))
        .sort((a, b) => (a < b ? -1 : 1));
    expect(depth.codes).toEqual(
      ['BTCUSDT', 'ETHUSDT'].map((code) =>
        expect.objectContaining({
          code,
          ticks: seqsOf(code).length,
          first_seq: String(seqsOf(code)[0]),
          last_seq: String(seqsOf(code).at(-1)),
          repeated_seq: 0,
        }),
      ),
    );
    const table = await quoteflow(['inspect', '--out', out], {});
    expect(table.stdout).toMatch(/^depth:\n.*code +ticks/m);
    expect(table.stdout).toMatch(/^BTCUSDT +\d+ /m);
  });

  it('run validates the file first (exit 2 naming line and field) and then runs its pipelines', async ({
    expect,
  }) => {
    const dir = join(work, 'run');
    const file = join(work, 'pipeline.yaml');
    const yaml = (types: string) => `version: 1
duration: 4
pipelines:
  - source:
      kline: { codes: [BTCUSDT], klineTypes: ${types}, bars: 10 }
    sinks:
      files: { out: ${dir}, format: ndjson }
`;
    await writeFile(file, yaml('[1, 0]'));
    const bad = await quoteflow(['run', file], env('professional', RUN_TOKEN));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/pipeline\.yaml:5: pipelines\[0\]\.source\.kline\.klineTypes\[1\]/);
    expect(existsSync(dir)).toBe(false);
    await writeFile(file, yaml('[1]'));
    const good = await quoteflow(['run', file], env('professional', RUN_TOKEN));
    expect(good.code, good.stderr).toBe(0);
    expect((await files(join(dir, 'kline'))).length).toBeGreaterThan(0);
  });

  it('demo syncs offline into Parquet, no bar in the future, and a run right after shows the dataset and what it added', async ({
    expect,
  }) => {
    const first = await demoRun();
    expect(first.code, first.stderr).toBe(0);
    // The status line's lag is the newest bar's age on the demo's fast clock: a minute bar of a 24/7
    // market is younger than a minute of it (5 for the 5-minute series a cycle may poll alone).
    const lags = first.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg?: string; newestBarAge?: string })
      .filter((l) => l.msg === 'status' && l.newestBarAge !== undefined && l.newestBarAge !== '-')
      .map((l) => durationMs(l.newestBarAge!));
    expect(lags.length, first.stderr).toBeGreaterThan(0);
    for (const lag of lags) {
      expect(lag).toBeGreaterThan(0);
      expect(lag).toBeLessThan(5 * 60_000);
    }
    expect(first.stdout).toMatch(/closed bars of 18 series/);
    // Warnings go to stderr (JSON lines without a terminal): weekends, holidays, lunch breaks and
    // the forex weekly pause in the demo's history are no gap, so none is reported.
    expect(first.stderr).not.toContain('missing-bars');
    expect(first.stdout).toMatch(/BTCUSDT\s+crypto\s+1\s+\d+/);
    expect(first.stdout).toContain(`duckdb -c "SELECT`);
    const written = await files(join(work, 'demo-out', 'kline'));
    expect(written.length, first.stdout).toBeGreaterThan(0);
    expect(written.filter((f) => !f.endsWith('.parquet'))).toEqual([]);
    // The demo's token is `demo`, a common word: the query names the real directory, not `***`.
    expect(first.stdout).toContain(
      `read_parquet('${join(work, 'demo-out')}/kline/kline_type=*/**/*.parquet'`,
    );
    expect(first.stdout).not.toContain('***');
    // Its market ends at the real now: every bar it holds had closed by the time the run ended.
    const after = await demoSeries(first.endedAtMs);
    const btc = after.find((s) => s.code === 'BTCUSDT' && s.kline_type === 1)!;
    expect(btc.rows).toBeGreaterThan(0);
    // A run right after: the dataset as it stands and what this run added, not "0 closed bars" and dashes.
    const second = await demoRun(true);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(
      /^quoteflow demo: \d+ closed bars of 18 series in \d+ Parquet files under .*, \d+ of them new/m,
    );
    const row = new RegExp(
      `^BTCUSDT\\s+crypto\\s+1\\s+(\\d+)\\s+(\\d+)\\s+(\\S+ \\S+)\\s+(\\S+ \\S+)`,
      'm',
    ).exec(second.stdout);
    expect(row, second.stdout).not.toBeNull();
    expect(Number(row![1])).toBeGreaterThanOrEqual(btc.rows);
    // The dataset's first bar: the same, or older when this run's window reached further back.
    expect(Date.parse(`${row![3]!.replace(' ', 'T')}:00Z`)).toBeLessThanOrEqual(Date.parse(btc.first));
    await demoSeries(second.endedAtMs);
  });
});

/**
 * `quoteflow demo` into `work/demo-out`, for 15 s (at 30x: seven and a half market minutes, which on
 * a clock that started at the real now would end that far in the future), or with `untilLive` until
 * a status line reports a live lag (the backfill done, polling begun) and then stopped as a user
 * would: how long that takes depends on the machine, not on a fixed duration.
 */
async function demoRun(
  untilLive = false,
): Promise<{ code: number | null; stdout: string; stderr: string; endedAtMs: number }> {
  const args = ['demo', '--out', 'demo-out', ...(untilLive ? [] : ['--duration', '15'])];
  const run = startQuoteflow(args, { QUOTEFLOW_STATUS_INTERVAL_S: '0.5' }, work);
  if (untilLive) {
    let ended = false;
    void run.done.then(() => (ended = true));
    await waitUntil(
      () => ended || /^(?=.*"msg":"status")(?=.*"newestBarAge":"[^-"])/m.test(run.stderr()),
      'a status line with the live lag',
      60_000,
    );
    run.child.kill('SIGTERM');
  }
  const r = await run.done;
  return { ...r, endedAtMs: Date.now() };
}

/** The demo dataset's series (`inspect --format json`), each checked to have closed by `endedAtMs`. */
async function demoSeries(
  endedAtMs: number,
): Promise<{ code: string; kline_type: number; rows: number; first: string; last: string }[]> {
  const inspect = await runQuoteflow(['inspect', '--out', join(work, 'demo-out'), '--format', 'json']);
  expect(inspect.code, inspect.stderr).toBe(0);
  const { series } = (
    JSON.parse(inspect.stdout) as {
      datasets: {
        kline: { series: { code: string; kline_type: number; rows: number; first: string; last: string }[] };
      };
    }
  ).datasets.kline;
  const periodMs: Record<number, number> = { 1: 60_000, 5: 3_600_000 };
  for (const s of series)
    expect(
      Date.parse(s.last) + periodMs[s.kline_type]!,
      `${s.code}:${s.kline_type} ends by the run's end`,
    ).toBeLessThanOrEqual(endedAtMs);
  return series;
}

/** `formatDuration`'s text back in ms: `12.5s`, `1m 5s`, `2h 3m`. */
function durationMs(text: string): number {
  const units: Record<string, number> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1_000 };
  return text
    .split(' ')
    .map((part) => Number(part.slice(0, -1)) * units[part.slice(-1)]!)
    .reduce((a, b) => a + b, 0);
}
