import { monotonicClock } from '@quoteflow/core/internal';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { seriesKey } from '@quoteflow/core';
import { barUpdate, depth, level, warmEncoderThread } from '../../test-support/test-records.js';
import { compactDataset } from './compact-dataset.js';
import { DatasetLog, listDataFiles } from './dataset-log.js';
import { DatasetSink } from './dataset-sink.js';
import { DatasetWriter } from './dataset-writer.js';
import { thisProcess } from './internal/writer-liveness.js';
import { readKlineStarts } from './read-dataset-rows.js';
import { checkTableOwners } from './check-table-owners.js';
import type { TableWriter } from './table-writer.js';

let dir: string;
beforeAll(warmEncoderThread, 120_000);
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'qf-claims-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const T0 = Date.UTC(2026, 0, 5, 1, 30);
const minute = (i: number): number => T0 + i * 60_000;
const BTC = seriesKey('BTCUSDT', 1);
const ETH = seriesKey('ETHUSDT', 1);

/** What waits in `DIR/.staging/` (a writer removes the directory when it closes empty). */
const staged = (): Promise<string[]> => readdir(join(dir, '.staging')).catch(() => []);

/** Every bar start of `code` in the committed (visible) kline files, sorted. */
async function visible(code: string): Promise<number[]> {
  const out: number[] = [];
  for (const rel of await listDataFiles(dir, 'kline'))
    out.push(...((await readKlineStarts(dir, rel)).starts.get(code) ?? []));
  return out.sort((a, b) => a - b);
}

/**
 * Commits, as the next version of the kline table, the claims of a writer this process is not:
 * `series` owned by `w` (another machine's, or a process of this one that died).
 */
