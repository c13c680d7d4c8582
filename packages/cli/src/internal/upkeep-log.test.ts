import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ManualClock, type BarUpdate } from '@quoteflow/core';
import { DatasetLog, DatasetSink, DatasetWriter, TableUpkeep } from '@quoteflow/sinks';
import { CliMetrics } from './cli-metrics.js';
import { UpkeepLog, writerUpkeepOf } from './upkeep-log.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'qf-upkeep-log-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const T0 = Date.UTC(2026, 0, 5, 14, 30);
const update = (i: number): BarUpdate => ({
  type: 'bar-update',
  code: 'BTCUSDT',
  klineType: 1,
  tsMs: T0 + i * 60_000,
  open: 1,
  high: 2,
  low: 0.5,
  close: 1.5,
  volume: 10,
  turnover: 15,
  readAtMs: T0 + i * 60_000 + 61_000,
  receivedAtMs: T0 + i * 60_000 + 61_050,
  final: true,
  revision: 0,
});

/** A sample's value in a scrape. */
const sample = (text: string, series: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

it('upkeep that keeps failing falls behind: quoteflow_upkeep_behind 1 and one warning naming the work due', async () => {
  const january = new ManualClock(Date.UTC(2026, 0, 20));
  const sink = await DatasetSink.open({ dir, clock: january, upkeep: false });
  for (let i = 0; i < 4; i++) {
    sink.write(update(i));
    await sink.checkpoint();
  }
  await sink.close();
  // A file the due merge must read is gone: the merge fails at every round.
  await rm(join(dir, [...(await DatasetLog.open(dir, 'kline')).files.keys()][0]!));
  let text = '';
  const logger = pino(
    { level: 'debug' },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        text += chunk.toString();
        done();
      },
    }),
  );
  const metrics = new CliMetrics();
  const log = new UpkeepLog(logger);
  const monotonic = new ManualClock(0);
  const upkeep = await TableUpkeep.open({
    root: dir,
    dataset: 'kline',
    clock: january,
    monotonic,
    behindAfterMs: 600_000,
    onEvent: (e) => {
      metrics.upkeep.onEvent(e);
      log.event(e);
    },
  });
  for (let round = 0; round < 3; round++) {
    upkeep.nudge();
    await upkeep.idle();
    await monotonic.advance(300_000);
  }
  upkeep.nudge();
  await upkeep.idle();
  await upkeep.close();
  const scrape = await metrics.registry.metrics();
  expect(sample(scrape, 'quoteflow_upkeep_behind{dataset="kline"}')).toBe(1);
  expect(sample(scrape, 'quoteflow_upkeep_merges_due{dataset="kline"}')).toBe(1);
  expect(sample(scrape, 'quoteflow_upkeep_pending_seconds{dataset="kline"}')).toBe(900);
  expect(sample(scrape, 'quoteflow_upkeep_failures_total{dataset="kline",step="compact"}')).toBe(4);
  expect(sample(scrape, 'quoteflow_upkeep_compactions_total{dataset="kline",outcome="committed"}')).toBe(0);
  const lines = text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { level: number; msg: string });
  const warnings = lines.filter((l) => l.level === 40).map((l) => l.msg);
  // The first failure and falling behind are warnings; the failures between, debug lines.
  expect(warnings).toEqual([
    'table upkeep of kline failed to compact (tried again at the next checkpoint; the table stays correct)',
    expect.stringMatching(
      /^table upkeep of kline is behind: work has been due for 600 s \(1 merge\(s\) of small files, \d+ version\(s\) since the last Delta checkpoint\)/,
    ),
  ]);
});

it('a depth capture\'s upkeep is in the metrics under its table: quoteflow_upkeep_*{dataset="depth"}', async () => {
  const metrics = new CliMetrics();
  const writer = new DatasetWriter({
    dir,
    encoderThreads: 0,
    clock: new ManualClock(T0),
    ...writerUpkeepOf(undefined, pino({ level: 'silent' }), metrics),
  });
  for (let i = 0; i < 4; i++) {
    await writer.write({
      type: 'depth',
      code: 'BTCUSDT',
      seq: BigInt(i),
      tickTimeMs: T0 + i,
      bids: [],
      asks: [],
    });
    await writer.flush();
  }
  await writer.upkeepIdle();
  await writer.close();
  const scrape = await metrics.registry.metrics();
  // Four files of one tick: one merge, nothing due after it.
  expect(sample(scrape, 'quoteflow_upkeep_compactions_total{dataset="depth",outcome="committed"}')).toBe(1);
  expect(sample(scrape, 'quoteflow_upkeep_pending_seconds{dataset="depth"}')).toBe(0);
  expect(sample(scrape, 'quoteflow_upkeep_behind{dataset="depth"}')).toBe(0);
  expect((await DatasetLog.open(dir, 'depth')).files.size).toBe(1);
});
