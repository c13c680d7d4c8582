import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { QUOTEFLOW_FORMAT_VERSION } from '@quoteflow/sinks/internal';
import { SyncState } from './sync-state.js';

describe('SyncState', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'qf-state-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('round-trips what the dataset holds per series and the accounted files', async () => {
    const state = new SyncState();
    state.record('AAPL.US', 1, { firstMs: 60_000, lastMs: 120_000, rows: 2 });
    state.record('AAPL.US', 1, { firstMs: 0, lastMs: 0, rows: 1 }); // an older file: widens back, never moves the last
    state.record('BTCUSDT', 8, { firstMs: 86_400_000, lastMs: 86_400_000, rows: 1 });
    state.addFile('kline/kline_type=1/a.parquet');
    const path = join(dir, 'state.json');
    await state.save(path);
    const loaded = await SyncState.load(path);
    expect(loaded.lastClosed('AAPL.US', 1)).toBe(120_000);
    expect(loaded.extent('AAPL.US', 1)).toEqual({ firstMs: 0, lastMs: 120_000, rows: 3 });
    expect(loaded.lastClosed('BTCUSDT', 8)).toBe(86_400_000);
    expect(loaded.lastClosed('BTCUSDT', 1)).toBeUndefined();
    expect(loaded.hasFile('kline/kline_type=1/a.parquet')).toBe(true);
  });

  it('reads a version 1 state as empty, so every dataset file is read again', async () => {
    const path = join(dir, 'state.json');
    await writeFile(
      path,
      JSON.stringify({ version: 1, series: { 'X:1': 60_000 }, files: ['kline/a.ndjson'], updatedAt: '' }),
    );
    const loaded = await SyncState.load(path);
    expect(loaded.entries()).toEqual([]);
    expect(loaded.hasFile('kline/a.ndjson')).toBe(false);
  });

  it("writes this release's format version, and reads a state written before versions were recorded", async () => {
    const path = join(dir, 'state.json');
    const state = new SyncState();
    state.record('X', 1, { firstMs: 1, lastMs: 1, rows: 1 });
    await state.save(path);
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({
      version: 2,
      formatVersion: QUOTEFLOW_FORMAT_VERSION,
    });
    await writeFile(
      path,
      JSON.stringify({
        version: 2,
        series: { 'X:1': { first: 1, last: 2, rows: 2 } },
        files: [],
        updatedAt: '',
      }),
    );
    expect((await SyncState.load(path)).extent('X', 1)).toEqual({ firstMs: 1, lastMs: 2, rows: 2 });
  });

  it('refuses a state of a newer format with QF_FORMAT_VERSION naming the file and both versions', async () => {
    const path = join(dir, 'state.json');
    const newer = QUOTEFLOW_FORMAT_VERSION + 1;
    // A newer release may also change the shape: the version is judged first.
    await writeFile(path, JSON.stringify({ version: 3, formatVersion: newer, extents: [] }));
    await expect(SyncState.load(path)).rejects.toMatchObject({
      code: 'QF_FORMAT_VERSION',
      message: `state file ${JSON.stringify(path)} was written in quoteflow format version ${newer}, newer than this release's format version ${QUOTEFLOW_FORMAT_VERSION}: upgrade quoteflow to continue it`,
    });
  });

  it('starts empty when the file does not exist', async () => {
    const state = await SyncState.load(join(dir, 'missing.json'));
    expect(state.entries()).toEqual([]);
  });

  it('refuses a file that is not a sync state with QF_STATE', async () => {
    const path = join(dir, 'state.json');
    await writeFile(path, '{"hello":1}');
    await expect(SyncState.load(path)).rejects.toMatchObject({ code: 'QF_STATE' });
  });

  it('leaves no temporary file behind and replaces the previous state whole', async () => {
    const path = join(dir, 'state.json');
    const a = new SyncState();
    a.record('X', 1, { firstMs: 1, lastMs: 1, rows: 1 });
    await a.save(path);
    const b = new SyncState();
    b.record('Y', 2, { firstMs: 2, lastMs: 2, rows: 1 });
    await b.save(path);
    expect(await readdir(dir)).toEqual(['state.json']);
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({
      series: { 'Y:2': { first: 2, last: 2, rows: 1 } },
    });
  });
});
