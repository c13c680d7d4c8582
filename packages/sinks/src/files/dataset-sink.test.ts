import { seriesKey } from '@quoteflow/core';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DatasetSink } from './dataset-sink.js';
import { DatasetLog, listDataFiles } from './dataset-log.js';
import { readKlineStarts } from './read-dataset-rows.js';
import { barUpdate, warmEncoderThread } from '../../test-support/test-records.js';

let dir: string;
beforeAll(warmEncoderThread, 120_000);
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'qf-dataset-sink-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const T0 = Date.UTC(2026, 0, 5, 1, 30);
const minute = (i: number): number => T0 + i * 60_000;
const KEY = seriesKey('AAPL.US', 1);

/** Every bar start per code in the committed (visible) files, sorted. */
async function visibleStarts(): Promise<Map<string, number[]>> {
  const all = new Map<string, number[]>();
  for (const rel of await listDataFiles(dir, 'kline')) {
    const { starts } = await readKlineStarts(dir, rel);
    for (const [code, list] of starts) all.set(code, [...(all.get(code) ?? []), ...list]);
  }
  for (const list of all.values()) list.sort((a, b) => a - b);
  return all;
}

/** Delta's `commitInfo.operation` of each version of the table. */
async function operationsOf(log: DatasetLog): Promise<string[]> {
  const out: string[] = [];
  for (let v = 0; v <= log.version; v++) {
    const text = await readFile(join(log.logDir, `${String(v).padStart(20, '0')}.json`), 'utf8');
    out.push(
      (JSON.parse(text.split('\n')[0]!) as { commitInfo: { operation: string } }).commitInfo.operation,
    );
  }
  return out;
}

