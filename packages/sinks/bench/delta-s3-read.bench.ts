// Reading a day of 1-minute bars of 1,000 series (24 h: 1,440 bars each, 1.44 M rows) from S3
// through the Delta readers, against the same rows as one local Parquet file, in the same run.
// The table is written by quoteflow's local dataset writer (one Delta version per minute's
// checkpoint, as a sync checkpointing every 30 s leaves), uploaded to a real S3Proxy
// (test/support/s3.ts: started here, filesystem backend, signed requests over 127.0.0.1), and
// read by delta-rs, Polars' scan_delta (storage_options as the interop tests use) and DuckDB
// 1.4.4's delta extension (an S3 secret) from the bucket, before and after `compactDataset`, and as
// one commit of the same rows (a table of one version), and the day given a Delta checkpoint
// (delta-rs' create_checkpoint), and the day committed by quoteflow straight to the bucket (its own
// Delta checkpoint every 100 versions), as written and after `compactDataset` on S3; the same
// compacted table read from the
// local disk separates what S3 costs from what Delta costs. Each read: a group-by over the table (code:
// count, max close), the table opened anew (its log read), best of 5. The baseline: the same rows
// in one local Parquet file, read by pyarrow (for delta-rs, which hands out pyarrow tables),
// Polars' scan_parquet and DuckDB's read_parquet.
// Run: `pnpm bench delta-s3` (needs scripts/python/setup.sh and scripts/s3proxy/setup.sh).
// BENCH_S3_SERIES (default 1000), BENCH_S3_MINUTES (default 1440) set the size.
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Bar } from '@quoteflow/core';
import { compactDataset, DatasetWriter } from '@quoteflow/sinks';
import { openStore } from '@quoteflow/sinks/internal';
import { benchBar as bar } from './bench-bars.js';
import { readDeltaTables, timingCell } from './bench-delta-read.js';
import { writeKlineTable } from '../../../test/support/delta-tables.js';
import { freshBucket, startS3Proxy } from '../../../test/support/s3.js';

const series = Number(process.env['BENCH_S3_SERIES'] ?? 1000);
const minutes = Number(process.env['BENCH_S3_MINUTES'] ?? 1440);

const secs = (t0: number): string => ((performance.now() - t0) / 1000).toFixed(1);

/** Each minute's bars of every series: one checkpoint each. */
function* day(): Generator<Generator<Bar>> {
  for (let m = 0; m < minutes; m++)
    yield (function* () {
      for (let s = 0; s < series; s++) yield bar(s, m);
    })();
}