async function foreignClaim(series: readonly string[], w: TableWriter): Promise<void> {
  const log = await DatasetLog.open(dir, 'kline');
  if (log.version < 0) {
    // Version 0 (protocol, metadata) from a claim given up at once.
    await log.claim(['INIT|1']);
    await log.release();
  }
  const { id, ...record } = w;
  const lines = [
    {
      commitInfo: {
        timestamp: Date.now(),
        operation: 'CLAIM',
        quoteflow: { operation: 'claim', writer: id },
      },
    },
    ...series.map((s) => ({
      domainMetadata: {
        domain: `quoteflow.owner.${s}`,
        configuration: JSON.stringify({ writer: id }),
        removed: false,
      },
    })),
    {
      domainMetadata: {
        domain: `quoteflow.writer.${id}`,
        configuration: JSON.stringify(record),
        removed: false,
      },
    },
  ];
  const name = `${String(log.version + 1).padStart(20, '0')}.json`;
  await writeFile(join(log.logDir, name), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
}

/** A writer record: another machine's unless told otherwise. */
function writer(over: Partial<TableWriter> = {}): TableWriter {
  return {
    id: `other~4242~${randomBytes(4).toString('hex')}~1`,
    host: 'a-host-that-is-not-this-one',
    pid: 4242,
    sinceMs: Date.now() - 60_000,
    leaseMs: 300_000,
    renewal: 3,
    renewedMs: Date.now(),
    command: 'quoteflow sync',
    ...over,
  };
}

describe('claims of a Delta table', () => {
  it('refuses a second sink of a series in the same process at open, naming the table, the series and the writer', async () => {
    const first = await DatasetSink.open({ dir, series: [BTC, ETH], command: 'quoteflow sync' });
    const err: unknown = await DatasetSink.open({ dir, series: [ETH] }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'QF_OWNED', name: 'TableOwnedError' });
    expect((err as Error).message).toMatch(
      new RegExp(
        `^table ${join(dir, 'kline')}: ETHUSDT\\|1 is written by another live writer \\(host ${hostname()}, pid ${process.pid} \\(this process\\), writing since \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z, renewed \\d+ s ago, quoteflow sync\\): stop that writer first, or pass --wait-for-writer`,
      ),
    );
    // A library sink with bars of a series another writer owns: refused at its checkpoint, nothing committed.
    const other = await DatasetSink.open({ dir });
    other.write(barUpdate('BTCUSDT', minute(0), true));
    await expect(other.checkpoint()).rejects.toMatchObject({ code: 'QF_OWNED' });
    await other.close();
    expect(await visible('BTCUSDT')).toEqual([]);
    expect(await staged()).toEqual([]);
    await first.close();
  });

  it('waits with ifOwned "wait", saying so once, and resumes where the writer it waited for ended', async () => {
    // A short lease: the waiter reads the log again every tenth of it.
    const first = await DatasetSink.open({ dir, series: [BTC], leaseMs: 2_000 });
    for (let i = 0; i < 3; i++) first.write(barUpdate('BTCUSDT', minute(i), true));
    await first.checkpoint();
    const said: string[] = [];
    let opened = false;
    const second = DatasetSink.open({ dir, series: [BTC], ifOwned: 'wait', onWaiting: (m) => said.push(m) });
    void second.then(() => (opened = true));
    await vi.waitFor(() => expect(said).toHaveLength(1));
    expect(said[0]).toMatch(
      /BTCUSDT\|1 is written by another live writer .*: waiting until it stops or its lease runs out$/,
    );
    expect(opened).toBe(false);
    await first.close();
    const sink = await second;
    expect(said).toHaveLength(1);
    expect(sink.watermarks().get(BTC)).toEqual({ first: minute(0), last: minute(2), rows: 3 });
    for (let i = 1; i < 5; i++) sink.write(barUpdate('BTCUSDT', minute(i), true));
    await sink.checkpoint();
    await sink.close();
    expect(await visible('BTCUSDT')).toEqual([0, 1, 2, 3, 4].map(minute));
  });

  it('stops a wait when its signal aborts', async () => {
    const first = await DatasetSink.open({ dir, series: [BTC] });
    const stop = new AbortController();
    const second = DatasetSink.open({ dir, series: [BTC], ifOwned: 'wait', signal: stop.signal });
    stop.abort(new Error('stopped'));
    await expect(second).rejects.toThrow('stopped');
    await first.close();
  });

  it('takes over at once the claims of a writer of this machine whose process is gone (kill -9), or whose pid a later process reuses', async () => {
    const self = thisProcess();
    const dead = writer({ host: hostname(), pid: 2 ** 30 });
    await foreignClaim([BTC], dead);
    if (self.started !== undefined) {
      const cut = self.started.lastIndexOf('/');
      const reused = writer({ ...self, started: `${self.started.slice(0, cut)}/0` });
      await foreignClaim([ETH], reused);
    }
    const sink = await DatasetSink.open({ dir, series: [BTC, ETH] });
    const log = await DatasetLog.open(dir, 'kline');
    const me = [...log.writers.values()].filter((w) => w.pid === process.pid && w.id !== dead.id);
    expect(me).toHaveLength(1);
    expect(log.owners.get(BTC)).toBe(me[0]!.id);
    expect(log.owners.get(ETH)).toBe(me[0]!.id);
    // The dead writers' records went with their last series.
    expect(log.writers.size).toBe(1);
    await sink.close();
  });

  it("waits for a writer of another machine until its lease runs out unrenewed, on this process's monotonic clock", async () => {
    const w = writer({ leaseMs: 1_500 });
    await foreignClaim([BTC], w);
    await expect(DatasetSink.open({ dir, series: [BTC] })).rejects.toMatchObject({
      code: 'QF_OWNED',
      message: expect.stringContaining(
        `host a-host-that-is-not-this-one, pid 4242, writing since`,
      ) as unknown,
    });
    await expect(checkTableOwners({ dir, dataset: 'kline', series: [BTC, ETH] })).rejects.toMatchObject({
      code: 'QF_OWNED',
    });
    const startMs = monotonicClock.now();
    const sink = await DatasetSink.open({ dir, series: [BTC], ifOwned: 'wait' });
    expect(monotonicClock.now() - startMs).toBeGreaterThanOrEqual(1_000);
    await sink.close();
    // A claim renewed an hour ago by its writer's clock is abandoned: no wait.
    await foreignClaim([ETH], writer({ renewedMs: Date.now() - 3_600_000 }));
    await checkTableOwners({ dir, dataset: 'kline', series: [ETH] });
  });

  it("refuses a commit of a series another writer took over, and one after that writer gave it up: the zombie's files are dropped", async () => {
    const a = await DatasetSink.open({ dir, series: [BTC], ifOwned: 'take-over' });
    a.write(barUpdate('BTCUSDT', minute(0), true));
    await a.checkpoint();
    a.write(barUpdate('BTCUSDT', minute(1), true));
    // A cluster's new owner of BTC: it claims at once and resumes from the table.
    const b = await DatasetSink.open({ dir, series: [BTC], ifOwned: 'take-over' });
    b.write(barUpdate('BTCUSDT', minute(1), true));
    await b.checkpoint();
    const taken: unknown = await a.checkpoint().catch((e: unknown) => e);
    expect(taken).toMatchObject({ code: 'QF_FENCED' });
    expect((taken as Error).message).toMatch(
      /BTCUSDT\|1: owned by another writer now \(host .*, pid \d+ \(this process\)/,
    );
    await a.close();

    const c = await DatasetSink.open({ dir, series: [ETH], ifOwned: 'take-over' });
    c.write(barUpdate('ETHUSDT', minute(0), true));
    const d = await DatasetSink.open({ dir, series: [ETH], ifOwned: 'take-over' });
    await d.close(); // took ETH over, then gave it up
    await expect(c.checkpoint()).rejects.toMatchObject({
      code: 'QF_FENCED',
      message: expect.stringContaining('ETHUSDT|1: no longer claimed by this writer') as unknown,
    });
    await c.close();
    await b.close();
    expect(await visible('BTCUSDT')).toEqual([minute(0), minute(1)]);
    expect(await visible('ETHUSDT')).toEqual([]);
    expect(await staged()).toEqual([]);
  });

  it('renews its claims with its commits and alone when idle, and gives them up on close', async () => {
    const sink = await DatasetSink.open({ dir, series: [BTC], leaseMs: 300 });
    const record = async (): Promise<TableWriter | undefined> => {
      const log = await DatasetLog.open(dir, 'kline');
      return [...log.writers.values()][0];
    };
    expect(await record()).toMatchObject({ renewal: 1, leaseMs: 300, pid: process.pid });
    sink.write(barUpdate('BTCUSDT', minute(0), true));
    await sink.checkpoint();
    expect(await record()).toMatchObject({ renewal: 2 });
    // Nothing to commit: a renewal once a third of the lease has passed since the last one.
    await vi.waitFor(async () => {
      await sink.checkpoint();
      expect((await record())?.renewal).toBeGreaterThanOrEqual(3);
    });
    // A series handed on (a cluster's remove): its claim given up, the writer's record kept.
    await sink.release([BTC]);
    const handed = await DatasetLog.open(dir, 'kline');
    expect([handed.owners.size, handed.writers.size]).toEqual([0, 1]);
    await sink.close();
    const log = await DatasetLog.open(dir, 'kline');
    expect(log.owners.size).toBe(0);
    expect(log.writers.size).toBe(0);
  });

  it('lets compaction commit beside a writer holding claims: it writes no series', async () => {
    const sink = await DatasetSink.open({ dir, series: [BTC], upkeep: false });
    for (let i = 0; i < 3; i++) {
      sink.write(barUpdate('BTCUSDT', minute(i), true));
      await sink.checkpoint();
    }
    const done = await compactDataset({ dir, dataset: 'kline' });
    expect(done).toHaveLength(1);
    sink.write(barUpdate('BTCUSDT', minute(3), true));
    await sink.checkpoint();
    await sink.close();
    expect(await visible('BTCUSDT')).toEqual([0, 1, 2, 3].map(minute));
  });
});

describe('DatasetWriter as a writer of its tables', () => {
  const tick = (code: string, seq: bigint) => depth(code, seq, minute(Number(seq)), [level(1, 2)], []);

  it('claims its codes before any file, so a second writer of one of them is refused at once', async () => {
    const first = new DatasetWriter({ dir, encoderThreads: 0, series: { depth: ['BTCUSDT', 'ETHUSDT'] } });
    await first.ready();
    const second = new DatasetWriter({ dir, encoderThreads: 0, series: { depth: ['ETHUSDT'] } });
    await expect(second.ready()).rejects.toMatchObject({
      code: 'QF_OWNED',
      message: expect.stringContaining(
        `table ${join(dir, 'depth')}: ETHUSDT is written by another live writer`,
      ) as unknown,
    });
    expect(() => second.append(tick('ETHUSDT', 1n))).toThrow(expect.objectContaining({ code: 'QF_OWNED' }));
    await second.close().catch(() => undefined);
    first.append(tick('ETHUSDT', 1n));
    await first.flush();
    await first.close();
    // Closed: its claims given up, the next writer claims at once.
    const third = new DatasetWriter({ dir, encoderThreads: 0, series: { depth: ['ETHUSDT'] } });
    await third.ready();
    await third.close();
  });

  it('renews its claims while idle, every third of its lease, and gives them up on close', async () => {
    const w = new DatasetWriter({ dir, encoderThreads: 0, series: { depth: ['BTCUSDT'] }, leaseMs: 300 });
    await w.ready();
    await vi.waitFor(async () => {
      const log = await DatasetLog.open(dir, 'depth');
      expect([...log.writers.values()][0]?.renewal).toBeGreaterThanOrEqual(3);
    });
    await w.close();
    const log = await DatasetLog.open(dir, 'depth');
    expect([log.owners.size, log.writers.size]).toEqual([0, 0]);
  });

  it('commits each finished file to its Delta log (one version a file), and takes a directory of an older quoteflow into the log once', async () => {
    // One version a file as written: no upkeep merging them in the background.
    const w = new DatasetWriter({ dir, encoderThreads: 0, maxRowsPerFile: 2, upkeep: false });
    for (let i = 1n; i <= 5n; i++) w.append(tick('BTCUSDT', i));
    const files = await w.flush();
    await w.close();
    expect(files).toHaveLength(3);
    const log = await DatasetLog.open(dir, 'depth');
    expect([...log.files.keys()].sort()).toEqual(files.map((f) => f.relativePath).sort());
    expect([...log.files.values()].map((f) => f.rows).sort()).toEqual([1, 2, 2]);
    expect(await listDataFiles(dir, 'depth')).toEqual(files.map((f) => f.relativePath).sort());

    // The same files as an older quoteflow left them: no log. The next writer adopts them once.
    await rm(join(dir, 'depth', '_delta_log'), { recursive: true });
    const next = new DatasetWriter({ dir, encoderThreads: 0, upkeep: false });
    next.append(tick('BTCUSDT', 6n));
    await next.flush();
    await next.close();
    const again = new DatasetWriter({ dir, encoderThreads: 0, upkeep: false });
    again.append(tick('BTCUSDT', 7n));
    await again.flush();
    await again.close();
    const adopted = await DatasetLog.open(dir, 'depth');
    expect([...adopted.files.keys()].sort()).toEqual(await listDataFiles(dir, 'depth'));
    expect([...adopted.files.values()].reduce((n, f) => n + f.rows, 0)).toBe(7);
  });
});