describe('DatasetSink', () => {
  it('commits the final bars taken since the last checkpoint, with their watermarks, and nothing forming', async () => {
    const sink = await DatasetSink.open({ dir });
    expect(sink.watermarks().size).toBe(0);
    for (let i = 0; i < 3; i++) sink.write(barUpdate('AAPL.US', minute(i), true));
    sink.write(barUpdate('AAPL.US', minute(3), false));
    expect(await visibleStarts()).toEqual(new Map()); // staged, not visible before the commit
    const done = await sink.checkpoint();
    expect(done).toMatchObject({
      closedBars: 3,
      files: [expect.stringMatching(/^kline\/kline_type=1\/month=2026-01\//)],
    });
    expect(done.series.get(KEY)).toEqual({ first: minute(0), last: minute(2), rows: 3 });
    expect(sink.watermarks().get(KEY)).toEqual({ first: minute(0), last: minute(2), rows: 3 });
    expect(await visibleStarts()).toEqual(new Map([['AAPL.US', [minute(0), minute(1), minute(2)]]]));
    await sink.close();
  });

  it('commits each file with its Delta statistics: rows, min/max per column (timestamps as ISO instants), null counts', async () => {
    const sink = await DatasetSink.open({ dir });
    for (let i = 0; i < 3; i++) sink.write(barUpdate('AAPL.US', minute(i), true));
    sink.write(barUpdate('MSFT.US', minute(1), true));
    await sink.checkpoint();
    await sink.close();
    const log = await DatasetLog.open(dir, 'kline');
    const [file] = [...log.files.values()];
    expect(file?.stats).toEqual({
      numRecords: 4,
      minValues: expect.objectContaining({
        code: 'AAPL.US',
        ts: new Date(minute(0)).toISOString(),
        close: 10.5,
      }) as unknown,
      maxValues: expect.objectContaining({
        code: 'MSFT.US',
        ts: new Date(minute(2)).toISOString(),
        read_at: new Date(minute(2) + 30_000).toISOString(),
      }) as unknown,
      nullCount: expect.objectContaining({ code: 0, ts: 0, volume: 0 }) as unknown,
    });
  });

  it('converts a dataset with a pre-Delta log (_quoteflow_log) into Delta version 0 on first open, once, every row kept', async () => {
    const first = await DatasetSink.open({ dir });
    for (let i = 0; i < 5; i++) first.write(barUpdate('AAPL.US', minute(i), true));
    await first.checkpoint();
    await first.close();
    // The same files under the log quoteflow kept before: one published entry and `_applied`.
    const files = await listDataFiles(dir, 'kline');
    const legacyDir = join(dir, '_quoteflow_log', 'kline');
    await mkdir(legacyDir, { recursive: true });
    const entry = {
      version: 1,
      committedAt: new Date().toISOString(),
      writer: 'old~1~x',
      operation: 'checkpoint',
      add: await Promise.all(files.map(async (path) => ({ path, rows: 5, bytes: 0 }))),
      remove: [],
      series: { 'AAPL.US:1': { first: minute(0), last: minute(4), rows: 5 } },
    };
    await writeFile(join(legacyDir, '00000000000000000001.json'), JSON.stringify(entry));
    await writeFile(join(legacyDir, '_applied'), '1\n');
    await rm(join(dir, 'kline', '_delta_log'), { recursive: true });
    const before = await visibleStarts();

    const again = await DatasetSink.open({ dir });
    expect(again.watermarks().get(KEY)).toEqual({ first: minute(0), last: minute(4), rows: 5 });
    expect(await visibleStarts()).toEqual(before);
    await expect(readdir(join(dir, '_quoteflow_log'))).rejects.toMatchObject({ code: 'ENOENT' });
    const log = await DatasetLog.open(dir, 'kline');
    expect(log.version).toBe(0);
    expect([...log.files.values()].map((f) => [f.path, f.rows, f.bytes > 0])).toEqual(
      files.map((p) => [p, 5, true]),
    );
    again.write(barUpdate('AAPL.US', minute(5), true));
    await again.checkpoint();
    await again.close();
    const reopened = await DatasetLog.open(dir, 'kline');
    // Converted once: no second version 0, no adopt; then the sink's claim, checkpoint, release.
    expect(reopened.version).toBe(3);
    expect(await operationsOf(reopened)).toEqual(['CONVERT', 'CLAIM', 'WRITE', 'CLAIM']);
    expect(reopened.series.get(KEY)).toEqual({ first: minute(0), last: minute(5), rows: 6 });
    expect((await visibleStarts()).get('AAPL.US')).toHaveLength(6);
  });

  it('takes a replay after a restart harmlessly: only bars its commits do not cover are written', async () => {
    const first = await DatasetSink.open({ dir });
    for (let i = 0; i < 3; i++) first.write(barUpdate('AAPL.US', minute(i), true));
    await first.checkpoint();
    await first.close();
    const again = await DatasetSink.open({ dir });
    expect(again.watermarks().get(KEY)).toEqual({ first: minute(0), last: minute(2), rows: 3 });
    // The pipeline replays from its oldest watermark; older history grows the series backwards.
    for (const i of [-2, -1, 1, 2, 3, 4]) again.write(barUpdate('AAPL.US', minute(i), true));
    again.write(barUpdate('AAPL.US', minute(4), true)); // a second copy within one checkpoint
    const done = await again.checkpoint();
    expect(done.closedBars).toBe(4);
    expect(again.watermarks().get(KEY)).toEqual({ first: minute(-2), last: minute(4), rows: 7 });
    expect((await visibleStarts()).get('AAPL.US')).toEqual([-2, -1, 0, 1, 2, 3, 4].map(minute));
    await again.close();
  });

  it('commits nothing of what it took when closed before a checkpoint, and leaves no staged file', async () => {
    const sink = await DatasetSink.open({ dir, maxFileAgeMs: 1 });
    for (let i = 0; i < 3; i++) sink.write(barUpdate('AAPL.US', minute(i), true));
    await sink.close();
    expect(await listDataFiles(dir, 'kline')).toEqual([]);
    expect(await readdir(join(dir, '.staging')).catch(() => [])).toEqual([]);
    expect((await DatasetSink.open({ dir })).watermarks().size).toBe(0);
  });

  it('publishes nothing and fails loudly once its fence says it may no longer write', async () => {
    let leaseHeld = true;
    const sink = await DatasetSink.open({ dir, fence: () => leaseHeld });
    sink.write(barUpdate('AAPL.US', minute(0), true));
    await sink.checkpoint();
    leaseHeld = false;
    sink.write(barUpdate('AAPL.US', minute(1), true));
    await expect(sink.checkpoint()).rejects.toMatchObject({ code: 'QF_FENCED' });
    expect(() => sink.write(barUpdate('AAPL.US', minute(2), true))).toThrow(/lease lapsed/);
    expect((await visibleStarts()).get('AAPL.US')).toEqual([minute(0)]);
    await sink.close();
  });

  it('reads what another writer committed on refresh, so it does not write it again', async () => {
    const a = await DatasetSink.open({ dir });
    // A cluster worker that took AAPL.US over (its cluster's lease decided): it claims at once.
    const b = await DatasetSink.open({ dir, ifOwned: 'take-over' });
    for (let i = 0; i < 3; i++) a.write(barUpdate('AAPL.US', minute(i), true));
    await a.checkpoint();
    expect(b.watermarks().get(KEY)).toBeUndefined();
    await b.refresh();
    expect(b.watermarks().get(KEY)).toEqual({ first: minute(0), last: minute(2), rows: 3 });
    for (let i = 1; i < 5; i++) b.write(barUpdate('AAPL.US', minute(i), true));
    await b.checkpoint();
    expect((await visibleStarts()).get('AAPL.US')).toEqual([0, 1, 2, 3, 4].map(minute));
    await Promise.all([a.close(), b.close()]);
  });
});
