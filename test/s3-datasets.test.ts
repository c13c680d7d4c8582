/**
 * `--out s3://bucket/prefix` as a user runs it, against the run's S3Proxy (test/support/s3.ts, a
 * real S3-compatible server that enforces conditional writes) and the simulator: backfill and sync
 * commit Delta versions that delta-rs, Polars' scan_delta, Spark (S3A) and DuckDB's delta extension read back exactly, time
 * travel included; inspect reads the bucket; compaction commits new files and `remove` in one
 * version and the vacuum deletes the removed files only after the retention; a server that does
 * not enforce `If-None-Match` is refused (exit 1) before any request to the service; a bad URL is
 * exit 2; the AWS SDK is not loaded by a local run; no secret is printed.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, it, type ExpectStatic } from 'vitest';
import { startSimulator, type SimBar, type Simulator } from '../packages/simulator/src/index.js';
import { DELTA_READERS } from './support/delta-tables.js';
import { ensurePython, readDatasets, type ReadBack } from './support/python.js';
import { runQuoteflow } from './support/quoteflow-process.js';
import { freshBucket, s3Env, startNonEnforcingProxy, type TestBucket } from './support/s3.js';

// The tests run at once, each on a token of its own: the simulator keeps each token's limits and
// requests apart (the refused runs check that theirs sent none).
const TOKENS = ['sync', 'compact', 'run', 'non-enforcing', 'bad-url'].map((t) => `tok-s3-datasets-${t}`);
const [SYNC, COMPACT, RUN, NON_ENFORCING, BAD_URL] = TOKENS as [string, string, string, string, string];
let sim: Simulator;
let work: string;

const env = (
  bucket: TestBucket,
  token: string,
  extra: Record<string, string> = {},
): Record<string, string> => ({
  QUOTEFLOW_BASE_URL: sim.url,
  QUOTEFLOW_TOKEN: token,
  QUOTEFLOW_PLAN: 'basic',
  ...bucket.env(),
  ...extra,
});

beforeAll(async () => {
  ensurePython();
  sim = await startSimulator({
    port: 0,
    tokens: Object.fromEntries(TOKENS.map((t) => [t, 'professional'])),
    seed: 23,
  });
  work = await mkdtemp(join(tmpdir(), 'qf-s3-datasets-'));
}, 600_000);
afterAll(async () => {
  await sim.close();
  await rm(work, { recursive: true, force: true });
});

const backfill = (out: string, bars: number): string[] => [
  ...'backfill --codes BTCUSDT,ETHUSDT --kline-type 1 --out'.split(' '),
  out,
  '--bars',
  String(bars),
];

/** The requests the simulator saw with `token` (its log names a token by its hash's first 6 hex). */
const requestsWith = (token: string): number => {
  const label = `professional#${createHash('sha256').update(token).digest('hex').slice(0, 6)}`;
  return sim.log.count((e) => e.token === label);
};

/** Each reader's rows as `code ts close`, checked: no (code, ts) twice, every close the market's. */
function checkedRows(back: ReadBack, expect: ExpectStatic): string[] {
  const seen = new Set<string>();
  const rows: string[] = [];
  // The market's closed bars by code and start, once per code (3,000 bars are tens of ms to make).
  const closed = new Map<string, Map<number, SimBar>>();
  const closedOf = (code: string): Map<number, SimBar> => {
    let bars = closed.get(code);
    if (bars === undefined) {
      bars = new Map(
        sim.market
          .bars(code, 1, sim.marketNow(), 3_000)
          .filter((b) => !b.forming)
          .map((b) => [b.startMs, b]),
      );
      closed.set(code, bars);
    }
    return bars;
  };
  for (const r of back.rows) {
    const code = String(r.code);
    const ts = Number(r.ts);
    const key = `${code} ${ts}`;
    expect(seen.has(key), `${back.reader}: ${key} twice`).toBe(false);
    seen.add(key);
    const market = closedOf(code).get(ts);
    expect(market, `${back.reader}: ${key} is a bar of the market`).toBeDefined();
    const decimals = sim.market.product(code)!.priceDecimals;
    expect(Number(r.close), `${back.reader}: ${key} close`).toBe(Number(market!.close.toFixed(decimals)));
    rows.push(`${key} ${String(r.close)}`);
  }
  return rows.sort();
}

