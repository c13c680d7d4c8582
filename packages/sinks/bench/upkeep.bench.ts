// A day of 1-minute bars of 1,000 series as a running sync leaves its table with the default table
// upkeep (no manual command): `DatasetSink` with its defaults, a checkpoint every 30 s of the
// sync's clock (each with the bars of the half of the series read in those 30 s: 2,880 versions),
// upkeep running in the background between checkpoints as it does at real speed (each checkpoint
// waits until upkeep is idle, as 30 s of real time would let it be), and its log as the hourly
// rounds of log retention leave it by the day's end (`ageAsRunningUpkeep`). Once on the local disk, once
// into S3 (a real S3Proxy, test/support/s3.ts: started here). Each table is then read by delta-rs,
// Polars' scan_delta and DuckDB's delta extension (a group-by: code, count, max close; the table
// opened anew each time, best of 5) against the same rows as one Parquet file on the same storage
// (a local file; one object on the same S3 server), read by pyarrow (for delta-rs, which hands
// out pyarrow tables), Polars' scan_parquet and DuckDB's read_parquet, and against the readers'
// floor on that storage: the same rows as the simplest table delta-rs itself leaves (one file, one
// JSON commit, partitioned the same: scripts/python/write_reference_delta.py). Then the file count over a
// simulated week (a sync of BENCH_UPKEEP_WEEK_SERIES series, a checkpoint a minute of its clock,
// from a Monday across a month's end), per day: the most files any partition held, and the log.
// Run: `pnpm bench upkeep` (needs scripts/python/setup.sh and scripts/s3proxy/setup.sh).
// BENCH_UPKEEP_SERIES (1000), BENCH_UPKEEP_MINUTES (1440), BENCH_UPKEEP_S3=0 (skip S3),
// BENCH_UPKEEP_WEEK_SERIES (100; 0 skips the week) set the size; BENCH_UPKEEP_KEEP=1 leaves the tables
// in place (their directory printed) to read them again.
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, rm, stat, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '@quoteflow/core';
import {
  DatasetLog,
  DatasetSink,
  DatasetWriter,
  TABLE_UPKEEP_DEFAULTS,
  TableUpkeep,
  type UpkeepEvent,
} from '@quoteflow/sinks';
import { openStore } from '@quoteflow/sinks/internal';
import { BENCH_DAY_START, benchBar, benchUpdate } from './bench-bars.js';
import { readDeltaTables, timingCell, type DeltaReadTiming } from './bench-delta-read.js';
import { freshBucket, startS3Proxy, type TestBucket } from '../../../test/support/s3.js';

const series = Number(process.env['BENCH_UPKEEP_SERIES'] ?? 1000);
const minutes = Number(process.env['BENCH_UPKEEP_MINUTES'] ?? 1440);
const withS3 = process.env['BENCH_UPKEEP_S3'] !== '0';
const weekSeries = Number(process.env['BENCH_UPKEEP_WEEK_SERIES'] ?? 100);
const keep = process.env['BENCH_UPKEEP_KEEP'] === '1';

const secs = (t0: number): string => ((performance.now() - t0) / 1000).toFixed(1);

interface SyncDay {
  readonly version: number;
  readonly files: number;
  readonly compactions: number;
  readonly checkpoints: number;
  /** Files in `_delta_log/` at the day's end, and those its last round of log retention deleted. */
  readonly logFiles: number;
  readonly expired: number;
}

/**
 * A sync's day into `dir`: every 30 s of its clock a checkpoint with the bars of half the series
 * (those read in those 30 s), each bar in the checkpoint after its minute closed; upkeep idle
 * before the next.
 */
