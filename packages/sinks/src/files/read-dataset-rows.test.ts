import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Table,
  TimestampMicrosecond,
  TimestampMillisecond,
  TimestampNanosecond,
  TimestampSecond,
  tableToIPC,
  vectorFromArray,
  type DataType,
} from 'apache-arrow';
import { Table as WasmTable, writeParquet } from 'parquet-wasm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { forEachKlineRow } from './read-dataset-rows.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'qf-read-rows-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

// 1900, 1970 and 2200: the whole range a bar may have, each to the millisecond's second.
const STARTS_MS = [Date.UTC(1900, 0, 1, 9, 30), Date.UTC(2026, 10, 27, 14, 31), Date.UTC(2200, 5, 1)];

/**
 * A kline file whose `ts` has the given unit, as DuckDB (us), pandas (ns) or a writer in s would
 * write it (Arrow's builders take epoch ms and store the unit's values).
 */
async function klineFile(type: DataType, withNull: boolean): Promise<string> {
  const ts = [...STARTS_MS] as (number | null)[];
  const code = STARTS_MS.map(() => 'AAPL.US') as (string | null)[];
  if (withNull) {
    ts.push(null);
    code.push('AAPL.US');
  }
  const table = new Table({ code: vectorFromArray(code), ts: vectorFromArray(ts, type) });
  const rel = `kline/kline_type=1/part-${type.toString()}-${withNull}.parquet`;
  await mkdir(join(dir, 'kline', 'kline_type=1'), { recursive: true });
  await writeFile(join(dir, rel), writeParquet(WasmTable.fromIPCStream(tableToIPC(table, 'stream'))));
  return rel;
}

describe('forEachKlineRow', () => {
  it.each([
    ['s', new TimestampSecond()],
    ['ms', new TimestampMillisecond()],
    ['us', new TimestampMicrosecond()],
    ['ns', new TimestampNanosecond()],
  ] as const)('reads a ts column in %s as epoch ms, with and without nulls', async (_unit, type) => {
    for (const withNull of [false, true]) {
      const starts: number[] = [];
      await forEachKlineRow(dir, await klineFile(type, withNull), (_code, tsMs) => starts.push(tsMs), []);
      expect(starts).toEqual(STARTS_MS);
    }
  });
});