const work = await mkdtemp(join(tmpdir(), 'qf-delta-s3-bench-'));
const proxy = await startS3Proxy();
try {
  const server = proxy.value;
  console.log(`S3Proxy 4.1.0 started in ${server.startMs} ms`);
  const daily = join(work, 'day');
  const compacted = join(work, 'compacted');
  const single = join(work, 'single');
  const once = join(work, 'one-version');
  let t0 = performance.now();
  const log = await writeKlineTable(daily, day());
  console.log(`wrote ${minutes} Delta versions of ${series} rows in ${secs(t0)} s (version ${log.version})`);
  await cp(daily, compacted, { recursive: true });
  t0 = performance.now();
  const result = await compactDataset({ dir: compacted, dataset: 'kline' });
  console.log(
    `compaction: ${result.map((r) => `${r.filesBefore} → ${r.filesAfter} files`).join(', ')} in ${secs(t0)} s`,
  );
  // The same rows in one commit: a Delta table of one version, to tell the log's length from S3.
  await writeKlineTable(once, [
    (function* () {
      for (const bars of day()) yield* bars;
    })(),
  ]);
  const one = new DatasetWriter({ dir: single, maxRowsPerFile: 10_000_000, maxBytesPerFile: 2 ** 31 - 1 });
  for (let m = 0; m < minutes; m++) for (let s = 0; s < series; s++) one.append(bar(s, m));
  await one.close();
  const file = (await readdir(single, { recursive: true })).find((f) => f.endsWith('.parquet'));
  const bucket = await freshBucket('bench', server);
  t0 = performance.now();
  const dayKeys = await bucket.upload(join(daily, 'kline'), 'day/kline');
  const compactedKeys = await bucket.upload(join(compacted, 'kline'), 'compacted/kline');
  const onceKeys = await bucket.upload(join(once, 'kline'), 'one-version/kline');
  // The day again, given a Delta checkpoint (written by delta-rs, quoteflow writes none).
  const checkpointedKeys = await bucket.upload(join(daily, 'kline'), 'checkpointed/kline');
  const compactedCheckpointedKeys = await bucket.upload(
    join(compacted, 'kline'),
    'compacted-checkpointed/kline',
  );
  const uploaded =
    dayKeys.length +
    compactedKeys.length +
    onceKeys.length +
    checkpointedKeys.length +
    compactedCheckpointedKeys.length;
  console.log(`uploaded ${uploaded} objects in ${secs(t0)} s`);
  // The day committed by quoteflow to the bucket (its own checkpoints), twice: one copy compacted on S3.
  Object.assign(process.env, bucket.env());
  const ownKeys: Record<string, string[]> = {};
  for (const prefix of ['own', 'own-compacted']) {
    const opened = await openStore(bucket.url(prefix));
    try {
      t0 = performance.now();
      const own = await writeKlineTable(opened.root, day(), { store: opened.store! });
      console.log(`committed ${own.version + 1} versions to s3 (${prefix}) in ${secs(t0)} s`);
      if (prefix === 'own-compacted') {
        t0 = performance.now();
        await compactDataset({ dir: opened.root, dataset: 'kline', store: opened.store! });
        console.log(`compaction on S3 in ${secs(t0)} s`);
      }
    } finally {
      await opened.close();
    }
    ownKeys[prefix] = await bucket.keys(`${prefix}/kline/`);
  }
  console.log('');

  const out = readDeltaTables({
    server,
    tables: {
      day: bucket.url('day/kline'),
      compacted: bucket.url('compacted/kline'),
      once: bucket.url('one-version/kline'),
      checkpointed: bucket.url('checkpointed/kline'),
      compactedCheckpointed: bucket.url('compacted-checkpointed/kline'),
      own: bucket.url('own/kline'),
      ownCompacted: bucket.url('own-compacted/kline'),
      local: join(compacted, 'kline'),
    },
    file: join(single, file!),
    checkpoint: ['checkpointed', 'compactedCheckpointed'],
    repeat: 5,
  });
  const base = out['file']!;
  const cell = timingCell;
  const parquet = (keys: string[]) =>
    keys.filter((k) => k.endsWith('.parquet') && !k.includes('/_delta_log/')).length;
  const versions = (keys: string[]) => keys.filter((k) => /_delta_log\/\d+\.json$/.test(k)).length;
  console.log(
    `${(series * minutes).toLocaleString('en')} rows (${series} series × ${minutes} one-minute bars)\n`,
  );
  console.log('| table | versions | files | delta-rs (s) | Polars scan_delta (s) | DuckDB delta (s) |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
  for (const [name, label, keys] of [
    ['day', 'S3: a day of checkpoints', dayKeys],
    ['compacted', 'S3: the day compacted', compactedKeys],
    ['once', 'S3: the same rows in one commit', onceKeys],
    ['checkpointed', 'S3: a day of checkpoints + a Delta checkpoint (delta-rs)', checkpointedKeys],
    ['compactedCheckpointed', 'S3: the day compacted + a Delta checkpoint', compactedCheckpointedKeys],
    ['own', 'S3: a day committed by quoteflow (its own checkpoints)', ownKeys['own']!],
    ['ownCompacted', 'S3: that day compacted on S3 (its own checkpoints)', ownKeys['own-compacted']!],
    ['local', 'local disk: the day compacted', compactedKeys],
  ] as const) {
    const r = out[name]!;
    if (r.rows !== series * minutes)
      throw new Error(`${name}: read ${r.rows} rows, wrote ${series * minutes}`);
    console.log(
      `| ${label} | ${versions(keys)} | ${parquet(keys)} | ${cell(r.deltalake!, base.pyarrow!)} | ` +
        `${cell(r.polars, base.polars)} | ${cell(r.duckdb, base.duckdb)} |`,
    );
  }
  console.log(
    `| one local Parquet file (baseline: pyarrow, Polars scan_parquet, DuckDB read_parquet) | – | 1 | ` +
      `${cell(base.pyarrow!, base.pyarrow!)} | ${cell(base.polars, base.polars)} | ${cell(base.duckdb, base.duckdb)} |`,
  );
} finally {
  await proxy.stop();
  await rm(work, { recursive: true, force: true });
}