async function syncDay(dir: string): Promise<SyncDay> {
  const clock = new ManualClock(BENCH_DAY_START);
  const events: UpkeepEvent[] = [];
  const sink = await DatasetSink.open({ dir, clock, onUpkeep: (e) => events.push(e) });
  const half = Math.ceil(series / 2);
  const realStart = Date.now();
  for (let m = 0; m < minutes; m++)
    for (const part of [0, 1]) {
      await clock.advance(30_000);
      for (let s = part * half; s < Math.min(series, (part + 1) * half); s++) sink.write(benchUpdate(s, m));
      await sink.checkpoint();
      await sink.upkeepIdle();
    }
  await sink.close();
  const failed = events.find((e) => e.type === 'upkeep-failed');
  if (failed !== undefined) throw new Error(`upkeep failed: ${JSON.stringify(failed)}`);
  const aged = await ageAsRunningUpkeep(dir, BENCH_DAY_START, clock.now(), {
    start: realStart,
    end: Date.now(),
  });
  const opened = await openStore(dir);
  try {
    const log = await DatasetLog.open(
      opened.root,
      'kline',
      opened.store === undefined ? {} : { store: opened.store },
    );
    return {
      version: log.version,
      files: log.files.size,
      compactions: events.filter((e) => e.type === 'compacted').length,
      checkpoints: events.filter((e) => e.type === 'checkpointed').length,
      ...aged,
    };
  } finally {
    await opened.close();
  }
}

/**
 * The table's log as the running upkeep's hourly rounds leave it by `endMs`: the bench writes its
 * simulated time in minutes of real time, so no log version is old enough to expire, nor any
 * superseded checkpoint to go, by the wall clock. Locally each log file is stamped with the
 * simulated time of its version (versions come at a steady pace from `startMs`) and one more round
 * runs at `endMs` on that clock: what a real day or week leaves (an hour of log by default). On S3
 * the stamps are the server's, made between `real.start` and `real.end` (real time): the round runs on a wall
 * clock an hour (the default log retention) past the real moment of the simulated day's last hour,
 * so the log before it goes and the last hour's stays, as a real day leaves it.
 */
async function ageAsRunningUpkeep(
  table: string,
  startMs: number,
  endMs: number,
  real?: { readonly start: number; readonly end: number },
): Promise<{ logFiles: number; expired: number }> {
  const retention = TABLE_UPKEEP_DEFAULTS.logRetentionMs;
  const [from, to] = real === undefined ? [Date.now(), Date.now()] : [real.start, real.end];
  const lastHourReal = from + (to - from) * Math.max(0, 1 - retention / (endMs - startMs));
  const opened = await openStore(table);
  try {
    const events: UpkeepEvent[] = [];
    const local = opened.store === undefined;
    if (local) {
      const logDir = join(table, 'kline', '_delta_log');
      const names = await readdir(logDir);
      const versions = names.map((n) => Number(/^(\d{20})\./.exec(n)?.[1] ?? NaN));
      const newest = Math.max(...versions.filter((v) => Number.isFinite(v)));
      for (const [i, name] of names.entries()) {
        const v = versions[i]!;
        if (!Number.isFinite(v)) continue;
        const at = new Date(startMs + ((endMs - startMs) * (v + 1)) / (newest + 1));
        await utimes(join(logDir, name), at, at);
      }
    }
    const upkeep = await TableUpkeep.open({
      root: opened.root,
      dataset: 'kline',
      ...(opened.store === undefined ? {} : { store: opened.store }),
      clock: new ManualClock(endMs),
      wall: new ManualClock(local ? endMs : lastHourReal + retention),
      onEvent: (e) => events.push(e),
    });
    upkeep.nudge();
    await upkeep.idle();
    await upkeep.close();
    const failed = events.find((e) => e.type === 'upkeep-failed');
    if (failed !== undefined) throw new Error(`upkeep failed: ${JSON.stringify(failed)}`);
    const logKey = 'kline/_delta_log/';
    const logFiles = local
      ? (await readdir(join(table, logKey))).length
      : (await opened.store!.list(logKey, undefined, true)).length;
    const expired = events.reduce((n, e) => n + (e.type === 'log-expired' ? e.deleted : 0), 0);
    return { logFiles, expired };
  } finally {
    await opened.close();
  }
}

