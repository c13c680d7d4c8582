import { mkdtemp, readdir, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { acceleratedClock, ManualClock } from '@quoteflow/core';
import { barUpdate } from '../../test-support/test-records.js';
import { compactDataset } from './compact-dataset.js';
import { DatasetLog } from './dataset-log.js';
import { DatasetSink } from './dataset-sink.js';
import { readKlineStarts } from './read-dataset-rows.js';
import { TableUpkeep } from './table-upkeep.js';
import { logRetentionOf, type UpkeepEvent } from './table-upkeep-options.js';
import type * as MergeFilesModule from './internal/merge-files.js';

// Merges wait at this gate while a test holds it closed (a merge as slow as the test wants).
const gate = vi.hoisted(() => ({
  held: undefined as Promise<void> | undefined,
  started: 0,
}));
vi.mock('./internal/merge-files.js', async (importOriginal) => {
  const actual = await importOriginal<typeof MergeFilesModule>();
  return {
    ...actual,
    mergeFiles: async (...args: Parameters<typeof actual.mergeFiles>) => {
      gate.started++;
      // The next merge waits while the gate is held; the ones after it pass.
      const held = gate.held;
      gate.held = undefined;
      await held;
      return actual.mergeFiles(...args);
    },
  };
});

/** Holds the next merge until the returned function is called. */
function holdMerges(): () => void {
  let open!: () => void;
  gate.held = new Promise<void>((resolve) => (open = resolve));
  return () => open();
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'qf-upkeep-'));
  gate.started = 0;
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const T0 = Date.UTC(2026, 0, 5, 1, 30);
const minute = (i: number): number => T0 + i * 60_000;
/** January 2026 is the month being written. */
const january = () => new ManualClock(Date.UTC(2026, 0, 20));

/** Each committed bar (`code@start`) as often as the table's live files hold it, sorted. */
async function committedBars(): Promise<string[]> {
  const log = await DatasetLog.open(dir, 'kline');
  const out: string[] = [];
  for (const path of log.files.keys()) {
    const { starts } = await readKlineStarts(dir, path);
    for (const [code, list] of starts) for (const t of list) out.push(`${code}@${t}`);
  }
  return out.sort();
}

const expected = (codes: readonly string[], minutes: number): string[] =>
  codes.flatMap((c) => Array.from({ length: minutes }, (_, i) => `${c}@${minute(i)}`)).sort();

/** Writes minute `i`'s bar of each code and checkpoints. */
async function checkpointMinute(sink: DatasetSink, codes: readonly string[], i: number): Promise<void> {
  for (const code of codes) sink.write(barUpdate(code, minute(i), true));
  await sink.checkpoint();
}