/** Delta's operation of each version of the table under `prefix` (`WRITE`, `CLAIM`, `OPTIMIZE`). */
async function operationsOf(bucket: TestBucket, prefix: string): Promise<string[]> {
  const commits = (await bucket.keys(`${prefix}/_delta_log/`))
    .filter((k) => /\/\d{20}\.json$/.test(k))
    .sort();
  const out: string[] = [];
  for (const key of commits) {
    const first = (await bucket.read(key)).toString().split('\n', 1)[0]!;
    out.push((JSON.parse(first) as { commitInfo: { operation: string } }).commitInfo.operation);
  }
  return out;
}

/** Reads `table` with every Delta reader at the newest version and at `versions`; rows per request. */
async function readAll(
  bucket: TestBucket,
  table: string,
  versions: number[],
  expect: ExpectStatic,
): Promise<string[][]> {
  const requests = [undefined, ...versions].flatMap((version) =>
    DELTA_READERS.map((reader) => ({
      reader,
      path: table,
      s3: bucket.server,
      ...(version === undefined ? {} : { version }),
    })),
  );
  return (await readDatasets(requests)).map((back) => checkedRows(back, expect));
}

// At once: each test's CLI runs and reads wait on their own; one after another they took 135 s.
describe.concurrent('quoteflow with --out s3://', () => {
  it('backfill then sync commit versions that delta-rs, Polars, Spark and DuckDB read exactly, time travel included; inspect reads the bucket', async ({
    expect,
  }) => {
    const bucket = await freshBucket('cli-s3');
    const out = bucket.url('research/bars');
    const first = await runQuoteflow(backfill(out, 40), env(bucket, SYNC));
    expect(first.code, first.stderr).toBe(0);
    // Long enough for the history of both codes on a loaded machine (a CI run at 3 s stopped after
    // one code's history); a minute may close meanwhile, so one more bar per code at most.
    const second = await runQuoteflow(
      [...'sync --codes BTCUSDT,ETHUSDT --kline-types 1 --bars 90 --duration 12 --out'.split(' '), out],
      env(bucket, SYNC),
    );
    expect(second.code, second.stderr).toBe(0);
    for (const r of [first, second]) {
      expect(r.stdout + r.stderr).not.toContain(bucket.server.secretAccessKey);
      expect(r.stdout + r.stderr).not.toContain(bucket.server.accessKeyId);
    }
    const keys = await bucket.keys('research/bars/kline/');
    expect(keys).toContain('research/bars/kline/_delta_log/00000000000000000000.json');
    expect(keys).toContain('research/bars/kline/_delta_log/00000000000000000001.json');
    // Nothing beside the tables: no staging, no local folder named "s3:", no probe left.
    expect((await bucket.keys()).filter((k) => !k.startsWith('research/bars/kline/'))).toEqual([]);

    // The first backfill's data: the version of its checkpoint (its claim and release around it).
    const firstData = (await operationsOf(bucket, 'research/bars/kline')).indexOf('WRITE');
    expect(firstData).toBeGreaterThan(0);
    const all = await readAll(bucket, `${out}/kline`, [firstData], expect);
    const newest = all.slice(0, DELTA_READERS.length);
    const v0 = all.slice(DELTA_READERS.length);
    for (const rows of newest) expect(rows).toEqual(newest[0]);
    for (const rows of v0) expect(rows).toEqual(v0[0]);
    expect(v0[0]).toHaveLength(80);
    // 90 per code, plus a bar that closed during the sync's few seconds.
    expect(newest[0]!.length).toBeGreaterThanOrEqual(180);
    expect(newest[0]!.length).toBeLessThanOrEqual(184);
    for (const row of v0[0]!) expect(newest[0]).toContain(row);

    const inspect = await runQuoteflow(['inspect', '--out', out, '--format', 'json'], env(bucket, SYNC));
    expect(inspect.code, inspect.stderr).toBe(0);
    const series = (
      JSON.parse(inspect.stdout) as {
        datasets: { kline: { series: { code: string; rows: number; duplicates: number }[] } };
      }
    ).datasets.kline.series;
    expect(series.map((s) => s.code).sort()).toEqual(['BTCUSDT', 'ETHUSDT']);
    expect(series.reduce((n, s) => n + s.rows, 0)).toBe(newest[0]!.length);
    expect(series.every((s) => s.duplicates === 0)).toBe(true);
  }, 600_000);

  it('compact commits new files and remove in one version; the vacuum deletes the removed files only after the retention', async ({
    expect,
  }) => {
    const bucket = await freshBucket('compact-s3');
    const out = bucket.url('bars');
    for (const bars of [20, 40, 60]) {
      const r = await runQuoteflow(backfill(out, bars), env(bucket, COMPACT));
      expect(r.code, r.stderr).toBe(0);
    }
    const parquet = async (): Promise<string[]> =>
      (await bucket.keys('bars/kline/')).filter((k) => k.endsWith('.parquet'));
    const before = await parquet();
    expect(before.length).toBeGreaterThanOrEqual(3);

    const compact = await runQuoteflow(
      ['compact', '--out', out, '--vacuum-retention', '168h', '--format', 'json'],
      env(bucket, COMPACT),
    );
    expect(compact.code, compact.stderr).toBe(0);
    const done = JSON.parse(compact.stdout) as {
      partitions: { filesBefore: number; filesAfter: number; rows: number }[];
      vacuum: { dataset: string; deleted: string[]; retained: number }[];
    };
    // 60 bars of each code, and one more where a minute closed between the three backfills (the
    // 60 newest then reach one bar past what the 20 and 40 held): the rows the table held before.
    const compacted = done.partitions.reduce((n, p) => n + p.rows, 0);
    expect(compacted).toBeGreaterThanOrEqual(120);
    expect(compacted).toBeLessThanOrEqual(122);
    // Within the retention the removed files stay: time travel to the version before works.
    expect(done.vacuum.find((v) => v.dataset === 'kline')).toEqual(
      expect.objectContaining({ deleted: [], retained: before.length }),
    );
    const compactedVersion = (await operationsOf(bucket, 'bars/kline')).indexOf('OPTIMIZE');
    expect(compactedVersion).toBeGreaterThan(0);
    const log = (
      await bucket.read(`bars/kline/_delta_log/${String(compactedVersion).padStart(20, '0')}.json`)
    ).toString();
    const actions = log
      .trim()
      .split('\n')
      .map((l) => Object.keys(JSON.parse(l) as object)[0]);
    expect(actions.filter((a) => a === 'remove')).toHaveLength(before.length);
    expect(actions.filter((a) => a === 'add').length).toBeGreaterThanOrEqual(1);
    const all = await readAll(bucket, `${out}/kline`, [compactedVersion - 1], expect);
    for (const rows of all) expect(rows).toEqual(all[0]);
    expect(all[0]).toHaveLength(compacted);

    const vacuum = await runQuoteflow(
      ['compact', '--out', out, '--vacuum-retention', '0s', '--format', 'json'],
      env(bucket, COMPACT),
    );
    expect(vacuum.code, vacuum.stderr).toBe(0);
    const v = (JSON.parse(vacuum.stdout) as { vacuum: { dataset: string; deleted: string[] }[] }).vacuum;
    expect(
      v
        .find((x) => x.dataset === 'kline')!
        .deleted.map((k) => `bars/${k}`)
        .sort(),
    ).toEqual(before);
    const after = await parquet();
    expect(after.filter((k) => before.includes(k))).toEqual([]);
    const newest = await readAll(bucket, `${out}/kline`, [], expect);
    for (const rows of newest) expect(rows).toEqual(all[0]);
  }, 600_000);

  it('run (a pipeline file with kline and depth), suspensions --watch and report on the same s3:// root', async ({
    expect,
  }) => {
    const bucket = await freshBucket('run-s3');
    const out = bucket.url('all');
    const yaml = join(work, 'pipeline.yaml');
    await writeFile(
      yaml,
      [
        'version: 1',
        'duration: 12',
        'pipelines:',
        '  - name: bars',
        '    source: { kline: { codes: [BTCUSDT], klineTypes: [1], bars: 7 } }',
        `    sinks: { files: { out: "${out}" } }`,
        '  - name: book',
        '    source: { depth: { codes: [BTCUSDT] } }',
        `    sinks: { files: { out: "${out}" } }`,
        '',
      ].join('\n'),
    );
    const run = await runQuoteflow(['run', yaml], env(bucket, RUN));
    expect(run.code, run.stderr).toBe(0);
    const watch = await runQuoteflow(
      ['suspensions', '--watch', '--exchange', 'nyse', '--out', out, '--duration', '3'],
      env(bucket, RUN),
    );
    expect(watch.code, watch.stderr).toBe(0);
    const [kline, depth, suspension] = await readDatasets(
      ['kline', 'depth', 'suspension'].map((t) => ({
        reader: 'deltalake' as const,
        path: `${out}/${t}`,
        s3: bucket.server,
      })),
    );
    // The 7 newest closed bars, and the one that closed during the 12 s run if a minute ended then.
    const bars = checkedRows(kline!, expect).length;
    expect(bars).toBeGreaterThanOrEqual(7);
    expect(bars).toBeLessThanOrEqual(8);
    expect(depth!.rows.length).toBeGreaterThan(0);
    const seqs = depth!.rows.map((r) => String(r.seq));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(suspension!.rows.length).toBeGreaterThan(0);
    const html = join(work, 'report.html');
    const report = await runQuoteflow(['report', '--out', out, '--html', html], env(bucket, RUN));
    expect(report.code, report.stderr).toBe(0);
    expect(report.stdout).toContain('1 series');
    expect(await readFile(html, 'utf8')).toContain('BTCUSDT');
  }, 300_000);

  it('a server that does not enforce If-None-Match is refused, exit 1 naming endpoint, bucket and If-None-Match, before any request to the service', async ({
    expect,
  }) => {
    const bucket = await freshBucket('non-enforcing');
    const proxy = await startNonEnforcingProxy(bucket.server);
    try {
      const before = requestsWith(NON_ENFORCING);
      const proxied = { ...s3Env(bucket.server, proxy.url) };
      for (const args of [
        backfill(bucket.url('ds'), 10),
        [...'sync --codes BTCUSDT --kline-types 1 --bars 5 --duration 5 --out'.split(' '), bucket.url('ds')],
        ['depth', '--codes', 'BTCUSDT', '--out', bucket.url('ds'), '--duration', '5'],
      ]) {
        const r = await runQuoteflow(args, env(bucket, NON_ENFORCING, proxied));
        expect(r.code, `${args[0]!}: ${r.stderr}`).toBe(1);
        expect(r.stderr).toContain('If-None-Match');
        expect(r.stderr).toContain(bucket.name);
        expect(r.stderr).toContain(proxy.url);
        expect(r.stderr).not.toContain(bucket.server.secretAccessKey);
      }
      expect(proxy.stripped).toBeGreaterThan(0);
      expect(requestsWith(NON_ENFORCING)).toBe(before);
      expect(await bucket.keys('ds/')).toEqual([]);
    } finally {
      await proxy.stop();
    }
  }, 300_000);

  it('a bad s3:// URL is exit 2 naming --out; a local run does not load the AWS SDK, an s3:// one does', async ({
    expect,
  }) => {
    const bucket = await freshBucket('sdk-load');
    const before = requestsWith(BAD_URL);
    for (const out of ['s3://', 's3:///prefix', 's3://UPPER_case/x', 's3://ab']) {
      const r = await runQuoteflow(backfill(out, 5), env(bucket, BAD_URL));
      expect(r.code, out).toBe(2);
      expect(r.stderr).toContain(`--out "${out}"`);
    }
    expect(requestsWith(BAD_URL)).toBe(before);

    // A module hook that says so on stderr when anything of @aws-sdk/ is resolved.
    const hook = join(work, 'aws-sdk-hook.mjs');
    await writeFile(
      hook,
      [
        "import { registerHooks } from 'node:module';",
        'registerHooks({',
        '  resolve(specifier, context, next) {',
        "    if (specifier.startsWith('@aws-sdk/')) process.stderr.write(`[aws-sdk resolved: ${specifier}]\\n`);",
        '    return next(specifier, context);',
        '  },',
        '});',
      ].join('\n'),
    );
    const hooked = env(bucket, BAD_URL, { NODE_OPTIONS: `--import=${pathToFileURL(hook).href}` });
    const local = await runQuoteflow(backfill(join(work, 'local'), 10), hooked);
    expect(local.code, local.stderr).toBe(0);
    expect(local.stderr).not.toContain('[aws-sdk resolved');
    const remote = await runQuoteflow(backfill(bucket.url('x'), 10), hooked);
    expect(remote.code, remote.stderr).toBe(0);
    expect(remote.stderr).toContain('[aws-sdk resolved: @aws-sdk/client-s3]');
    // The count above sees this token's requests: the good runs' are there.
    expect(requestsWith(BAD_URL)).toBeGreaterThan(before);
  }, 300_000);
});