/** The same rows as one Parquet file under `dir`; its path. */
async function oneFile(dir: string): Promise<string> {
  const one = new DatasetWriter({ dir, maxRowsPerFile: 10_000_000, maxBytesPerFile: 2 ** 31 - 1 });
  for (let m = 0; m < minutes; m++) for (let s = 0; s < series; s++) one.append(benchBar(s, m));
  await one.close();
  const file = (await readdir(dir, { recursive: true })).find((f) => f.endsWith('.parquet'));
  return join(dir, file!);
}

const repoRoot = new URL('../../..', import.meta.url).pathname;

/** The rows of `file` as a one-file Delta table written by delta-rs at `table` (the readers' floor). */
function referenceTable(file: string, table: string): void {
  execFileSync(join(repoRoot, '.venv', 'bin', 'python'), [
    join(repoRoot, 'scripts/python/write_reference_delta.py'),
    file,
    table,
  ]);
}

/** Per simulated day of a week of 1-minute checkpoints: the most files a partition held, and the log. */
async function week(dir: string): Promise<string[]> {
  // Monday 2026-09-28 00:00 UTC to Monday 2026-10-05: September closes on the Thursday.
  const start = Date.UTC(2026, 8, 28);
  const clock = new ManualClock(start);
  const sink = await DatasetSink.open({ dir, clock });
  const log = await DatasetLog.open(dir, 'kline');
  const lines: string[] = [];
  let most = 0;
  for (let m = 0; m < 7 * 1440; m++) {
    await clock.advance(60_000);
    for (let s = 0; s < weekSeries; s++)
      sink.write({ ...benchUpdate(s, 0), tsMs: start + m * 60_000, readAtMs: start + m * 60_000 + 61_000 });
    await sink.checkpoint();
    await sink.upkeepIdle();
    await log.refresh();
    const perPartition = new Map<string, number>();
    for (const path of log.files.keys()) {
      const p = path.slice(0, path.lastIndexOf('/'));
      perPartition.set(p, (perPartition.get(p) ?? 0) + 1);
    }
    most = Math.max(most, ...perPartition.values());
    if ((m + 1) % 1440 === 0) {
      await ageAsRunningUpkeep(dir, start, clock.now());
      const logDir = join(dir, 'kline', '_delta_log');
      const names = await readdir(logDir);
      let bytes = 0;
      for (const n of names) bytes += (await stat(join(logDir, n))).size;
      const parts = [...perPartition].map(([p, n]) => `${p.slice(p.lastIndexOf('/') + 1)}: ${n}`).join(', ');
      lines.push(
        `| ${new Date(clock.now()).toISOString().slice(0, 10)} | ${parts} | ${most} | ${log.version + 1} | ` +
          `${names.filter((n) => n.endsWith('.checkpoint.parquet')).length} | ${names.length} | ${(bytes / 1e6).toFixed(1)} |`,
      );
      most = 0;
    }
  }
  await sink.close();
  return lines;
}