describe('TableUpkeep in a DatasetSink', () => {
  it('keeps the month being written to a bounded number of files, checkpoints as it goes, each bar once', async () => {
    const events: UpkeepEvent[] = [];
    const sink = await DatasetSink.open({ dir, clock: january(), onUpkeep: (e) => events.push(e) });
    const counts: number[] = [];
    const reader = await DatasetLog.open(dir, 'kline');
    for (let i = 0; i < 16; i++) {
      await checkpointMinute(sink, ['AAPL.US', 'MSFT.US'], i);
      await sink.upkeepIdle();
      await reader.refresh();
      counts.push(reader.files.size);
    }
    // The sink's last commit (its claims given up at close) comes after upkeep stopped.
    const version = reader.version;
    await sink.close();
    // 16 one-file checkpoints in base 4 is 100: two merges deep, one file; never more than 3 of a tier.
    expect(counts.at(-1)).toBe(1);
    expect(Math.max(...counts)).toBeLessThanOrEqual(3 * 2);
    expect(events.filter((e) => e.type === 'compacted').length).toBe(4 + 1);
    expect(await committedBars()).toEqual(expected(['AAPL.US', 'MSFT.US'], 16));
    const log = await readdir(join(dir, 'kline', '_delta_log'));
    const checkpoints = log.filter((n) => n.endsWith('.checkpoint.parquet'));
    // A checkpoint of the version each round ended at: every commit's, in effect.
    expect(checkpoints.length).toBeGreaterThanOrEqual(16);
    expect(checkpoints).toContain(`${String(version).padStart(20, '0')}.checkpoint.parquet`);
    expect(events.filter((e) => e.type === 'checkpointed').length).toBe(checkpoints.length);
  });

  it('merges the month being written whole once a day, after the first UTC midnight it sees', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 20, 23, 50));
    const events: UpkeepEvent[] = [];
    const sink = await DatasetSink.open({ dir, clock, onUpkeep: (e) => events.push(e) });
    const reader = await DatasetLog.open(dir, 'kline');
    const filesAfter = async (i: number): Promise<number> => {
      await checkpointMinute(sink, ['AAPL.US', 'MSFT.US'], i);
      await sink.upkeepIdle();
      await reader.refresh();
      return reader.files.size;
    };
    // Six checkpoints on the day it opened: tiered only (one merge of four, two files beside it).
    for (let i = 0; i < 5; i++) await filesAfter(i);
    expect(await filesAfter(5)).toBe(3);
    // Past midnight (the pipeline's clock): the partition being written becomes one file, once.
    await clock.advanceTo(Date.UTC(2026, 0, 21, 0, 0, 30));
    expect(await filesAfter(6)).toBe(1);
    expect(await filesAfter(7)).toBe(2);
    expect(await filesAfter(8)).toBe(3);
    // The next midnight: whole again.
    await clock.advanceTo(Date.UTC(2026, 0, 22, 0, 0, 30));
    expect(await filesAfter(9)).toBe(1);
    await sink.close();
    // One tiered merge (minutes 0-3), then each day's: all 14, then all 20 rows.
    const merged = events.flatMap((e) => (e.type === 'compacted' ? [e.result.rows] : []));
    expect(merged).toEqual([8, 14, 20]);
    expect(await committedBars()).toEqual(expected(['AAPL.US', 'MSFT.US'], 10));
  });

  it('merges the month being written whole once its clock crosses a UTC midnight at real speed', async () => {
    const midnight = Date.UTC(2026, 0, 21);
    // Real speed, six seconds before midnight (room for a loaded machine's first two
    // checkpoints): the clock crosses it as the test runs.
    const clock = acceleratedClock({ speed: 1, startMs: midnight - 6_000 });
    const sink = await DatasetSink.open({ dir, clock });
    const reader = await DatasetLog.open(dir, 'kline');
    const filesAfter = async (i: number): Promise<number> => {
      await checkpointMinute(sink, ['AAPL.US'], i);
      await sink.upkeepIdle();
      await reader.refresh();
      return reader.files.size;
    };
    expect(await filesAfter(0)).toBe(1);
    expect(await filesAfter(1)).toBe(2);
    expect(clock.now()).toBeLessThan(midnight); // still the day it opened on: tiered only
    await vi.waitFor(() => expect(clock.now()).toBeGreaterThanOrEqual(midnight), {
      timeout: 15_000,
      interval: 50,
    });
    expect(await filesAfter(2)).toBe(1);
    expect(await filesAfter(3)).toBe(2);
    await sink.close();
    expect(await committedBars()).toEqual(expected(['AAPL.US'], 4));
  });

  it('commits checkpoints while a merge is held up: ingestion never waits for upkeep', async () => {
    const events: UpkeepEvent[] = [];
    const sink = await DatasetSink.open({ dir, clock: january(), onUpkeep: (e) => events.push(e) });
    const release = holdMerges();
    for (let i = 0; i < 4; i++) await checkpointMinute(sink, ['AAPL.US'], i);
    await vi.waitFor(() => expect(gate.started).toBe(1));
    // The merge of the first four files waits at the gate; twelve more checkpoints commit meanwhile.
    for (let i = 4; i < 16; i++) {
      const done = await checkpointMinute(sink, ['AAPL.US'], i).then(() => 'committed');
      expect(done).toBe('committed');
    }
    expect(events.filter((e) => e.type === 'compacted')).toEqual([]);
    expect(sink.upkeepStatus).toMatchObject({ mergesDue: 1 });
    expect((await DatasetLog.open(dir, 'kline')).files.size).toBe(16);
    release();
    await sink.upkeepIdle();
    // Then the merges caught up: 16 files → 4 → 1.
    expect(events.filter((e) => e.type === 'compacted')).toHaveLength(5);
    expect((await DatasetLog.open(dir, 'kline')).files.size).toBe(1);
    await sink.close();
    expect(await committedBars()).toEqual(expected(['AAPL.US'], 16));
  });

  it('drops a merge being built when the sink closes: nothing of it committed, nothing left in staging', async () => {
    const sink = await DatasetSink.open({ dir, clock: january() });
    const release = holdMerges();
    for (let i = 0; i < 4; i++) await checkpointMinute(sink, ['AAPL.US'], i);
    await vi.waitFor(() => expect(gate.started).toBe(1));
    const closing = sink.close();
    release();
    await closing;
    const log = await DatasetLog.open(dir, 'kline');
    expect(log.files.size).toBe(4);
    expect([...log.files.values()].every((f) => f.rows === 1)).toBe(true);
    expect(
      (await readdir(join(dir, '.staging')).catch(() => [])).filter((n) => n.includes('compact')),
    ).toEqual([]);
    expect(await committedBars()).toEqual(expected(['AAPL.US'], 4));
  });

  it('two sinks writing their own series into one table compact beside each other: each bar once', async () => {
    const clock = january();
    const void_: UpkeepEvent[] = [];
    const onUpkeep = (e: UpkeepEvent) => {
      if (e.type === 'compaction-void' || e.type === 'upkeep-failed') void_.push(e);
    };
    const a = await DatasetSink.open({ dir, clock, onUpkeep });
    const b = await DatasetSink.open({ dir, clock, onUpkeep });
    for (let i = 0; i < 24; i++)
      await Promise.all([checkpointMinute(a, ['AAPL.US'], i), checkpointMinute(b, ['MSFT.US'], i)]);
    await Promise.all([a.upkeepIdle(), b.upkeepIdle()]);
    await Promise.all([a.close(), b.close()]);
    expect(void_.filter((e) => e.type === 'upkeep-failed')).toEqual([]);
    expect(await committedBars()).toEqual(expected(['AAPL.US', 'MSFT.US'], 24));
    expect((await DatasetLog.open(dir, 'kline')).files.size).toBeLessThanOrEqual(3 * 4);
  });
});

