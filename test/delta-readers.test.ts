/**
 * The datasets are Delta Lake tables (`DIR/<dataset>/_delta_log/`): readers quoteflow did not
 * write (delta-rs and Polars' scan_delta from PyPI, Spark 4.1 with io.delta:delta-spark_4.1_2.13
 * from Maven Central, DuckDB 1.4.4's `delta` extension from PyPI's duckdb-ext-delta: DuckDB's
 * extension site is out of reach, and no extension package is built for DuckDB 2.x) read exactly
 * the rows quoteflow committed, at the newest version and at an earlier one (time travel), with a
 * log compaction in the log and after a partition compaction.
 * A table that lost a committed file, once healed (its `remove` committed), reads without it.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bar } from '../packages/core/src/index.js';
import { missingCommittedFiles } from '../packages/pipelines/src/internal.js';
import { compactDataset, DatasetLog, DatasetSink, DatasetWriter } from '../packages/sinks/src/index.js';
import { depth, level } from '../packages/sinks/test-support/test-records.js';
import {
  bar,
  commitEach,
  DELTA_READERS,
  eachVersion,
  expectEachVersion,
  expected,
  rowsOf,
  writeKlineTable,
} from './support/delta-tables.js';
import { ensurePython, readDatasets } from './support/python.js';

const T0 = Date.UTC(2026, 0, 30, 14, 30);
const MIN = 60_000;

let dir: string;
beforeAll(async () => {
  ensurePython();
  dir = await mkdtemp(join(tmpdir(), 'qf-delta-readers-'));
}, 900_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a quoteflow dataset read as a Delta table', () => {
  it('delta-rs, Polars, Spark and DuckDB read exactly the committed rows, each version, across log and partition compaction', async () => {
    const commits: Bar[][] = [
      [bar('AAPL.US', 1, T0, 10.5), bar('AAPL.US', 1, T0 + MIN, 10.75), bar('MSFT.US', 1, T0, 400.25)],
      [bar('AAPL.US', 1, T0 + 2 * MIN, 11), bar('AAPL.US', 8, Date.UTC(2026, 1, 2), 12.5)],
      [bar('MSFT.US', 1, T0 + MIN, 401), bar('AAPL.US', 1, T0 + 3 * MIN, 11.25)],
    ];
    // A log compaction every 2 versions: the readers that use it (Spark) and those that do not
    // (delta-rs reads the commits) must agree.
    const log = await writeKlineTable(dir, commits, { snapshotEvery: 2 });
    expect(log.version).toBe(2);
    expect((await readdir(log.logDir)).filter((n) => n.endsWith('.compacted.json'))).toEqual([
      '00000000000000000000.00000000000000000002.compacted.json',
    ]);
    const table = join(dir, 'kline');
    const backs = await readDatasets(eachVersion({ path: table }, [0, 1]));
    expectEachVersion(backs, [0, 1], commits);
    const all = commits.flat();
    // Timestamps: the files hold milliseconds, the Delta schema says `timestamp` (microseconds, UTC).
    for (const back of backs.slice(0, DELTA_READERS.length))
      expect(back.columns.find((c) => c.name === 'ts')?.type).toMatch(/timestamp|Datetime/i);

    // A partition compaction: new files and `remove` actions in one version, the same rows.
    const compacted = await compactDataset({ dir, dataset: 'kline' });
    expect(compacted.length).toBeGreaterThan(0);
    const after = await readDatasets([
      ...eachVersion({ path: table }, []),
      { reader: 'duckdb', path: table, hive: true },
    ]);
    for (const back of after) expect(rowsOf(back), back.reader).toEqual(expected(all));
  }, 600_000);

  it('delta-rs, Spark and DuckDB read the depth table with seq up to 2^64 - 1 exactly (Delta decimal(20,0))', async () => {
    const out = join(dir, 'with-depth');
    const writer = new DatasetWriter({ dir: out, encoderThreads: 0 });
    writer.append(
      depth('AAPL.US', 18_446_744_073_709_551_615n, T0, [level(10, 5), level(9.5, undefined)], []),
    );
    writer.append(depth('MSFT.US', 7n, T0 + 1000, [], [level(400, 2)]));
    await writer.close();
    // Depth capture publishes its files without commits: they are adopted into the table.
    const log = await DatasetLog.open(out, 'depth');
    await log.transaction(async () => undefined, { adoptOrphans: true });
    const backs = await readDatasets(
      (['deltalake', 'spark-delta', 'duckdb-delta'] as const).map((reader) => ({
        reader,
        path: join(out, 'depth'),
      })),
    );
    for (const back of backs) {
      const rows = back.rows.map((r) => `${String(r.code)} ${String(r.seq)} ${String(r.tick_time)}`).sort();
      expect(rows, back.reader).toEqual([`AAPL.US 18446744073709551615 ${T0}`, `MSFT.US 7 ${T0 + 1000}`]);
    }
  }, 300_000);

  it('a table that lost a committed Parquet file: missingCommittedFiles names its add, forget commits its remove, delta-rs, Spark and DuckDB read the rest', async () => {
    const out = join(dir, 'lost-file');
    const writer = new DatasetWriter({
      dir: out,
      format: 'parquet',
      encoderThreads: 0,
      publish: 'on-commit',
    });
    const log = await DatasetLog.open(out, 'kline');
    const commits: Bar[][] = [
      [bar('AAPL.US', 1, T0, 10.5)],
      [bar('AAPL.US', 1, T0 + MIN, 10.75)],
      [bar('AAPL.US', 1, T0 + 2 * MIN, 11)],
    ];
    const paths = await commitEach(writer, log, commits);
    await writer.close();
    expect(paths).toHaveLength(3);
    const lost = paths[1]!;
    await rm(join(out, lost));
    expect(await missingCommittedFiles(out)).toEqual([lost]);
    const sink = await DatasetSink.open({ dir: out });
    await sink.forget([lost]);
    await sink.close();
    expect(await missingCommittedFiles(out)).toEqual([]);
    const backs = await readDatasets(
      (['deltalake', 'spark-delta', 'duckdb-delta'] as const).map((reader) => ({
        reader,
        path: join(out, 'kline'),
      })),
    );
    for (const back of backs)
      expect(rowsOf(back), back.reader).toEqual(expected([...commits[0]!, ...commits[2]!]));
  }, 300_000);
});