const work = await mkdtemp(join(tmpdir(), 'qf-upkeep-bench-'));
const proxy = withS3 ? await startS3Proxy() : undefined;
try {
  let t0 = performance.now();
  const local = join(work, 'sync');
  const day = await syncDay(local);
  console.log(
    `local sync: ${minutes * 2} checkpoints in ${secs(t0)} s, version ${day.version}, ` +
      `${day.compactions} compactions, ${day.checkpoints} Delta checkpoints, ${day.files} files, ` +
      `${day.logFiles} log files (${day.expired} expired by the day's last round)`,
  );
  const file = await oneFile(join(work, 'single'));
  const floor = join(work, 'floor', 'kline');
  referenceTable(file, floor);
  const tables: Record<string, string> = { local: join(local, 'kline'), floorLocal: floor };
  let bucket: TestBucket | undefined;
  let s3Day: SyncDay | undefined;
  let fileS3: string | undefined;
  if (proxy !== undefined) {
    bucket = await freshBucket('bench', proxy.value);
    Object.assign(process.env, bucket.env());
    t0 = performance.now();
    s3Day = await syncDay(bucket.url('sync'));
    console.log(
      `s3 sync: ${minutes * 2} checkpoints in ${secs(t0)} s, version ${s3Day.version}, ` +
        `${s3Day.compactions} compactions, ${s3Day.checkpoints} Delta checkpoints, ${s3Day.files} files, ` +
        `${s3Day.logFiles} log files (${s3Day.expired} expired by the day's last round)`,
    );
    tables['s3'] = bucket.url('sync/kline');
    await bucket.upload(join(work, 'single'), 'single');
    await bucket.upload(join(work, 'floor'), 'floor');
    tables['floorS3'] = bucket.url('floor/kline');
    fileS3 = bucket.url(`single/${file.slice(join(work, 'single').length + 1)}`);
  }
  const out = readDeltaTables({
    ...(proxy === undefined ? {} : { server: proxy.value }),
    tables,
    file,
    ...(fileS3 === undefined ? {} : { fileS3 }),
    repeat: 10,
  });
  const cell = timingCell;
  console.log(
    `\n${(series * minutes).toLocaleString('en')} rows (${series} series × ${minutes} one-minute bars)\n`,
  );
  console.log(
    '| table | versions | files | log files | delta-rs (s) | Polars scan_delta (s) | DuckDB delta (s) |',
  );
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
  const rows: [string, string, string, SyncDay, DeltaReadTiming][] = [
    ['local', 'floorLocal', 'local disk: a day as a sync leaves it', day, out['file']!],
  ];
  if (s3Day !== undefined)
    rows.push(['s3', 'floorS3', 'S3: a day as a sync leaves it', s3Day, out['fileS3']!]);
  for (const [name, floorName, label, d, base] of rows) {
    const r = out[name]!;
    if (r.rows !== series * minutes)
      throw new Error(`${name}: read ${r.rows} rows, wrote ${series * minutes}`);
    console.log(
      `| ${label} | ${d.version + 1} | ${d.files} | ${d.logFiles} | ${cell(r.deltalake!, base.pyarrow!)} | ` +
        `${cell(r.polars, base.polars)} | ${cell(r.duckdb, base.duckdb)} |`,
    );
    const f = out[floorName]!;
    const noCa = [r, f, base].map((t) => t.duckdbWithoutCaRoots);
    console.log(
      `| the same rows as a one-file table written by delta-rs (the readers' floor) | 1 | 1 | 1 | ` +
        `${cell(f.deltalake!, base.pyarrow!)} | ${cell(f.polars, base.polars)} | ${cell(f.duckdb, base.duckdb)} |`,
    );
    const where = name === 'local' ? 'a local file' : 'one object on the S3 server';
    console.log(
      `| the same rows as ${where} (baseline: pyarrow, Polars scan_parquet, DuckDB read_parquet) | – | 1 | – | ` +
        `${cell(base.pyarrow!, base.pyarrow!)} | ${cell(base.polars, base.polars)} | ${cell(base.duckdb, base.duckdb)} |`,
    );
    console.log(
      `\nDuckDB, the table attached once with PIN_SNAPSHOT (no log read, no client built at each query): ` +
        `the table ${cell(r.duckdbPinned!, base.duckdb)}, the floor ${cell(f.duckdbPinned!, base.duckdb)}`,
    );
    if (noCa.every((t) => t !== undefined))
      console.log(
        `\nDuckDB, its process finding no CA certificates (the delta extension loads the system's at every scan): ` +
          `the table ${cell(noCa[0]!, noCa[2]!)}, the floor ${cell(noCa[1]!, noCa[2]!)}, the one object ${noCa[2]!.toFixed(3)} s\n`,
      );
  }
  if (weekSeries > 0) {
    t0 = performance.now();
    const lines = await week(join(work, 'week'));
    console.log(
      `\nA week of 1-minute checkpoints of ${weekSeries} series (${7 * 1440} checkpoints, in ${secs(t0)} s):\n`,
    );
    console.log(
      '| day (UTC, end) | files per partition | most in a partition that day | log versions | checkpoints | log files | log MB |',
    );
    console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: |');
    for (const l of lines) console.log(l);
  }
} finally {
  await proxy?.stop();
  if (keep) console.log(`\ntables kept in ${work}`);
  else await rm(work, { recursive: true, force: true });
}