describe('TableUpkeep', () => {
  it('refuses a bad option when the sink opens, naming it, before anything is written', async () => {
    for (const [upkeep, message] of [
      [{ rowsPerFile: 0 }, /"rowsPerFile" must be an integer >= 1, got 0/],
      [{ retentionMs: -1 }, /"retentionMs" must be a number of ms >= 0, got -1/],
      [{ logRetentionMs: Number.NaN }, /"logRetentionMs" must be a number of ms >= 0, got NaN/],
      [{ checkpointEvery: 1.5 }, /"checkpointEvery" must be an integer >= 0, got 1.5/],
    ] as const)
      await expect(DatasetSink.open({ dir: join(dir, 'never'), upkeep })).rejects.toMatchObject({
        code: 'QF_INVALID_OPTION',
        message: expect.stringMatching(message) as unknown,
      });
    expect(await readdir(dir)).toEqual([]);
  });

  it('writes no Delta checkpoint with checkpointEvery 0, and so expires no log version', async () => {
    const sink = await DatasetSink.open({
      dir,
      clock: january(),
      upkeep: { checkpointEvery: 0, retentionMs: 0 },
    });
    for (let i = 0; i < 12; i++) await checkpointMinute(sink, ['AAPL.US'], i);
    await sink.upkeepIdle();
    await sink.close();
    const log = await readdir(join(dir, 'kline', '_delta_log'));
    expect(log.filter((n) => n.includes('checkpoint'))).toEqual([]);
    expect(log.filter((n) => /^\d{20}\.json$/.test(n)).length).toBe(
      (await DatasetLog.open(dir, 'kline')).version + 1,
    );
  });

  /** A table of `n` one-bar checkpoints, written without upkeep. */
  async function tableOf(n: number): Promise<void> {
    const sink = await DatasetSink.open({ dir, clock: january(), upkeep: false });
    for (let i = 0; i < n; i++) await checkpointMinute(sink, ['AAPL.US'], i);
    await sink.close();
  }

  /** Upkeep of the table on a manual monotonic clock, its events collected. */
  function upkeepOn(monotonic: ManualClock, behindAfterMs: number, events: UpkeepEvent[]) {
    return TableUpkeep.open({
      root: dir,
      dataset: 'kline',
      clock: january(),
      monotonic,
      behindAfterMs,
      onEvent: (e) => events.push(e),
    });
  }

  it('is behind once work has been due longer than behindAfterMs, and says when it caught up', async () => {
    await tableOf(4);
    const monotonic = new ManualClock(0);
    const events: UpkeepEvent[] = [];
    const upkeep = await upkeepOn(monotonic, 60_000, events);
    const release = holdMerges();
    upkeep.nudge();
    await vi.waitFor(() => expect(gate.started).toBe(1));
    await monotonic.advance(59_000);
    upkeep.nudge();
    expect(upkeep.status).toMatchObject({ mergesDue: 1, pendingMs: 59_000, behind: false });
    await monotonic.advance(2_000);
    upkeep.nudge();
    expect(upkeep.status).toMatchObject({ mergesDue: 1, pendingMs: 61_000, behind: true });
    expect(events.filter((e) => e.type === 'upkeep-behind')).toHaveLength(1);
    release();
    await upkeep.idle();
    expect(upkeep.status).toMatchObject({ mergesDue: 0, pendingMs: 0, behind: false });
    expect(events.filter((e) => e.type === 'upkeep-caught-up')).toHaveLength(1);
    await upkeep.close();
  });

  it('reports a step that fails and falls behind while it keeps failing', async () => {
    await tableOf(4);
    const log = await DatasetLog.open(dir, 'kline');
    await rm(join(dir, [...log.files.keys()][0]!)); // a file the merge must read is gone
    const monotonic = new ManualClock(0);
    const events: UpkeepEvent[] = [];
    const upkeep = await upkeepOn(monotonic, 1_000, events);
    upkeep.nudge();
    await upkeep.idle();
    const failed = events.find((e) => e.type === 'upkeep-failed');
    expect(failed).toMatchObject({
      step: 'compact',
      error: expect.objectContaining({ code: 'ENOENT' }) as unknown,
    });
    await monotonic.advance(1_000);
    upkeep.nudge();
    await upkeep.idle();
    expect(events.filter((e) => e.type === 'upkeep-behind')).toHaveLength(1);
    expect(upkeep.status).toMatchObject({ behind: true, mergesDue: 1 });
    await upkeep.close();
  });

  it("is void, not failed, when another writer's compaction swapped its files away while it waited", async () => {
    await tableOf(4);
    const events: UpkeepEvent[] = [];
    const upkeep = await upkeepOn(new ManualClock(0), 600_000, events);
    const release = holdMerges();
    upkeep.nudge();
    await vi.waitFor(() => expect(gate.started).toBe(1));
    // Another writer merges the same four files (and its swap removes them) while this one waits.
    expect(await compactDataset({ dir, dataset: 'kline' })).toHaveLength(1);
    release();
    await upkeep.idle();
    await upkeep.close();
    expect(events.filter((e) => e.type === 'upkeep-failed')).toEqual([]);
    expect(events.filter((e) => e.type === 'compaction-void')).toHaveLength(1);
    expect(await committedBars()).toEqual(expected(['AAPL.US'], 4));
  });

  it('expires the log before the newest checkpoint past the retention: the table reads the same', async () => {
    await tableOf(3);
    const before = await DatasetLog.open(dir, 'kline');
    const upkeep = await TableUpkeep.open({
      root: dir,
      dataset: 'kline',
      clock: new ManualClock(Date.UTC(2026, 1, 2)), // January closed: merged whole
      checkpointEvery: 1,
      retentionMs: 0,
    });
    const sink = await DatasetSink.open({ dir, clock: january(), upkeep: false });
    for (let i = 3; i < 8; i++) {
      await checkpointMinute(sink, ['AAPL.US'], i);
      upkeep.nudge();
      await upkeep.idle();
    }
    await sink.close();
    await upkeep.close();
    const names = await readdir(join(dir, 'kline', '_delta_log'));
    const commits = names.filter((n) => /^\d{20}\.json$/.test(n)).map((n) => Number(n.slice(0, 20)));
    const checkpoints = names
      .filter((n) => n.endsWith('.checkpoint.parquet'))
      .map((n) => Number(n.slice(0, 20)));
    // The retention (0) let go of everything before the newest checkpoint of the last round's
    // start: the commits left begin at a checkpoint, none is missing after it.
    const oldest = Math.min(...commits);
    expect(oldest).toBeGreaterThan(before.version);
    expect(Math.min(...checkpoints)).toBe(oldest);
    expect(commits.sort((a, b) => a - b)).toEqual(
      Array.from({ length: Math.max(...commits) - oldest + 1 }, (_, i) => oldest + i),
    );
    // Read anew: from the checkpoint and the commits after it, every bar and watermark.
    const after = await DatasetLog.open(dir, 'kline');
    expect(after.series.get('AAPL.US|1')).toEqual({ first: minute(0), last: minute(7), rows: 8 });
    expect(after.files.size).toBe(1);
    expect(await committedBars()).toEqual(expected(['AAPL.US'], 8));
  });
  it('keeps an hour of a local log by default (not the 7 days of removed files), or the log retention given', async () => {
    // A table whose log (three commits and a checkpoint of the third) was written two hours ago.
    const logDir = join(dir, 'kline', '_delta_log');
    const ageLog = async (): Promise<void> => {
      const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000);
      for (const name of await readdir(logDir)) await utimes(join(logDir, name), twoHoursAgo, twoHoursAgo);
    };
    await tableOf(3);
    const first = await TableUpkeep.open({ root: dir, dataset: 'kline', clock: january() });
    first.nudge();
    await first.idle();
    await first.close();
    const aged = (await DatasetLog.open(dir, 'kline')).version;
    await ageLog();
    const sink = await DatasetSink.open({ dir, clock: january(), upkeep: false });
    await checkpointMinute(sink, ['AAPL.US'], 3);
    await sink.close();
    const commits = async (): Promise<number[]> =>
      (await readdir(logDir))
        .filter((n) => /^\d{20}\.json$/.test(n))
        .map((n) => Number(n.slice(0, 20)))
        .sort((a, b) => a - b);
    const all = await commits();
    // Those of the versions above (upkeep may commit merges after them).
    const upTo = async (): Promise<number[]> => (await commits()).filter((v) => v <= all.at(-1)!);
    // Three hours of log kept: nothing of the two-hour-old log goes.
    const kept = await TableUpkeep.open({ root: dir, dataset: 'kline', logRetentionMs: 3 * 3_600_000 });
    kept.nudge();
    await kept.idle();
    await kept.close();
    expect(await upTo()).toEqual(all);
    // The default: the commits before the two-hour-old checkpoint go, the table reads the same.
    const events: UpkeepEvent[] = [];
    const byDefault = await TableUpkeep.open({ root: dir, dataset: 'kline', onEvent: (e) => events.push(e) });
    byDefault.nudge();
    await byDefault.idle();
    await byDefault.close();
    expect(aged).toBeGreaterThan(0);
    expect(await upTo()).toEqual(all.filter((v) => v >= aged));
    expect(events).toContainEqual(expect.objectContaining({ type: 'log-expired', dataset: 'kline' }));
    expect(await committedBars()).toEqual(expected(['AAPL.US'], 4));
  });

  it('keeps an hour of log by default, never longer than a shorter retention of removed files', () => {
    const hour = 3_600_000;
    expect(logRetentionOf({})).toBe(hour);
    expect(logRetentionOf({ retentionMs: 60_000 })).toBe(60_000);
    expect(logRetentionOf({ retentionMs: 2 * 24 * hour })).toBe(hour);
    expect(logRetentionOf({ retentionMs: 0, logRetentionMs: 5 * hour })).toBe(5 * hour);
  });

  it("keeps a live writer's claims through checkpoints and log retention: its claim commit gone, the owner stays", async () => {
    const writer = await DatasetSink.open({ dir, clock: january(), upkeep: false, series: ['AAPL.US|1'] });
    const upkeep = await TableUpkeep.open({
      root: dir,
      dataset: 'kline',
      clock: new ManualClock(Date.UTC(2026, 1, 2)), // January closed: merged whole
      checkpointEvery: 1,
      retentionMs: 0,
    });
    for (let i = 0; i < 6; i++) {
      await checkpointMinute(writer, ['AAPL.US'], i);
      upkeep.nudge();
      await upkeep.idle();
    }
    await upkeep.close();
    const names = await readdir(join(dir, 'kline', '_delta_log'));
    const commits = names.filter((n) => /^\d{20}\.json$/.test(n)).map((n) => Number(n.slice(0, 20)));
    // The claim (version 0) and the first checkpoints are gone: a reader starts from a checkpoint.
    expect(Math.min(...commits)).toBeGreaterThan(1);
    const read = await DatasetLog.open(dir, 'kline');
    expect([...read.owners.keys()]).toEqual(['AAPL.US|1']);
    expect([...read.writers.keys()]).toEqual([read.owners.get('AAPL.US|1')]);
    expect(read.files.size).toBe(1);
    // A second writer still meets the claim, and nothing of the owner's was dropped by the merges.
    await expect(
      DatasetSink.open({ dir, clock: january(), upkeep: false, series: ['AAPL.US|1'] }),
    ).rejects.toMatchObject({ code: 'QF_OWNED' });
    await checkpointMinute(writer, ['AAPL.US'], 6);
    await writer.close();
    expect(await committedBars()).toEqual(expected(['AAPL.US'], 7));
  });
});
