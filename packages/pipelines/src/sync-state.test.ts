import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SyncState } from './sync-state.js';

describe('SyncState', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'qf-state-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('round-trips the last closed bar per series and the accounted files', async () => {
    const state = new SyncState();
    state.advance('AAPL.US', 1, 60_000);
    state.advance('AAPL.US', 1, 120_000);
    state.advance('AAPL.US', 1, 60_000); // never moves back
    state.advance('BTCUSDT', 8, 86_400_000);
    state.addFile('kline/kline_type=1/a.parquet');
    const path = join(dir, 'state.json');
    await state.save(path);
    const loaded = await SyncState.load(path);
    expect(loaded.lastClosed('AAPL.US', 1)).toBe(120_000);
    expect(loaded.lastClosed('BTCUSDT', 8)).toBe(86_400_000);
    expect(loaded.lastClosed('BTCUSDT', 1)).toBeUndefined();
    expect(loaded.hasFile('kline/kline_type=1/a.parquet')).toBe(true);
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
    a.advance('X', 1, 1);
    await a.save(path);
    const b = new SyncState();
    b.advance('Y', 2, 2);
    await b.save(path);
    expect(await readdir(dir)).toEqual(['state.json']);
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ series: { 'Y:2': 2 } });
  });
});
